"""WardenWorkspace's own rules, beside pydantic-ai's conformance suite:
cancellation ends the command, no process outlives its command, and the
file operations stay inside the sandbox."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from pydantic_ai.workspaces import Workspace, WorkspaceUnavailableError

from warden import errors
from warden.pydantic_ai import WardenWorkspace

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def workspace(tmp_path: Path) -> WardenWorkspace:
    (tmp_path / "work").mkdir()
    (tmp_path / "secret.txt").write_text("host secret")
    policy = tmp_path / "policy.yaml"
    policy.write_text("version: 1\nsandbox:\n  paths:\n    work: { root: ./work, mode: rw }\n")
    return WardenWorkspace(policy)


async def test_a_cancelled_command_is_ended(workspace: WardenWorkspace, tmp_path: Path) -> None:
    with anyio.move_on_after(0.5):
        await workspace.run(["sh", "-c", "sleep 2; echo late > late.txt"])
    await anyio.sleep(3)
    assert not (tmp_path / "work" / "late.txt").exists()


async def test_no_process_outlives_its_command(workspace: WardenWorkspace, tmp_path: Path) -> None:
    launched = await workspace.run(["sh", "-c", "setsid sh -c 'sleep 1; echo alive > alive.txt' </dev/null >/dev/null 2>&1 & echo started"])
    assert (launched.exit_code, launched.stdout) == (0, "started\n")
    await anyio.sleep(2.5)
    assert not (tmp_path / "work" / "alive.txt").exists()


async def test_files_outside_the_workspace_are_refused(workspace: WardenWorkspace, tmp_path: Path) -> None:
    work = await workspace.working_dir()
    assert work == str((tmp_path / "work").resolve())
    for path in ["../secret.txt", str(tmp_path / "secret.txt"), "/etc/passwd", f"{work}/../secret.txt"]:
        with pytest.raises(PermissionError):
            await workspace.read_bytes(path)
        with pytest.raises(PermissionError):
            await workspace.write_bytes(path, b"overwritten")
        assert not await workspace.exists(path)
    assert (tmp_path / "secret.txt").read_text() == "host secret"


async def test_a_symlink_out_is_not_followed(workspace: WardenWorkspace, tmp_path: Path) -> None:
    made = await workspace.run(["ln", "-s", str(tmp_path / "secret.txt"), "link.txt"])
    assert made.exit_code == 0
    with pytest.raises(PermissionError):
        await workspace.read_bytes("link.txt")
    with pytest.raises(PermissionError):
        await workspace.write_bytes("link.txt", b"overwritten")
    assert (tmp_path / "secret.txt").read_text() == "host secret"


async def test_commands_see_only_the_workspace(workspace: WardenWorkspace, tmp_path: Path) -> None:
    result = await workspace.run(["cat", str(tmp_path / "secret.txt")])
    assert result.exit_code != 0
    assert "host secret" not in result.stdout


async def test_an_environment_variable_name_is_checked(workspace: WardenWorkspace) -> None:
    with pytest.raises(ValueError):
        await workspace.run(["true"], env={"A=B": "x"})
    assert (await workspace.run(["sh", "-c", 'printf %s "$X"'], env={"X": "a b;$(c)"})).stdout == "a b;$(c)"


async def test_a_policy_that_is_gone_is_unavailable_to_attach(workspace: WardenWorkspace, tmp_path: Path) -> None:
    await workspace.working_dir()
    assert workspace.ref is not None
    (tmp_path / "policy.yaml").unlink()
    with pytest.raises(WorkspaceUnavailableError):
        await Workspace(WardenWorkspace.attach(workspace.ref)).working_dir()


async def test_an_approval_mount_is_asked_before_a_command(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    policy = tmp_path / "policy.yaml"
    policy.write_text("version: 1\nsandbox:\n  paths:\n    work: { root: ./work, mode: rw, write_approval: true }\n")
    asked: list[str] = []

    def approver(request: object) -> str:
        asked.append(request.path)  # type: ignore[attr-defined]
        return "deny"

    workspace = WardenWorkspace(policy, approver=approver)
    # The first command (the working directory's) asks before it starts; denied, it cannot write.
    assert (await workspace.run(["sh", "-c", "echo x > x.txt"])).exit_code != 0
    with pytest.raises(errors.ApprovalDeniedError):
        await workspace.write_bytes("x.txt", b"x")
    assert asked == ["/work", "/work", "/work/x.txt"]
    assert not (tmp_path / "work" / "x.txt").exists()


async def test_removing_a_folder_with_hidden_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "work" / "sub").mkdir(parents=True)
    (tmp_path / "work" / "sub" / "a.md").write_text("shown")
    (tmp_path / "work" / "sub" / ".env").write_text("SECRET=1")
    policy = tmp_path / "policy.yaml"
    policy.write_text("version: 1\nsandbox:\n  paths:\n    work: { root: ./work, mode: rw, suffixes: [.md] }\n")
    workspace = WardenWorkspace(policy)
    with pytest.raises(errors.UnsupportedError) as raised:
        await workspace.remove("sub")
    assert str(raised.value) == "Cannot delete '/work/sub': it holds files this sandbox does not show (by their suffix)."
    assert (tmp_path / "work" / "sub" / ".env").read_text() == "SECRET=1"
    assert [e.name for e in await workspace.list_dir("sub")] == ["a.md"]
