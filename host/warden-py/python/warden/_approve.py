"""An approver as the native sandbox calls it: synchronously, on the thread
that runs the operation, whether the host's approver is a plain function or
a coroutine function."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from typing import Any, Callable

#: The event loop of the asyncio caller whose operation runs on this thread.
caller_loop: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "warden_caller_loop", default=None
)


def synchronous(approver: Callable[[Any], Any] | None) -> Callable[[Any], Any] | None:
    """``approver`` as a function that returns its answer, awaiting it if it is awaitable:
    on the asyncio caller's loop when an ``AsyncSandbox`` operation asks, else on a loop of its own."""
    if approver is None:
        return None

    def ask(request: Any) -> Any:
        answer = approver(request)
        if not inspect.isawaitable(answer):
            return answer
        loop = caller_loop.get()
        if loop is not None and loop.is_running():
            return asyncio.run_coroutine_threadsafe(_awaited(answer), loop).result()
        return asyncio.run(_awaited(answer))

    return ask


async def _awaited(answer: Any) -> Any:
    return await answer


def on_this_thread(loop: asyncio.AbstractEventLoop | None, function: Callable[..., Any], *args: Any) -> Any:
    """Calls ``function`` on a worker thread, with ``loop`` as the caller's (for an async approver)."""
    caller_loop.set(loop)
    return function(*args)
