"""Command rules from Python: ``Sandbox.exec`` is judged as ``warden exec`` is."""

from __future__ import annotations

import sys
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


def test_an_approver_is_asked_about_a_command_and_its_answer_holds(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "policy.yaml").write_text(POLICY)
    asked: list[warden.CommandApprovalRequest] = []

    def approver(request: warden.ApprovalRequest | warden.CommandApprovalRequest) -> str:
        assert isinstance(request, warden.CommandApprovalRequest)
        asked.append(request)
        return "once" if "made" in request.command else "deny"

    sandbox = warden.Sandbox.from_policy(tmp_path / "policy.yaml", approver=approver)
    assert sandbox.exec(["touch", "made"]).exit_code == 0
    assert (tmp_path / "work" / "made").exists()
    request = asked[0]
    assert (request.command, request.asking, request.rules, request.session) == ("touch made", ["touch made"], ["touch ..."], True)
    assert request.question == "sandbox.exec asks to run touch made, because the rule 'touch ...' asks. Allow it?"
    with pytest.raises(errors.CommandRefusedError) as raised:
        sandbox.exec("touch other")
    assert str(raised.value) == "Cannot run 'touch other': the user declined it."
    assert not (tmp_path / "work" / "other").exists()


def test_an_approver_that_answers_a_command_with_a_folder_denies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "policy.yaml").write_text(POLICY)
    reported: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: reported.append(unraisable.exc_value))
    sandbox = warden.Sandbox.from_policy(tmp_path / "policy.yaml", approver=lambda request: ("once", "/work"))
    with pytest.raises(errors.CommandRefusedError):
        sandbox.exec(["touch", "made"])
    assert not (tmp_path / "work" / "made").exists()
    assert [str(e) for e in reported] == ["an approver answers a command with \"once\", \"session\" or \"deny\", not ('once', '/work')"]
