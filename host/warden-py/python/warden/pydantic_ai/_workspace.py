"""``WardenWorkspace``: a pydantic-ai workspace backend (``WorkspaceBackend``,
``SupportsCommands``, ``SupportsFilesystem``) whose commands run in Warden's
OS sandbox (bubblewrap, or a kept container) and whose files go through the
capability filesystem, under one policy.

Paths are the ones commands see: under bubblewrap a mount keeps its host
path, in a container it sits at its virtual path (a `root:` policy's folder
at `/workspace`). The working directory is where commands start: the
policy's first mount.
"""

from __future__ import annotations

import asyncio
import json
import os
import posixpath
import re
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, TypeVar

import anyio
import anyio.to_thread
from pydantic_ai.workspaces import (
    CommandResult,
    FileEntry,
    WorkspaceCommand,
    WorkspaceOutputLimitError,
    WorkspaceRef,
    WorkspaceTimeoutError,
    WorkspaceUnavailableError,
)

from .. import _native, errors
from .._approve import on_this_thread
from .._sandbox import Approver, PathLike, Sandbox

PROVIDER = "warden"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: "No timeout" (the protocol's default) as the runner takes it: a year.
_NO_TIMEOUT = 365 * 24 * 3600.0
T = TypeVar("T")


@dataclass(frozen=True)
class _Environment:
    sandbox: Sandbox
    working_dir: str
    #: (workspace folder, virtual folder) pairs, the longest first.
    folders: tuple[tuple[str, str], ...]
    #: The host folder behind the working directory, to tell a destroyed environment.
    host_working_dir: str | None


class WardenWorkspace:
    """The environment an agent run works in, sandboxed by Warden.

    Built without I/O. Under a policy with ``shell: { backend: container }``,
    the first operation starts a kept sandbox (as ``warden sandbox start
    --name``) that outlives the run, and :attr:`ref` names it; pass that ref
    to :meth:`attach` later. Under bubblewrap the environment is the policy's
    folders, and the ref names the policy.
    """

    def __init__(
        self,
        policy: PathLike,
        *,
        worker: str | None = None,
        env: Mapping[str, str] | None = None,
        approver: Approver | None = None,
        ref: WorkspaceRef | None = None,
    ) -> None:
        self._policy = os.path.abspath(os.fspath(policy))
        self._worker = worker
        self._env = dict(env or {})
        self._approver = approver
        self._ref = ref
        self._attaching = ref is not None
        self._lock = threading.Lock()
        self._environment: _Environment | None = None

    @classmethod
    def attach(cls, ref: WorkspaceRef, *, env: Mapping[str, str] | None = None, approver: Approver | None = None) -> WardenWorkspace:
        """The workspace ``ref`` names (made by an earlier ``WardenWorkspace``)."""
        if ref.provider != PROVIDER:
            raise ValueError(f"a WorkspaceRef of provider {ref.provider!r}, not {PROVIDER!r}")
        named = json.loads(ref.id)
        return cls(named["policy"], worker=named.get("worker"), env=env, approver=approver, ref=ref)

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._ref

    @staticmethod
    def destroy(ref: WorkspaceRef) -> None:
        """Removes the kept container a ref names, and everything running in it
        (only one a ``WardenWorkspace`` started: its name begins with ``ws-``)."""
        name = json.loads(ref.id).get("sandbox")
        if name is None:
            return
        if not isinstance(name, str) or not name.startswith("ws-"):
            raise ValueError(f"{name!r} is not a sandbox a WardenWorkspace started")
        _native.stop_container(name)

    # The environment

    async def _ready(self) -> _Environment:
        if self._environment is not None:
            return self._environment
        return await _off_loop(self._set_up)

    def _set_up(self) -> _Environment:
        with self._lock:
            if self._environment is not None:
                return self._environment
            try:
                sandbox = Sandbox.from_policy(self._policy, self._worker, approver=self._approver)
            except (errors.PolicyError, OSError) as gone:
                if self._attaching:
                    raise WorkspaceUnavailableError(f"the workspace's policy cannot be opened: {gone}") from gone
                raise
            native = sandbox._native
            name = json.loads(self._ref.id).get("sandbox") if self._ref else None
            if native.uses_container:
                name = name or f"ws-{uuid.uuid4().hex[:16]}"
                try:
                    native.keep_container(name, attach=self._attaching)
                except errors.SandboxGoneError as gone:
                    raise WorkspaceUnavailableError(str(gone)) from gone
            if self._ref is None:
                # Recorded before the container starts: a failed start still leaves its name.
                self._ref = WorkspaceRef(provider=PROVIDER, id=json.dumps({"policy": self._policy, "worker": self._worker, "sandbox": name}))
            result = self._exec(sandbox, ["sh", "-c", "pwd -P"], 60.0, None)
            if result.exit_code != 0:
                raise WorkspaceUnavailableError(f"the workspace's sandbox does not start commands: {result.stderr.strip()}")
            working_dir = result.stdout.strip()
            folders, host_working_dir = _folders(sandbox, working_dir, native.uses_container, native.layout)
            self._environment = _Environment(sandbox, working_dir, folders, host_working_dir)
            return self._environment

    def _exec(self, sandbox: Sandbox, argv: list[str], timeout: float, cancel: Any) -> Any:
        try:
            return sandbox._native.exec(argv, timeout=timeout, cancel=cancel)
        except (errors.CommandStartError, errors.OSSandboxUnavailableError) as gone:
            raise WorkspaceUnavailableError(str(gone)) from gone

    async def working_dir(self) -> str:
        return (await self._ready()).working_dir

    # Commands

    async def run(
        self, command: WorkspaceCommand, *, shell: bool = False, env: Mapping[str, str] | None = None, timeout: float | None = None
    ) -> CommandResult:
        if shell and not isinstance(command, str):
            raise TypeError("shell=True takes the command as one string")
        if not shell and isinstance(command, str):
            raise TypeError("a command string needs shell=True; give an argv sequence otherwise")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0 or timeout == float("inf")):
            raise ValueError("timeout must be a positive finite number or None")
        variables = {**self._env, **(env or {})}
        for name in variables:
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not an environment variable name")
        argv = ["env", *(f"{k}={v}" for k, v in variables.items())] if variables else []
        # Through sh, as the protocol asks: a program that is missing exits 127.
        argv += ["sh", "-c", command] if shell else ["sh", "-c", 'exec "$@"', "sh", *command]
        environment = await self._ready()
        limit = timeout if timeout is not None else (environment.sandbox._native.default_timeout or _NO_TIMEOUT)
        token = _native.CancelToken()
        try:
            result = await anyio.to_thread.run_sync(
                on_this_thread, asyncio.get_running_loop(), partial(self._exec, environment.sandbox, argv, float(limit), token),
                abandon_on_cancel=True,
            )
        except anyio.get_cancelled_exc_class():
            token.cancel()
            raise
        self._still_there(environment)
        if result.timed_out:
            raise WorkspaceTimeoutError(f"the command ran past its time limit of {limit} s", stdout=result.stdout, stderr=result.stderr)
        if result.truncated:
            raise WorkspaceOutputLimitError(
                "the command's output ran past the policy's output cap", limit=0, stdout=result.stdout, stderr=result.stderr
            )
        return CommandResult(exit_code=result.exit_code, stdout=result.stdout, stderr=result.stderr)

    @staticmethod
    def _still_there(environment: _Environment) -> None:
        if environment.host_working_dir is not None and not os.path.isdir(environment.host_working_dir):
            raise WorkspaceUnavailableError("the workspace's folder is gone")

    # Files, through the capability filesystem

    async def _call(self, path: str, operation: Callable[[Sandbox, str], T]) -> T:
        environment = await self._ready()
        virtual = _virtual(environment, path)
        return await _off_loop(operation, environment.sandbox, virtual)

    async def read_bytes(self, path: str) -> bytes:
        return await self._call(path, lambda s, v: s.read_bytes(v))

    async def write_bytes(self, path: str, data: bytes) -> None:
        await self._call(path, lambda s, v: s.write(v, bytes(data)))

    async def stat(self, path: str) -> FileEntry:
        stat = await self._call(path, lambda s, v: s.stat(v))
        name = posixpath.basename(posixpath.normpath(path)) or "/"
        size = stat.size if stat.kind == "file" else None
        return FileEntry(name=name, path=posixpath.normpath(path), is_dir=stat.kind == "dir", size=size)

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        entries = await self._call(path, lambda s, v: s._native.list_dir(v))
        folder = posixpath.normpath(path)
        return [
            FileEntry(name=name, path=posixpath.join(folder, name), is_dir=leads_to_dir, size=size)
            for name, _kind, leads_to_dir, size in entries
        ]

    async def make_dir(self, path: str) -> None:
        await self._call(path, _make_dir)

    async def remove(self, path: str) -> None:
        environment = await self._ready()
        target = posixpath.normpath(posixpath.join(environment.working_dir, path))
        if target == "/" or environment.working_dir == target or environment.working_dir.startswith(target + "/"):
            raise ValueError(f"{path!r} is the working directory or holds it: it is not removed")
        await self._call(path, lambda s, v: s._native.delete_all(v))

    async def exists(self, path: str) -> bool:
        try:
            await self._call(path, lambda s, v: s.stat(v))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            # A path outside the sandbox, or a symlink that leads out, is not there for the workspace.
            return False
        return True


