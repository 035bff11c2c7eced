"""Paths that lead out of the sandbox, through the Python API: each refused
with the sandbox's exact words, nothing outside read or changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import warden
from warden import errors

READABLE = "Readable paths: /portfolio, /pipeline"


@pytest.fixture
def sandbox(tools_policy: Path) -> warden.Sandbox:
    return warden.Sandbox.from_policy(tools_policy)


@pytest.mark.parametrize(
    "path",
    ["/portfolio/../../../etc/passwd", "/portfolio/../../etc/passwd", "../etc/passwd"],
)
def test_dotdot_out_is_outside_the_sandbox(sandbox: warden.Sandbox, path: str) -> None:
    with pytest.raises(errors.PathNotInSandboxError) as raised:
        sandbox.read(path)
    assert str(raised.value).endswith(f": path is outside sandbox.\n{READABLE}")
    assert isinstance(raised.value, PermissionError)


def test_absolute_host_path_is_outside_the_sandbox(sandbox: warden.Sandbox) -> None:
    with pytest.raises(errors.PathNotInSandboxError) as raised:
        sandbox.read("/etc/passwd")
    assert str(raised.value) == f"Cannot access '/etc/passwd': path is outside sandbox.\n{READABLE}"


def test_host_path_of_a_mount_is_outside_the_sandbox(sandbox: warden.Sandbox, example: Path) -> None:
    host = str(example / "portfolio" / "notes.md")
    with pytest.raises(errors.PathNotInSandboxError):
        sandbox.read(host)


def test_tilde_path_is_invalid(sandbox: warden.Sandbox) -> None:
    with pytest.raises(errors.InvalidPathError) as raised:
        sandbox.read("~/.ssh/id_rsa")
    assert str(raised.value) == (
        f"Cannot access '~/.ssh/id_rsa': '~' paths are not available in this sandbox.\n{READABLE}"
    )
    assert isinstance(raised.value, errors.PathNotInSandboxError)


def test_nul_byte_is_invalid(sandbox: warden.Sandbox) -> None:
    with pytest.raises(errors.InvalidPathError) as raised:
        sandbox.write("/portfolio/a\0/../../etc.md", "x")
    assert "path contains a NUL byte" in str(raised.value)


def test_symlink_out_is_not_followed(sandbox: warden.Sandbox, example: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("host secret")
    os.symlink(secret, example / "portfolio" / "link.md")
    with pytest.raises(errors.PathNotInSandboxError) as raised:
        sandbox.read("/portfolio/link.md")
    assert "host secret" not in str(raised.value)
    with pytest.raises(errors.SandboxError):
        sandbox.write("/portfolio/link.md", "overwritten")
    assert secret.read_text() == "host secret"


def test_symlinked_folder_out_is_not_followed(sandbox: warden.Sandbox, example: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("host secret")
    os.symlink(outside, example / "portfolio" / "door")
    with pytest.raises(errors.PathNotInSandboxError):
        sandbox.read("/portfolio/door/secret.md")
    with pytest.raises(errors.PathNotInSandboxError):
        sandbox.write("/portfolio/door/new.md", "x")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]


def test_write_over_a_hard_link_leaves_the_other_name_alone(sandbox: warden.Sandbox, example: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("host original")
    os.link(outside, example / "portfolio" / "linked.md")
    sandbox.write("/portfolio/linked.md", "replaced")
    assert sandbox.read("/portfolio/linked.md") == "replaced"
    assert outside.read_text() == "host original"


def test_read_only_mount_refuses_writes_and_names_the_writable(sandbox: warden.Sandbox, example: Path) -> None:
    with pytest.raises(errors.PathNotWritableError) as raised:
        sandbox.write("/pipeline/x.md", "x")
    assert str(raised.value) == "Cannot write to '/pipeline/x.md': path is read-only.\nWritable paths: /portfolio"
    assert not (example / "pipeline" / "x.md").exists()


def test_suffix_not_allowed(sandbox: warden.Sandbox) -> None:
    with pytest.raises(errors.SuffixNotAllowedError) as raised:
        sandbox.write("/portfolio/run.sh", "x")
    assert str(raised.value) == "Cannot access '/portfolio/run.sh': suffix '.sh' not allowed.\nAllowed suffixes: .md"


def test_content_over_the_size_cap(sandbox: warden.Sandbox) -> None:
    with pytest.raises(errors.FileTooLargeError) as raised:
        sandbox.write("/portfolio/big.md", "x" * 1_000_001)
    assert str(raised.value) == (
        "Cannot write to '/portfolio/big.md': content too large (1000001 bytes).\nMaximum allowed: 1000000 bytes"
    )


def test_missing_file_is_a_file_not_found_error(sandbox: warden.Sandbox) -> None:
    with pytest.raises(FileNotFoundError) as raised:
        sandbox.read("/portfolio/none.md")
    assert str(raised.value) == "Cannot read '/portfolio/none.md': no such file or folder."
    assert isinstance(raised.value, errors.NotFoundError)


def test_edit_errors(sandbox: warden.Sandbox) -> None:
    sandbox.write("/portfolio/e.md", "a a")
    with pytest.raises(errors.EditError) as raised:
        sandbox.edit("/portfolio/e.md", "a", "b")
    assert str(raised.value) == (
        "Cannot edit '/portfolio/e.md': text to replace found 2 times. Include more surrounding text so that it is unique."
    )
    sandbox.edit("/portfolio/e.md", "a a", "b")
    assert sandbox.read("/portfolio/e.md") == "b"


def test_traversal_corpus_never_reaches_the_host(sandbox: warden.Sandbox) -> None:
    corpus = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "traversal-payloads"
    payloads = [
        line
        for file in sorted(corpus.rglob("*"))
        if file.is_file()
        for line in file.read_text(errors="replace").splitlines()
        if line.strip()
    ]
    assert len(payloads) > 100, f"the corpus at {corpus} is missing"
    for payload in payloads:
        for path in (payload, "/portfolio/" + payload):
            try:
                text = sandbox.read(path)
            except errors.SandboxError:
                continue
            except ValueError:
                continue  # not a str Python can pass on (a lone surrogate)
            assert "root:" not in text, f"{path!r} read a host file"
