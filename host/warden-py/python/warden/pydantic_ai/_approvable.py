"""``ApprovableFileSystemToolset``: the file tools with the approval protocol
of pydantic-ai-blocking-approval (``needs_approval``,
``get_approval_description``), as pydantic-ai-filesystem-sandbox 0.9 has them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic_ai.tools import RunContext
from pydantic_ai_blocking_approval import ApprovalResult

from ._toolset import FileSystemToolset

_Op = Literal["read", "write"]

#: The path arguments of each tool, with the access each needs and its name in messages.
_CHECKED: dict[str, list[tuple[str, _Op, str]]] = {
    "read_file": [("path", "read", "Path")],
    "write_file": [("path", "write", "Path")],
    "edit_file": [("path", "write", "Path")],
    "delete_file": [("path", "write", "Path")],
    "move_file": [("source", "write", "Source"), ("destination", "write", "Destination")],
    "copy_file": [("source", "read", "Source"), ("destination", "write", "Destination")],
}


class ApprovableFileSystemToolset(FileSystemToolset):
    """A :class:`FileSystemToolset` that pydantic-ai-blocking-approval's
    ``ApprovalToolset`` can wrap: a call to a path outside the sandbox (or
    read-only, for a write) is blocked, one to a mount with ``read_approval``
    or ``write_approval`` needs approval, any other is pre-approved."""

    def needs_approval(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any]) -> ApprovalResult:
        if name == "list_files":
            return self._list_needs_approval(tool_args.get("path", "/"))
        checked = _CHECKED.get(name)
        if checked is None:
            return ApprovalResult.needs_approval()
        asks = False
        for arg, op, label in checked:
            if arg not in tool_args:
                return ApprovalResult.blocked(f"Missing required '{arg}' argument for {name}")
            path = tool_args[arg]
            try:
                mount = self._sandbox.get_path_config(path, op=op)[2]
            except PermissionError:
                where = "is read-only" if op == "write" and self._sandbox.can_read(path) else "not in any mount"
                return ApprovalResult.blocked(f"{label} {where}: {path}")
            asks = asks or (mount.read_approval if op == "read" else mount.write_approval)
        return ApprovalResult.needs_approval() if asks else ApprovalResult.pre_approved()

    def _list_needs_approval(self, path: str) -> ApprovalResult:
        roots = self._sandbox.readable_roots if path in ("/", ".", "") else [path]
        for root in roots:
            try:
                mount = self._sandbox.get_path_config(root, op="read")[2]
            except PermissionError:
                if root == path:
                    return ApprovalResult.blocked(f"Path not in any mount: {path}")
                continue
            if mount.read_approval:
                return ApprovalResult.needs_approval()
        return ApprovalResult.pre_approved()

    def get_approval_description(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any]) -> str:
        path = tool_args.get("path", "/")
        source, destination = tool_args.get("source", ""), tool_args.get("destination", "")
        described = {
            "write_file": lambda: f"Write {len(tool_args.get('content', ''))} chars to {path}",
            "read_file": lambda: f"Read from {path}",
            "edit_file": lambda: f"Edit {path}: replace {len(tool_args.get('old_text', ''))} chars with {len(tool_args.get('new_text', ''))} chars",
            "list_files": lambda: f"List file paths in {path} matching {tool_args.get('pattern', '**/*')}",
            "delete_file": lambda: f"Delete {path}",
            "move_file": lambda: f"Move {source} to {destination}",
            "copy_file": lambda: f"Copy {source} to {destination}",
        }.get(name)
        return described() if described else f"{name}({path})"
