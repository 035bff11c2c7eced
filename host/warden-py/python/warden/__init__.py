"""Warden: run untrusted tools in sandboxes, from Python, in process.

>>> import warden
>>> sandbox = warden.Sandbox.from_policy("policy.yaml")
>>> sandbox.read("/portfolio/notes.md")

See :class:`Sandbox` (and :class:`AsyncSandbox`) for files, component tools
and commands, :mod:`warden.errors` for what they raise, and
``warden.pydantic_ai`` for the pydantic-ai toolset and workspace.
"""

from __future__ import annotations

from . import errors
from ._aio import AsyncSandbox
from ._bridge import net_bridge as _net_bridge
from ._native import ApprovalRequest, CommandApprovalRequest, Entry, ExecResult, Stat, ToolResult, Written, __version__
from ._native import use_net_bridge as _use_net_bridge
from ._sandbox import Approver, Sandbox

if (_bridge := _net_bridge()) is not None:
    _use_net_bridge(str(_bridge))

__all__ = [
    "ApprovalRequest",
    "Approver",
    "AsyncSandbox",
    "CommandApprovalRequest",
    "Entry",
    "ExecResult",
    "Sandbox",
    "Stat",
    "ToolResult",
    "Written",
    "__version__",
    "errors",
]
