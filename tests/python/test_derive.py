"""Derived sandboxes: narrower handles, the same rules and errors as the policy's workers."""

from __future__ import annotations

from pathlib import Path

import pytest

import warden
from warden import errors


def test_a_child_asking_for_more_is_an_escalation(tools_policy: Path) -> None:
    parent = warden.Sandbox.from_policy(tools_policy)
    with pytest.raises(errors.SandboxPermissionEscalationError) as raised:
        parent.derive(allow_write="/pipeline")
    assert str(raised.value) == (
        "SandboxPermissionEscalationError: cannot grant write access to '/pipeline': the parent sandbox can write "
        "only to: /portfolio. Request write access inside /portfolio, or read access with allow_read: [/pipeline]."
    )
    assert isinstance(raised.value, PermissionError)


def test_a_child_sees_only_its_folders(tools_policy: Path) -> None:
    child = warden.Sandbox.from_policy(tools_policy).derive(allow_read="/portfolio/reports")
    assert child.readable_roots == ["/portfolio/reports"]
    assert child.writable_roots == []
    with pytest.raises(errors.PathNotInSandboxError) as raised:
        child.read("/portfolio/notes.md")
    assert str(raised.value) == "Cannot access '/portfolio/notes.md': path is outside sandbox.\nReadable paths: /portfolio/reports"


def test_a_grandchild_cannot_regain_what_its_parent_lost(tools_policy: Path) -> None:
    child = warden.Sandbox.from_policy(tools_policy).derive(allow_write="/portfolio/drafts")
    with pytest.raises(errors.SandboxPermissionEscalationError):
        child.derive(allow_write="/portfolio")
    readonly = child.derive(inherit=True, readonly=True)
    with pytest.raises(errors.PathNotWritableError):
        readonly.write("/portfolio/drafts/x.md", "x")


def test_a_policy_worker(tools_policy: Path) -> None:
    analyzer = warden.Sandbox.from_policy(tools_policy, worker="analyzer")
    assert analyzer.worker == "analyzer"
    assert analyzer.readable_roots == ["/portfolio/reports"]
    with pytest.raises(errors.UnknownWorkerError) as raised:
        warden.Sandbox.from_policy(tools_policy, worker="nobody")
    assert str(raised.value) == "unknown worker 'nobody'; the policy defines: analyzer"


def test_a_config_object(example: Path) -> None:
    config = {"version": 1, "sandbox": {"paths": {"docs": {"root": "./portfolio", "mode": "ro"}}}}
    sandbox = warden.Sandbox.from_config(config, base=example)
    assert sandbox.readable_roots == ["/docs"]
    assert sandbox.read("/docs/notes.md") == (example / "portfolio" / "notes.md").read_text()
    with pytest.raises(errors.PathNotWritableError):
        sandbox.write("/docs/x.md", "x")


def test_a_bad_config_says_where(example: Path) -> None:
    with pytest.raises(errors.PolicyError) as raised:
        warden.Sandbox.from_config({"version": 1, "sandbox": {"paths": {"docs": {"root": "./none", "mode": "ro"}}}}, base=example)
    assert str(raised.value).startswith(f"{example / '<config>'}:")
    assert str(raised.value).endswith(": sandbox.paths.docs.root: './none' does not exist or cannot be reached (entity not found)")
    bad = example / "bad.yaml"
    bad.write_text("version: 1\nsandbox:\n  paths: [\n")
    with pytest.raises(errors.PolicyError) as raised:
        warden.Sandbox.from_policy(bad)
    assert str(raised.value) == f"{bad}:3:10: expected mapping start"
