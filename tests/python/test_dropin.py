"""warden.pydantic_ai beyond the reference's own suite: the escapes through
the toolset, nested mounts, and approvals Warden enforces itself."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from warden import errors
from warden.pydantic_ai import FileSystemToolset, Mount, PathNotInSandboxError, Sandbox, SandboxConfig


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("input")
    (tmp_path / "out").mkdir()
    (tmp_path / "secret.txt").write_text("host secret")
    return tmp_path


def toolset(folders: Path, **kwargs: object) -> FileSystemToolset:
    config = SandboxConfig(
        mounts=[
            Mount(host_path=folders / "in", mount_point="/in", mode="ro"),
            Mount(host_path=folders / "out", mount_point="/out", mode="rw", write_approval=True),
        ]
    )
    return FileSystemToolset(Sandbox(config, **kwargs))


def test_a_symlink_out_is_refused_by_the_toolset(folders: Path) -> None:
    os.symlink(folders / "secret.txt", folders / "out" / "link.txt")
    tools = toolset(folders)
    with pytest.raises(PathNotInSandboxError):
        tools.read("/out/link.txt")
    with pytest.raises(PathNotInSandboxError):
        tools.sandbox.resolve("/out/link.txt")
    with pytest.raises(errors.SandboxError):
        tools.write("/out/link.txt", "overwritten")
    assert (folders / "secret.txt").read_text() == "host secret"


@pytest.mark.parametrize("path", ["/in/../secret.txt", "/in/../../etc/passwd", "~/x", "/in/a\0.txt", str(Path("/etc/passwd"))])
def test_escapes_are_refused_with_warden_texts(folders: Path, path: str) -> None:
    with pytest.raises(PermissionError) as raised:
        toolset(folders).read(path)
    assert "Readable paths: /in, /out" in str(raised.value)


def test_nested_mount_points_the_most_specific_serves(folders: Path) -> None:
    (folders / "in" / "sub").mkdir()
    (folders / "nested").mkdir()
    (folders / "nested" / "n.txt").write_text("nested")
    config = SandboxConfig(
        mounts=[
            Mount(host_path=folders / "in", mount_point="/data", mode="ro"),
            Mount(host_path=folders / "nested", mount_point="/data/sub", mode="rw"),
        ]
    )
    tools = FileSystemToolset(Sandbox(config))
    assert tools.read("/data/sub/n.txt").content == "nested"
    tools.write("/data/sub/w.txt", "w")
    assert (folders / "nested" / "w.txt").read_text() == "w"
    with pytest.raises(errors.PathNotWritableError):
        tools.write("/data/x.txt", "x")


def test_with_an_approver_warden_enforces_write_approval(folders: Path) -> None:
    asked: list[str] = []

    def approver(request: object) -> str:
        asked.append(request.path)  # type: ignore[attr-defined]
        return "deny"

    tools = toolset(folders, approver=approver)
    with pytest.raises(errors.ApprovalDeniedError):
        tools.write("/out/x.txt", "x")
    assert asked == ["/out/x.txt"]
    assert not (folders / "out" / "x.txt").exists()
    # Without one, as in the reference, the approval layer decides and the write goes through.
    toolset(folders).write("/out/x.txt", "x")
    assert (folders / "out" / "x.txt").read_text() == "x"


def test_a_system_folder_cannot_be_mounted(folders: Path) -> None:
    with pytest.raises(errors.PolicyError) as raised:
        Sandbox(SandboxConfig(mounts=[Mount(host_path="/etc", mount_point="/etc", mode="ro")]))
    assert "'/etc' is the system folder /etc or inside it; it cannot be mounted" in str(raised.value)


def test_a_stricter_mount_inside_a_writable_one_is_refused(folders: Path) -> None:
    (folders / "in" / "docs").mkdir()
    config = SandboxConfig(
        mounts=[
            Mount(host_path=folders / "in", mount_point="/", mode="rw"),
            Mount(host_path=folders / "out", mount_point="/docs", mode="ro"),
        ]
    )
    with pytest.raises(errors.PolicyError) as raised:
        Sandbox(config)
    assert str(raised.value).endswith(
        "the mount at '/docs' is read-only inside a writable mount ('/'); a mount inside another may not be stricter than it"
    )


def test_a_missing_mount_folder_is_made_but_never_through_a_symlink(folders: Path) -> None:
    os.symlink(folders / "in", folders / "link")
    with pytest.raises(OSError):
        Sandbox(SandboxConfig(mounts=[Mount(host_path=folders / "link" / "new", mount_point="/n", mode="rw")]))
    assert not (folders / "in" / "new").exists()
    Sandbox(SandboxConfig(mounts=[Mount(host_path=folders / "made" / "deep", mount_point="/n", mode="rw")]))
    assert (folders / "made" / "deep").is_dir()
