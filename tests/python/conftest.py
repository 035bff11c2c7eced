"""Fixtures of the Python package's tests: a scratch copy of the example
policy's folders, the example tools, and the installed `warden` command."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUESTS = REPO / "guests" / "out"


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of policies/example: portfolio (rw, .md, 1 MB) and pipeline (ro)."""
    copy = tmp_path / "example"
    shutil.copytree(REPO / "policies" / "example", copy)
    return copy


@pytest.fixture
def tools_policy(example: Path) -> Path:
    return example / "tools.yaml"


@pytest.fixture
def component():
    def path(name: str) -> Path:
        found = GUESTS / name
        assert found.exists(), f"{found} is missing: run bash guests/build.sh"
        return found

    return path
