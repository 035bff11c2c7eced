"""pydantic-ai-filesystem-sandbox 0.9.0's own test suite, unchanged, run
against ``warden.pydantic_ai``: the import is all that changes. A test that
fails because of a deliberate difference (the guide's (docs/src/python.md) "differs from the
reference" table) is an expected failure, with that row as its reason; an
expected failure that passes fails the run (strict)."""

from __future__ import annotations

import sys

import pytest

import warden.pydantic_ai

sys.modules["pydantic_ai_filesystem_sandbox"] = warden.pydantic_ai

#: Test id -> the guide's row (docs/src/python.md) that explains why it fails.
DIFFERENCES: dict[str, str] = {
    "tests/test_root_mode_and_derive.py::TestDeriveAllowlistsMultiPath::test_readonly_false_on_ro_mount_inherits_no_write": (
        "readonly=False asks for write access: on a read-only parent it is an escalation, not a no-op"
    ),
    "tests/test_security_regressions.py::test_toolset_write_respects_write_allowlist": (
        "a derive entry must exist: Warden opens the child's handle when it derives"
    ),
    "tests/test_security_regressions.py::test_nested_derive_cannot_escalate_to_write": (
        "a derive entry must exist: Warden opens the child's handle when it derives"
    ),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        reason = DIFFERENCES.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
