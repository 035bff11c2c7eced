"""Command rules from Python: ``Sandbox.exec`` is judged as ``warden exec`` is."""

from __future__ import annotations

from pathlib import Path

import pytest

import warden
from warden import errors

POLICY = """\
version: 1
sandbox:
  paths:
    work: { root: ./work, mode: rw }
  audit: ./audit.jsonl
  shell:
    rules:
      - { prefix: [rm], decision: forbid, justification: "nothing is removed here" }
      - { prefix: [touch], decision: ask }
"""


@pytest.fixture
def sandbox(tmp_path: Path) -> warden.Sandbox:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "keep.md").write_text("kept")
    (tmp_path / "policy.yaml").write_text(POLICY)
    return warden.Sandbox.from_policy(tmp_path / "policy.yaml")


def test_a_forbidden_command_raises_and_never_runs(sandbox: warden.Sandbox, tmp_path: Path) -> None:
    with pytest.raises(errors.CommandRefusedError) as raised:
        sandbox.exec("true && sh -c 'rm -f keep.md'")
    assert str(raised.value) == "Cannot run 'true && sh -c 'rm -f keep.md'': the policy forbids 'rm ...': nothing is removed here."
    assert isinstance(raised.value, PermissionError)
    assert (tmp_path / "work" / "keep.md").read_text() == "kept"


def test_an_asking_rule_without_a_way_to_ask_refuses(sandbox: warden.Sandbox, tmp_path: Path) -> None:
    with pytest.raises(errors.CommandRefusedError) as raised:
        sandbox.exec(["env", "A=1", "touch", "made"])
    assert str(raised.value) == "Cannot run 'env A=1 touch made': the command needs the user's approval, which may be requested."
    assert not (tmp_path / "work" / "made").exists()
    assert '"operation":"run"' in (tmp_path / "audit.jsonl").read_text()


def test_a_command_no_rule_names_runs(sandbox: warden.Sandbox) -> None:
    assert sandbox.exec(["cat", "keep.md"]).stdout == "kept"
