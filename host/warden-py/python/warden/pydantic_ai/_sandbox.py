"""``Sandbox``: pydantic-ai-filesystem-sandbox 0.9's policy object, over
Warden's handles. Its questions (``resolve``, ``can_write``, ...) answer as
the reference does; every file operation of the toolsets goes through a
:class:`warden.Sandbox` opened on the mounts' folders."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Literal, Optional

from .. import _native
from .._approve import synchronous
from .._sandbox import Approver, Sandbox as WardenSandbox
from ..errors import FileTooLargeError, PathNotInSandboxError, SuffixNotAllowedError
from ._config import Mount, SandboxConfig

_AccessOp = Literal["read", "write"]


class Sandbox:
    """The mounts of ``config`` as a sandbox, with a child sandbox from :meth:`derive`.

    As in the reference, ``write_approval`` and ``read_approval`` tell an
    approval layer (``ApprovableFileSystemToolset`` under pydantic-ai's
    ``ApprovalToolset``) which calls to ask about. Given an ``approver``,
    Warden itself also refuses those accesses until it answers (see
    :class:`warden.Sandbox`).
    """

    def __init__(
        self,
        config: SandboxConfig,
        base_path: Optional[Path] = None,
        *,
        approver: Approver | None = None,
        audit: str | os.PathLike[str] | None = None,
        _derived: Optional[tuple[Sandbox, WardenSandbox]] = None,
    ) -> None:
        self.config = config
        self._base_path = Path(base_path) if base_path is not None else Path.cwd()
        if _derived is not None:
            self._parent: Optional[Sandbox] = _derived[0]
            self.warden = _derived[1]
            return
        self._parent = None
        seen: set[str] = set()
        for mount in config.mounts:
            if mount.mount_point in seen:
                raise ValueError(f"Duplicate mount point: {mount.mount_point!r}")
            seen.add(mount.mount_point)
        for mount in config.mounts:
            # As the reference, a missing folder is made: once Warden says it may be mounted,
            # one folder at a time, never through a symlink.
            _make_folder(os.fspath(_native.check_root(str(self._base_path), os.fspath(mount.host_path))))
        enforce = approver is not None
        mounts = [
            (
                m.mount_point,
                str(self._host_folder(m)),
                m.mode == "rw",
                m.suffixes,
                m.max_file_bytes,
                enforce and m.read_approval,
                enforce and m.write_approval,
            )
            for m in config.mounts
        ]
        native = _native.Sandbox(
            mounts=mounts,
            base=str(self._base_path),
            approver=synchronous(approver),
            audit=None if audit is None else os.fspath(audit),
        )
        self.warden = WardenSandbox(native)

    def _host_folder(self, mount: Mount) -> Path:
        host = Path(mount.host_path)
        return host if host.is_absolute() else self._base_path / host

    # Path resolution

    def get_path_config(self, path: str, *, op: _AccessOp) -> tuple[str, Path, Mount]:
        """The mount point, resolved host path and :class:`Mount` that serve
        ``path`` for ``op``; raises the refusal that access would meet."""
        area, host = self.warden._native.resolve(path, op == "write")
        mount = self._config_mount(area)
        resolved = Path(os.path.realpath(host))
        root = Path(os.path.realpath(self._host_folder(mount)))
        if resolved != root and root not in resolved.parents:
            # A symlink that leads out: Warden's handles refuse it too; say so here.
            raise PathNotInSandboxError(
                f"Cannot access '{path}': path is outside sandbox.\nReadable paths: {', '.join(self.readable_roots) or 'none'}"
            )
        return mount.mount_point, resolved, mount

    def _config_mount(self, area: str) -> Mount:
        """The configured mount an area of this (or a derived) sandbox lies in."""
        candidates = [m for m in self.config.mounts if _within(area, m.mount_point)]
        return max(candidates, key=lambda m: len(m.mount_point))

    def resolve(self, path: str) -> Path:
        """The host path of a readable virtual path (for the host's own use)."""
        return self.get_path_config(path, op="read")[1]

    def get_mount_root(self, mount_point: str) -> Path:
        """The host folder of the configured mount at ``mount_point``."""
        for mount in self.config.mounts:
            if mount.mount_point == mount_point:
                return Path(os.path.realpath(self._host_folder(mount)))
        raise PathNotInSandboxError(
            f"Cannot access '{mount_point}': path is outside sandbox.\nReadable paths: {', '.join(self.readable_roots) or 'none'}"
        )

    # Permissions

    def can_read(self, path: str) -> bool:
        return self._allows(path, "read")

    def can_write(self, path: str) -> bool:
        return self._allows(path, "write")

    def _allows(self, path: str, op: _AccessOp) -> bool:
        try:
            self.get_path_config(path, op=op)
        except (PermissionError, ValueError):
            return False
        return True

    def needs_read_approval(self, path: str) -> bool:
        try:
            return self.get_path_config(path, op="read")[2].read_approval
        except (PermissionError, ValueError):
            return False

    def needs_write_approval(self, path: str) -> bool:
        try:
            return self.get_path_config(path, op="write")[2].write_approval
        except (PermissionError, ValueError):
            return False

    @property
    def readable_roots(self) -> list[str]:
        return self.warden.readable_roots

    @property
    def writable_roots(self) -> list[str]:
        return self.warden.writable_roots

    # Derivation

    def derive(
        self,
        *,
        allow_read: str | list[str] | None = None,
        allow_write: str | list[str] | None = None,
        readonly: bool | None = None,
        inherit: bool = False,
    ) -> Sandbox:
        """A child over narrower handles (Warden's derivation): the folders of
        ``allow_read``, ``allow_write`` (readable too), all of this one's with
        ``inherit``, none by default. Asking for more than this sandbox has
        raises :class:`~warden.errors.SandboxPermissionEscalationError`."""
        for entry in _entries(allow_read) + _entries(allow_write):
            self._check_entry(entry)
        child = self.warden.derive(allow_read=allow_read, allow_write=allow_write, readonly=readonly, inherit=inherit)
        return Sandbox(self.config, self._base_path, _derived=(self, child))

    def _check_entry(self, entry: str) -> None:
        raw = entry.replace("\\", "/").strip()
        if ".." in PurePosixPath(raw).parts:
            raise ValueError(f"Allowlist entry must not contain '..': {entry!r}")
        try:
            stat = self.warden.stat(raw)
        except (PermissionError, FileNotFoundError):
            return  # Warden's derivation says why
        if stat.kind == "file":
            parent = str(PurePosixPath(stat.path).parent)
            raise ValueError(
                f"Allowlist entry must be a directory, not a file: {entry!r}. Use the parent directory instead: '{parent}'"
            )

    # Checks on a resolved host path (as the reference's toolsets call them)

    def check_suffix(self, path: Path, mount: Mount, *, virtual_path: str) -> None:
        if mount.suffixes is None:
            return
        suffix = path.suffix.lower()
        if suffix not in [s.lower() for s in mount.suffixes]:
            shown = suffix or "(none)"
            raise SuffixNotAllowedError(
                f"Cannot access '{virtual_path}': suffix '{shown}' not allowed.\nAllowed suffixes: {', '.join(mount.suffixes)}"
            )

    def check_size(self, path: Path, mount: Mount, *, virtual_path: str) -> None:
        if mount.max_file_bytes is None or not path.exists():
            return
        size = path.stat().st_size
        if size > mount.max_file_bytes:
            raise FileTooLargeError(
                f"Cannot read '{virtual_path}': file too large ({size} bytes).\nMaximum allowed: {mount.max_file_bytes} bytes"
            )

    def __repr__(self) -> str:
        return f"<warden.pydantic_ai.Sandbox readable={self.readable_roots} writable={self.writable_roots}>"


def _make_folder(path: str) -> None:
    """``mkdir -p`` of an absolute path without following a symlink on the way."""
    parts = [p for p in path.split("/") if p]
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open("/", flags)
    try:
        for part in parts:
            try:
                os.mkdir(part, 0o777, dir_fd=fd)
            except FileExistsError:
                pass
            following = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = following
    finally:
        os.close(fd)


def _within(path: str, folder: str) -> bool:
    return folder == "/" or path == folder or path.startswith(folder + "/")


def _entries(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


__all__ = ["Sandbox"]
