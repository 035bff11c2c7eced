"""The ``warden`` command of the package: the same CLI as the binary, run by
the native extension in this process."""

from __future__ import annotations

import signal
import sys

from . import _native
from ._bridge import net_bridge


def main() -> None:
    # As a Rust program starts: Ctrl-C ends it unless it handles it itself.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    bridge = net_bridge()
    sys.exit(_native.main(list(sys.argv), str(bridge) if bridge else None))
