"""``Sandbox``: a policy's capability filesystem, its component tools and
its OS sandbox, in this process."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Union

from . import _native
from ._approve import synchronous
from ._native import Entry, ExecResult, Stat, ToolResult, Written

PathLike = Union[str, "os.PathLike[str]"]
#: An approver gets an :class:`ApprovalRequest` and answers ``"once"``,
#: ``"session"`` or ``"deny"``, or ``(decision, folder)`` with one of
#: ``request.folders``; for a command a policy's rule asks about it gets a
#: :class:`CommandApprovalRequest` and answers ``"once"``, ``"session"`` or
#: ``"deny"``. It may be a coroutine function.
Approver = Callable[[Union[_native.ApprovalRequest, _native.CommandApprovalRequest]], Any]

_LIMIT_KEYS = ("memory", "timeout", "fuel", "output")


def _entries(value: str | Sequence[str] | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return list(value)


class Sandbox:
    """A sandbox of virtual paths over host folders, as a policy names them.

    Every operation goes through directory handles opened when the sandbox
    was made: a path that leads out (``..``, an absolute host path, ``~``, a
    symlink out) is refused with the sandbox's own words, never followed.
    Operations release the GIL, so threads run them side by side.
    """

    __slots__ = ("_native",)

    def __init__(self, native: _native.Sandbox) -> None:
        """Use :meth:`from_policy` or :meth:`from_config`."""
        self._native = native

    @classmethod
    def from_policy(
        cls,
        path: PathLike,
        worker: str | None = None,
        *,
        approver: Approver | None = None,
        audit: PathLike | None = None,
    ) -> Sandbox:
        """The sandbox of the policy file ``path`` (of its ``worker``, if named).

        ``approver`` is asked about accesses the policy lets a person grant
        (``read_approval``, ``write_approval``, ``dynamic``); without one they
        are refused. ``audit``: a JSON Lines file each question and answer is
        appended to (the policy's ``audit:`` by default).
        """
        return cls(_native.Sandbox(os.fspath(path), worker=worker, approver=synchronous(approver), audit=_path(audit)))

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any],
        *,
        base: PathLike | None = None,
        worker: str | None = None,
        approver: Approver | None = None,
        audit: PathLike | None = None,
    ) -> Sandbox:
        """The sandbox of a policy given as a mapping, with the keys of a policy
        file (``{"version": 1, "sandbox": {"paths": {...}}}``). Relative roots
        resolve against ``base`` (the current folder by default)."""
        text = json.dumps(config)
        native = _native.Sandbox(
            text=text, base=_path(base), worker=worker, approver=synchronous(approver), audit=_path(audit)
        )
        return cls(native)

    def derive(
        self,
        *,
        allow_read: str | Sequence[str] | None = None,
        allow_write: str | Sequence[str] | None = None,
        readonly: bool | None = None,
        inherit: bool = False,
    ) -> Sandbox:
        """A child sandbox over narrower handles: it may read ``allow_read`` and
        write ``allow_write`` (which it may read too), nothing else; with
        ``inherit`` and no lists, all this sandbox may; ``readonly`` drops
        every write. A child can only lose rights: asking for more raises
        :class:`~warden.errors.SandboxPermissionEscalationError`."""
        child = self._native.derive(
            allow_read=_entries(allow_read), allow_write=_entries(allow_write), readonly=readonly, inherit=inherit
        )
        return type(self)(child)

    @property
    def worker(self) -> str | None:
        """The policy's worker this sandbox is, if any."""
        return self._native.worker

    def read(self, path: str, *, offset: int = 0, max_chars: int | None = None) -> str:
        """The text of a UTF-8 file; ``offset`` and ``max_chars`` count characters."""
        return self._native.read(path, offset=offset, max_chars=max_chars)

    def read_bytes(self, path: str) -> bytes:
        """The bytes of a file."""
        return self._native.read_bytes(path)

    def write(self, path: str, content: str | bytes) -> Written:
        """Writes a whole file (text as UTF-8), atomically: a reader sees the old
        content or the new, never part of it; a crash midway loses nothing."""
        return self._native.write(path, content)

    def edit(self, path: str, old: str, new: str) -> Written:
        """Replaces the one occurrence of ``old`` with ``new`` (atomically)."""
        return self._native.edit(path, old, new)

    def delete(self, path: str) -> None:
        """Deletes a file or an empty folder."""
        self._native.delete(path)

    def mkdir(self, path: str) -> None:
        """Creates a folder, and the folders above it."""
        self._native.mkdir(path)

    def move(self, source: str, destination: str) -> None:
        """Moves a file or folder; the destination must not exist."""
        self._native.move(source, destination)

    def copy(self, source: str, destination: str) -> None:
        """Copies a file or folder; the destination must not exist."""
        self._native.copy(source, destination)

    def list(self, path: str | None = None, glob: str | None = None) -> list[Entry]:
        """The entries under ``path`` (all mounts when ``None``), those ``glob``
        matches if given: ``*.md`` matches names at any depth, ``src/**/*.rs``
        paths below ``path``."""
        return self._native.list(path, glob)

    def stat(self, path: str) -> Stat:
        """A file's or folder's kind, size, modification time and writability."""
        return self._native.stat(path)

    def can_read(self, path: str) -> bool:
        """Whether the policy lets ``path`` be read (a mount that asks first counts)."""
        return self._native.can_read(path)

    def can_write(self, path: str) -> bool:
        """Whether the policy lets ``path`` be written (a mount that asks first counts)."""
        return self._native.can_write(path)

    def needs_read_approval(self, path: str) -> bool:
        """Whether reading ``path`` asks the approver first."""
        return self._native.needs_read_approval(path)

    def needs_write_approval(self, path: str) -> bool:
        """Whether writing ``path`` asks the approver first."""
        return self._native.needs_write_approval(path)

    @property
    def readable_roots(self) -> list[str]:
        """The virtual folders that may be read."""
        return self._native.readable_roots()

    @property
    def writable_roots(self) -> list[str]:
        """The virtual folders that may be written."""
        return self._native.writable_roots()

    def host_path(self, path: str) -> str:
        """The host path behind a virtual path, for the host's own use (never
        show it to a model); raises as reading ``path`` would be refused."""
        return os.fspath(self._native.host_path(path))

    def exec(
        self, command: str | Sequence[str], *, timeout: float | None = None, cwd: str | None = None
    ) -> ExecResult:
        """Runs a command in the OS sandbox the policy names (bubblewrap, or a
        container): a string through ``/bin/sh -c``, a sequence as the argv.
        ``timeout`` in seconds (the policy's, else 120 s); ``cwd`` a virtual path.
        A mount that asks first is asked about before the command starts."""
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else [os.fspath(a) for a in command]
        return self._native.exec(argv, timeout=timeout, cwd=cwd)

    def call_tool(
        self, component: PathLike, tool: str, input: Any, *, limits: Mapping[str, Any] | None = None
    ) -> ToolResult:
        """Calls ``tool`` of the WebAssembly component file ``component`` with
        ``input`` (JSON text, or a value to encode as JSON), its preopens the
        sandbox's mounts. ``limits`` over the policy's: ``memory`` (``"64MiB"``),
        ``timeout`` (``"2s"`` or seconds), ``fuel``, ``output``."""
        text = input if isinstance(input, str) else json.dumps(input)
        if not limits:
            return self._native.call_tool(os.fspath(component), tool, text)
        given = dict(limits)
        unknown = sorted(set(given) - set(_LIMIT_KEYS))
        if unknown:
            raise TypeError(f"unknown limits {', '.join(unknown)}; the limits are {', '.join(_LIMIT_KEYS)}")
        timeout = given.get("timeout")
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
            given["timeout"] = f"{round(timeout * 1000)}ms"
        for key in ("memory", "output"):
            if isinstance(given.get(key), int):
                given[key] = str(given[key])
        return self._native.call_tool(os.fspath(component), tool, text, **given)

    def close(self) -> None:
        """Ends what the sandbox keeps between commands (its own container)."""
        self._native.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        worker = f", worker={self.worker!r}" if self.worker else ""
        return f"<warden.Sandbox {os.fspath(self._native.policy_file)!r}{worker} readable={self.readable_roots}>"


def _path(value: PathLike | None) -> str | None:
    return None if value is None else os.fspath(value)
