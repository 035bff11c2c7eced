"""``AsyncSandbox``: the same operations for asyncio hosts (pydantic-ai is
one). Each runs on a worker thread with the GIL released, so the event loop
keeps running; an async approver is awaited on the caller's loop."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Callable, TypeVar

from ._approve import caller_loop
from ._native import Entry, ExecResult, Stat, ToolResult, Written
from ._sandbox import PathLike, Sandbox

T = TypeVar("T")


async def _off_loop(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    token = caller_loop.set(asyncio.get_running_loop())
    try:
        return await asyncio.to_thread(function, *args, **kwargs)
    finally:
        caller_loop.reset(token)


class AsyncSandbox:
    """A :class:`Sandbox` whose operations are coroutines. ``sandbox.sync``
    is the same sandbox, for the calls that need no awaiting."""

    __slots__ = ("sync",)

    def __init__(self, sandbox: Sandbox) -> None:
        self.sync = sandbox

    @classmethod
    def from_policy(cls, *args: Any, **kwargs: Any) -> AsyncSandbox:
        """:meth:`Sandbox.from_policy`, with the same arguments."""
        return cls(Sandbox.from_policy(*args, **kwargs))

    @classmethod
    def from_config(cls, *args: Any, **kwargs: Any) -> AsyncSandbox:
        """:meth:`Sandbox.from_config`, with the same arguments."""
        return cls(Sandbox.from_config(*args, **kwargs))

    def derive(self, **request: Any) -> AsyncSandbox:
        """As :meth:`Sandbox.derive` (it touches no file: no need to await it)."""
        return AsyncSandbox(self.sync.derive(**request))

    async def read(self, path: str, *, offset: int = 0, max_chars: int | None = None) -> str:
        return await _off_loop(self.sync.read, path, offset=offset, max_chars=max_chars)

    async def read_bytes(self, path: str) -> bytes:
        return await _off_loop(self.sync.read_bytes, path)

    async def write(self, path: str, content: str | bytes) -> Written:
        return await _off_loop(self.sync.write, path, content)

    async def edit(self, path: str, old: str, new: str) -> Written:
        return await _off_loop(self.sync.edit, path, old, new)

    async def delete(self, path: str) -> None:
        await _off_loop(self.sync.delete, path)

    async def mkdir(self, path: str) -> None:
        await _off_loop(self.sync.mkdir, path)

    async def move(self, source: str, destination: str) -> None:
        await _off_loop(self.sync.move, source, destination)

    async def copy(self, source: str, destination: str) -> None:
        await _off_loop(self.sync.copy, source, destination)

    async def list(self, path: str | None = None, glob: str | None = None) -> list[Entry]:
        return await _off_loop(self.sync.list, path, glob)

    async def stat(self, path: str) -> Stat:
        return await _off_loop(self.sync.stat, path)

    async def exec(self, command: str | Sequence[str], *, timeout: float | None = None, cwd: str | None = None) -> ExecResult:
        return await _off_loop(self.sync.exec, command, timeout=timeout, cwd=cwd)

    async def call_tool(self, component: PathLike, tool: str, input: Any, *, limits: Mapping[str, Any] | None = None) -> ToolResult:
        return await _off_loop(self.sync.call_tool, component, tool, input, limits=limits)

    async def close(self) -> None:
        await _off_loop(self.sync.close)

    async def __aenter__(self) -> AsyncSandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
