"""Warden for pydantic-ai: a drop-in for pydantic-ai-filesystem-sandbox 0.9
(change the import, keep the code), enforced by Warden's handles.

    from warden.pydantic_ai import FileSystemToolset, Mount, Sandbox, SandboxConfig

``ApprovableFileSystemToolset`` needs pydantic-ai-blocking-approval. The
names and behaviour are the reference's; the guide (docs/src/python.md) lists where Warden
differs on purpose.
"""

from __future__ import annotations

from typing import Any

from ..errors import (
    EditError,
    FileTooLargeError,
    PathNotInSandboxError,
    PathNotWritableError,
    SandboxError,
    SandboxPermissionEscalationError,
    SuffixNotAllowedError,
)
from ._config import Mount, SandboxConfig
from ._sandbox import Sandbox
from ._toolset import DEFAULT_MAX_READ_CHARS, FileSystemToolset, ReadResult


def __getattr__(name: str) -> Any:
    # pydantic-ai-blocking-approval is needed only by this toolset.
    if name == "ApprovableFileSystemToolset":
        from ._approvable import ApprovableFileSystemToolset

        return ApprovableFileSystemToolset
    if name == "WardenWorkspace":
        # pydantic_ai.workspaces: pydantic-ai-slim 2.68 or later.
        from ._workspace import WardenWorkspace

        return WardenWorkspace
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_MAX_READ_CHARS",
    "ApprovableFileSystemToolset",
    "EditError",
    "FileSystemToolset",
    "FileTooLargeError",
    "Mount",
    "PathNotInSandboxError",
    "PathNotWritableError",
    "ReadResult",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "SandboxPermissionEscalationError",
    "SuffixNotAllowedError",
    "WardenWorkspace",
]