async def _off_loop(function: Callable[..., T], *args: Any) -> T:
    """On a worker thread, the caller's loop at hand for an async approver."""
    return await anyio.to_thread.run_sync(on_this_thread, asyncio.get_running_loop(), function, *args)


def _make_dir(sandbox: Sandbox, virtual: str) -> None:
    """`mkdir -p`: over a file (not a folder on the way) it is a `FileExistsError`, as mkdir says."""
    try:
        sandbox.mkdir(virtual)
    except errors.NotAFolderError:
        if sandbox.stat(virtual).kind != "dir":
            raise errors.AlreadyExistsError(f"Cannot create folder '{virtual}': a file is there.") from None
        raise


def _folders(sandbox: Sandbox, working_dir: str, in_container: bool, layout: str) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """Where each readable root appears to commands, and the working directory's host folder."""
    if in_container:
        inside = "/workspace" if layout == "root" else ""
        folders = tuple((inside + root if root != "/" else inside or "/", root) for root in sandbox.readable_roots)
        return tuple(sorted(folders, key=lambda f: len(f[0]), reverse=True)), None
    folders = tuple((os.path.realpath(sandbox.host_path(root)), root) for root in sandbox.readable_roots)
    return tuple(sorted(folders, key=lambda f: len(f[0]), reverse=True)), working_dir


def _virtual(environment: _Environment, path: str) -> str:
    """The virtual path of a path as commands see it (relative: to the working directory)."""
    if not isinstance(path, str) or "\x00" in path:
        raise ValueError(f"{path!r} is not a path")
    absolute = posixpath.normpath(posixpath.join(environment.working_dir, path))
    for seen, virtual in environment.folders:
        if absolute == seen or absolute.startswith(seen.rstrip("/") + "/"):
            rest = absolute[len(seen) :].lstrip("/")
            return posixpath.join(virtual, rest) if rest else virtual
    shown = ", ".join(seen for seen, _ in environment.folders)
    raise errors.PathNotInSandboxError(f"Cannot access '{path}': path is outside the workspace.\nReadable paths: {shown}")
