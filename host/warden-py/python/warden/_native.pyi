"""The native extension of the ``warden`` package (type stubs)."""

import os
from collections.abc import Callable
from typing import Any, final

__version__: str

@final
class ApprovalRequest:
    """One access waiting for a person's answer."""

    question: str
    access: str
    path: str
    host_path: str
    reason: str
    folders: list[str]
    tool: str | None
    worker: str | None

@final
class CommandApprovalRequest:
    """A command a policy's rule asks about, waiting for a person's answer."""

    question: str
    command: str
    asking: list[str]
    reason: str
    rules: list[str]
    grant: str | None
    session: bool
    tool: str | None
    worker: str | None

@final
class Written:
    path: str
    bytes: int
    created: bool

@final
class Entry:
    path: str
    kind: str

@final
class Stat:
    path: str
    kind: str
    size: int
    modified: float | None
    writable: bool

@final
class ExecResult:
    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool
    truncated: bool
    sandboxed: bool
    sandbox: str

@final
class ToolResult:
    output: str
    stderr: bytes
    logs: list[tuple[str, str]]
    fuel_consumed: int

@final
class Sandbox:
    def __new__(
        cls,
        policy: str | None = None,
        *,
        text: str | None = None,
        mounts: list[tuple[str, str, bool, list[str] | None, int | None, bool, bool]] | None = None,
        base: str | None = None,
        worker: str | None = None,
        approver: Callable[[ApprovalRequest | CommandApprovalRequest], Any] | None = None,
        audit: str | None = None,
    ) -> Sandbox: ...
    def derive(
        self,
        *,
        allow_read: list[str] | None = None,
        allow_write: list[str] | None = None,
        readonly: bool | None = None,
        inherit: bool = False,
    ) -> Sandbox: ...
    @property
    def worker(self) -> str | None: ...
    @property
    def uses_container(self) -> bool: ...
    @property
    def layout(self) -> str: ...
    @property
    def default_timeout(self) -> float | None: ...
    @property
    def policy_file(self) -> os.PathLike[str] | str: ...
    def read(self, path: str, *, offset: int = 0, max_chars: int | None = None) -> str: ...
    def read_bytes(self, path: str) -> bytes: ...
    def write(self, path: str, content: str | bytes) -> Written: ...
    def edit(self, path: str, old: str, new: str) -> Written: ...
    def delete(self, path: str) -> None: ...
    def mkdir(self, path: str) -> None: ...
    def move(self, source: str, destination: str) -> None: ...
    def copy(self, source: str, destination: str) -> None: ...
    def list(self, path: str | None = None, glob: str | None = None) -> list[Entry]: ...
    def stat(self, path: str) -> Stat: ...
    def can_read(self, path: str) -> bool: ...
    def can_write(self, path: str) -> bool: ...
    def needs_read_approval(self, path: str) -> bool: ...
    def needs_write_approval(self, path: str) -> bool: ...
    def readable_roots(self) -> list[str]: ...
    def writable_roots(self) -> list[str]: ...
    def host_path(self, path: str) -> os.PathLike[str] | str: ...
    def exec(
        self, argv: list[str], *, timeout: float | None = None, cwd: str | None = None, cancel: CancelToken | None = None
    ) -> ExecResult: ...
    def keep_container(self, name: str, *, attach: bool = False) -> None: ...
    def list_dir(self, path: str) -> list[tuple[str, str, bool, int | None]]: ...
    def delete_all(self, path: str) -> None: ...
    def read_window(self, path: str, offset: int = 0, max_chars: int | None = None) -> tuple[str, int]: ...
    def resolve(self, path: str, write: bool = False) -> tuple[str, str]: ...
    def call_tool(
        self,
        component: str,
        tool: str,
        input: str,
        *,
        memory: str | None = None,
        timeout: str | None = None,
        fuel: int | None = None,
        output: str | None = None,
    ) -> ToolResult: ...
    def close(self) -> None: ...

@final
class CancelToken:
    def __init__(self) -> None: ...
    def cancel(self) -> None: ...

def main(argv: list[str], bridge: str | None = None) -> int: ...
def stop_container(name: str) -> None: ...
def check_root(base: str, root: str) -> os.PathLike[str] | str: ...
def use_net_bridge(program: str) -> None: ...
