"""The approver: asked the question the terminal and the MCP form show;
its answers (once, session, deny) applied and audited; failures denied."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

import warden
from warden import errors


class Recorder:
    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)
        self.asked: list[warden.ApprovalRequest] = []

    def __call__(self, request: warden.ApprovalRequest) -> object:
        self.asked.append(request)
        return self.answers.pop(0)


def test_the_approver_gets_the_question_and_a_denial_is_declined(example: Path) -> None:
    approver = Recorder("deny")
    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=approver)
    with pytest.raises(errors.ApprovalDeniedError) as raised:
        sandbox.write("/portfolio/reports/q9.md", "x")
    assert str(raised.value) == "Cannot write to '/portfolio/reports/q9.md': the user declined access.\nWritable paths: none"
    [request] = approver.asked
    host = example / "portfolio" / "reports" / "q9.md"
    assert request.question == (
        f"sandbox.write asks to write /portfolio/reports/q9.md (host path {host}), "
        "because the policy asks for approval of this access to /portfolio. Allow it?"
    )
    assert (request.access, request.path, request.folders) == ("write", "/portfolio/reports/q9.md", ["/portfolio/reports", "/portfolio"])
    assert not host.exists()


def test_without_an_approver_the_access_needs_approval(example: Path) -> None:
    sandbox = warden.Sandbox.from_policy(example / "policy.yaml")
    with pytest.raises(errors.ApprovalRequiredError) as raised:
        sandbox.write("/portfolio/x.md", "x")
    assert str(raised.value) == (
        "Cannot write to '/portfolio/x.md': access needs the user's approval, which may be requested.\nWritable paths: none"
    )


def test_once_asks_again_and_session_does_not(example: Path) -> None:
    approver = Recorder("once", "session")
    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=approver)
    sandbox.write("/portfolio/a.md", "1")
    sandbox.write("/portfolio/a.md", "2")
    sandbox.write("/portfolio/a.md", "3")
    sandbox.write("/portfolio/b.md", "4")
    assert len(approver.asked) == 2
    assert (example / "portfolio" / "a.md").read_text() == "3"


def test_a_folder_answer_grants_that_folder_only(example: Path) -> None:
    approver = Recorder(("session", "/portfolio/reports"), "deny")
    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=approver)
    sandbox.write("/portfolio/reports/a.md", "1")
    with pytest.raises(errors.ApprovalDeniedError):
        sandbox.write("/portfolio/notes.md", "2")
    assert len(approver.asked) == 2


@pytest.mark.parametrize("answer", ["yes", ("once", "/elsewhere"), 1, None])
def test_an_answer_that_is_not_one_denies(example: Path, answer: object, monkeypatch: pytest.MonkeyPatch) -> None:
    reported: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: reported.append(unraisable.exc_value))
    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=lambda request: answer)
    with pytest.raises(errors.ApprovalDeniedError):
        sandbox.write("/portfolio/x.md", "x")
    assert not (example / "portfolio" / "x.md").exists()
    assert [type(e) for e in reported] == [ValueError]


def test_an_approver_that_raises_denies_and_is_reported(example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reported: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: reported.append(unraisable.exc_value))

    def broken(request: warden.ApprovalRequest) -> str:
        raise RuntimeError("approver crashed")

    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=broken)
    with pytest.raises(errors.ApprovalDeniedError):
        sandbox.write("/portfolio/x.md", "x")
    assert [str(e) for e in reported] == ["approver crashed"]


def test_answers_are_audited(example: Path, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=Recorder("once", "deny"), audit=audit)
    sandbox.write("/portfolio/a.md", "1")
    with pytest.raises(errors.ApprovalDeniedError):
        sandbox.write("/portfolio/b.md", "2")
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["decision"], r.get("scope"), r["path"]) for r in records] == [
        ("allow", "once", "/portfolio/a.md"),
        ("deny", None, "/portfolio/b.md"),
    ]


def test_an_async_approver_is_awaited_on_the_callers_loop(example: Path) -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def approver(request: warden.ApprovalRequest) -> str:
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        return "once"

    async def main() -> asyncio.AbstractEventLoop:
        sandbox = warden.AsyncSandbox.from_policy(example / "policy.yaml", approver=approver)
        await sandbox.write("/portfolio/a.md", "async")
        assert await sandbox.read("/portfolio/a.md") == "async"
        return asyncio.get_running_loop()

    caller = asyncio.run(main())
    assert loops == [caller]


def test_an_async_approver_from_the_sync_api_runs_on_a_loop_of_its_own(example: Path) -> None:
    async def approver(request: warden.ApprovalRequest) -> str:
        await asyncio.sleep(0)
        return "once"

    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=approver)
    sandbox.write("/portfolio/a.md", "x")
    assert (example / "portfolio" / "a.md").read_text() == "x"


def test_an_approver_may_use_the_sandbox_it_answers_for(example: Path) -> None:
    sandbox: warden.Sandbox | None = None
    seen: list[str] = []

    def approver(request: warden.ApprovalRequest) -> str:
        assert sandbox is not None
        # Other operations while this question waits, one of them refused (through the
        # session, as a question is): neither waits for this one.
        seen.append(sandbox.read("/portfolio/notes.md"))
        with pytest.raises(errors.PathNotWritableError):
            sandbox.write("/pipeline/other.md", "x")
        return "once"

    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=approver)
    sandbox.write("/portfolio/a.md", "x")
    assert seen == [(example / "portfolio" / "notes.md").read_text()]
    assert (example / "portfolio" / "a.md").read_text() == "x"
