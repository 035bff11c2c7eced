"""Where the package keeps its network bridge program."""

from __future__ import annotations

import os
from pathlib import Path


def net_bridge() -> Path | None:
    """The ``warden-net-bridge`` program inside the installed package, if it is there."""
    program = Path(__file__).parent / "_bin" / "warden-net-bridge"
    return program if os.access(program, os.X_OK) else None
