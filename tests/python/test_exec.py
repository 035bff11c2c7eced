"""Commands in the OS sandbox from Python: bubblewrap, and a container."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import warden
from warden import errors


@pytest.fixture
def sandbox(tools_policy: Path) -> warden.Sandbox:
    return warden.Sandbox.from_policy(tools_policy)


def test_a_command_runs_under_bubblewrap(sandbox: warden.Sandbox) -> None:
    # Under bubblewrap the mounts keep their host paths; a command starts in the first.
    result = sandbox.exec(["cat", "notes.md"])
    assert (result.exit_code, result.timed_out, result.truncated, result.sandboxed) == (0, False, False, True), result.stderr
    assert result.sandbox == "bwrap"
    assert result.stdout == sandbox.read("/portfolio/notes.md")


def test_the_host_is_not_there(sandbox: warden.Sandbox, tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("host secret")
    result = sandbox.exec(f"cat {tmp_path / 'secret'}; cat /etc/shadow; ls /root")
    assert "host secret" not in result.stdout
    assert result.exit_code != 0


def test_a_read_only_mount_stays_read_only(sandbox: warden.Sandbox, example: Path) -> None:
    result = sandbox.exec(f"echo x > {example / 'pipeline' / 'new.md'}")
    assert result.exit_code != 0
    assert not (example / "pipeline" / "new.md").exists()


def test_a_timeout_kills_the_command(sandbox: warden.Sandbox) -> None:
    result = sandbox.exec("sleep 30", timeout=0.5)
    assert result.timed_out
    assert result.exit_code != 0


def test_a_bad_timeout(sandbox: warden.Sandbox) -> None:
    with pytest.raises(errors.CommandPolicyError) as raised:
        sandbox.exec("true", timeout=-1)
    assert str(raised.value) == "timeout: -1 is not a positive number of seconds"


def test_a_mount_that_asks_is_asked_before_the_command(example: Path) -> None:
    asked: list[str] = []

    def approver(request: warden.ApprovalRequest) -> str:
        asked.append(request.path)
        return "once"

    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=approver)
    result = sandbox.exec("echo made > made.md")
    assert result.exit_code == 0, result.stderr
    assert asked == ["/portfolio"]
    assert (example / "portfolio" / "made.md").read_text() == "made\n"


def test_a_command_in_a_container(example: Path) -> None:
    if os.geteuid() == 0:
        # As root, a container's commands may write only a folder root does not own.
        for path in [example / "portfolio", *(example / "portfolio").rglob("*")]:
            os.chown(path, 65534, 65534, follow_symlinks=False)
    with warden.Sandbox.from_policy(example / "container.yaml") as sandbox:
        first = sandbox.exec(["sh", "-c", "cat /portfolio/notes.md; echo $REPORT_TITLE"])
        assert first.exit_code == 0, first.stderr
        assert first.stdout.endswith("Portfolio\n")
        second = sandbox.exec("echo kept > /portfolio/kept.md")
        assert second.exit_code == 0, second.stderr
        assert (example / "portfolio" / "kept.md").read_text() == "kept\n"
        refused = sandbox.exec("echo x > /pipeline/x.md")
        assert refused.exit_code != 0
        assert not (example / "pipeline" / "x.md").exists()
