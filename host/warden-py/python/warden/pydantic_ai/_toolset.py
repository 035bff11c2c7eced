"""``FileSystemToolset``: pydantic-ai-filesystem-sandbox 0.9's file tools
(read, write, edit, list, delete, move, copy), each one a call into
Warden's capability filesystem. Sandbox refusals carry Warden's texts; the
toolset's own messages (results, missing files, edits) are the reference's."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Literal, Optional

import anyio.to_thread
from pydantic import BaseModel, Field, TypeAdapter
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from .. import errors
from .._approve import on_this_thread
from ._config import Mount, SandboxConfig
from ._sandbox import Sandbox

DEFAULT_MAX_READ_CHARS = 20_000
"""How many characters ``read_file`` returns unless asked for another number."""


class ReadResult(BaseModel):
    """A window of a text file, and where it sits in the whole."""

    content: str = Field(description="The file content read")
    truncated: bool = Field(description="True if more content exists after this chunk")
    total_chars: int = Field(description="Total file size in characters")
    offset: int = Field(description="Starting character position used")
    chars_read: int = Field(description="Number of characters actually returned")


class ReadFileArgs(BaseModel):
    path: str = Field(description="Virtual path to file (e.g., '/docs/file.txt')")
    max_chars: int = Field(default=DEFAULT_MAX_READ_CHARS, description=f"Maximum characters to read (default {DEFAULT_MAX_READ_CHARS:,})")
    offset: int = Field(default=0, description="Character position to start reading from (default 0)")


class WriteFileArgs(BaseModel):
    path: str = Field(description="Virtual path to file (e.g., '/output/file.txt')")
    content: str = Field(description="Content to write to the file")


class ListFilesArgs(BaseModel):
    path: str = Field(default="/", description="Virtual path to list (e.g., '/', '/docs', '/docs/sub'). Default: '/'")
    pattern: str = Field(default="**/*", description="Glob pattern to match (default: '**/*')")


class EditFileArgs(BaseModel):
    path: str = Field(description="Virtual path to file (e.g., '/output/file.txt')")
    old_text: str = Field(description="Exact text to find (must match exactly and be unique)")
    new_text: str = Field(description="Text to replace old_text with")


class DeleteFileArgs(BaseModel):
    path: str = Field(description="Virtual path to file (e.g., '/output/file.txt')")


class MoveFileArgs(BaseModel):
    source: str = Field(description="Source virtual path (e.g., '/output/old.txt')")
    destination: str = Field(description="Destination virtual path (e.g., '/output/new.txt')")


class CopyFileArgs(BaseModel):
    source: str = Field(description="Source virtual path (e.g., '/input/file.txt')")
    destination: str = Field(description="Destination virtual path (e.g., '/output/file.txt')")


@dataclass(frozen=True)
class _Tool:
    args: type[BaseModel]
    description: str
    run: Callable[[FileSystemToolset, Any], Any]


_PATH = "Path format: '/mount/path' (e.g., '/output/file.txt')."
_TOOLS: dict[str, _Tool] = {
    "read_file": _Tool(
        ReadFileArgs,
        "Read a text file from the sandbox. Path format: '/mount/path' (e.g., '/docs/file.txt'). "
        "Do not use this on binary files (PDFs, images, etc) - pass them as attachments instead.",
        lambda t, a: t.read(a.path, max_chars=a.max_chars, offset=a.offset),
    ),
    "write_file": _Tool(
        WriteFileArgs,
        f"Write a text file to the sandbox. Parent directories are created automatically. {_PATH}",
        lambda t, a: t.write(a.path, a.content),
    ),
    "list_files": _Tool(
        ListFilesArgs,
        "List files in the sandbox matching a glob pattern. Path format: '/mount' or '/mount/subdir'. Use '/' to list all mounts.",
        lambda t, a: t.list_files(a.path, a.pattern),
    ),
    "edit_file": _Tool(
        EditFileArgs,
        f"Edit a file by replacing exact text. The old_text must match exactly and appear only once. {_PATH}",
        lambda t, a: t.edit(a.path, a.old_text, a.new_text),
    ),
    "delete_file": _Tool(DeleteFileArgs, f"Delete a file from the sandbox. {_PATH}", lambda t, a: t.delete(a.path)),
    "move_file": _Tool(
        MoveFileArgs,
        f"Move or rename a file within the sandbox. Parent directories of destination are created automatically. {_PATH}",
        lambda t, a: t.move(a.source, a.destination),
    ),
    "copy_file": _Tool(
        CopyFileArgs,
        f"Copy a file within the sandbox. Parent directories of destination are created automatically. {_PATH}",
        lambda t, a: t.copy(a.source, a.destination),
    ),
}


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` as pathlib's glob reads it, for a path relative to the listed folder."""
    out = []
    parts = pattern.split("/")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        piece = ""
        j = 0
        while j < len(part):
            c = part[j]
            if c == "*":
                piece += "[^/]*"
            elif c == "?":
                piece += "[^/]"
            elif c == "[" and "]" in part[j + 1 :]:
                end = part.index("]", j + 1)
                body = part[j + 1 : end]
                piece += "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
                j = end
            else:
                piece += re.escape(c)
            j += 1
        out.append(piece if last else piece + "/")
    return re.compile("".join(out) + r"\Z", re.DOTALL)


class FileSystemToolset(AbstractToolset[Any]):
    """The file tools of an agent, over a :class:`Sandbox`: ``read_file``,
    ``write_file``, ``edit_file``, ``list_files``, ``delete_file``,
    ``move_file`` and ``copy_file``. Writes are atomic."""

    def __init__(self, sandbox: Sandbox, id: Optional[str] = None, max_retries: int = 1) -> None:
        self._sandbox = sandbox
        self._toolset_id = id
        self._max_retries = max_retries

    @classmethod
    def create_default(cls, root: str | Path, mode: Literal["ro", "rw"] = "rw", id: Optional[str] = None) -> FileSystemToolset:
        """A toolset over one folder mounted at ``/``."""
        config = SandboxConfig(mounts=[Mount(host_path=Path(root), mount_point="/", mode=mode)])
        return cls(Sandbox(config), id=id)

    @property
    def sandbox(self) -> Sandbox:
        return self._sandbox

    @property
    def id(self) -> str | None:
        return self._toolset_id

    def read(self, path: str, max_chars: int = DEFAULT_MAX_READ_CHARS, offset: int = 0) -> ReadResult:
        """A window of a text file: ``max_chars`` characters from ``offset``."""
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        if max_chars < 0:
            raise ValueError(f"max_chars must be >= 0, got {max_chars}")
        try:
            text, total = self._sandbox.warden._native.read_window(path, offset, max_chars)
        except errors.NotFoundError:
            raise errors.NotFoundError(f"File not found: {path}") from None
        except errors.IsAFolderError:
            raise errors.IsAFolderError(f"Not a file: {path}") from None
        return ReadResult(content=text, truncated=offset + len(text) < total, total_chars=total, offset=offset, chars_read=len(text))

    def write(self, path: str, content: str) -> str:
        """Writes a text file atomically, creating its folders."""
        self._sandbox.warden.write(path, content)
        return f"Written {len(content)} characters to {path}"

    def edit(self, path: str, old_text: str, new_text: str) -> str:
        """Replaces the one occurrence of ``old_text``."""
        warden = self._sandbox.warden
        self._sandbox.get_path_config(path, op="write")
        try:
            text = warden.read(path)
        except errors.NotFoundError:
            raise errors.NotFoundError(f"File not found: {path}") from None
        count = text.count(old_text)
        if count != 1:
            reason = "text not found in file" if count == 0 else f"text found {count} times (must be unique)"
            raise errors.EditError(_edit_message(path, reason, old_text))
        warden.edit(path, old_text, new_text)
        return f"Edited {path}: replaced {len(old_text)} chars with {len(new_text)} chars"

    def list_files(self, path: str = "/", pattern: str = "**/*") -> list[str]:
        """The files under ``path`` (every readable root for ``/``) that ``pattern`` matches."""
        matcher = _glob_regex(_checked_pattern(pattern))
        warden = self._sandbox.warden
        if path not in ("/", ".", ""):
            self._sandbox.get_path_config(path, op="read")
        folders = warden.readable_roots if path in ("/", ".", "") else [path]
        found: set[str] = set()
        for folder in folders:
            try:
                entries = warden.list(folder)
            except errors.NotFoundError:
                continue
            base = warden.stat(folder).path if folder not in warden.readable_roots else folder
            prefix = base.rstrip("/") + "/"
            for entry in entries:
                if entry.kind == "file" and entry.path.startswith(prefix) and matcher.match(entry.path[len(prefix) :]):
                    found.add(entry.path)
        return sorted(found)

    def delete(self, path: str) -> str:
        """Deletes a file (never a folder)."""
        self._a_file(path, "write", f"Cannot delete directory with delete_file: {path}", f"File not found: {path}")
        self._sandbox.warden.delete(path)
        return f"Deleted {path}"

    def move(self, source: str, destination: str) -> str:
        """Moves a file; the destination must not exist."""
        self._a_file(source, "write", f"Cannot move directory: {source}", f"Source file not found: {source}")
        self._no_file(destination)
        self._sandbox.warden.move(source, destination)
        return f"Moved {source} to {destination}"

    def copy(self, source: str, destination: str) -> str:
        """Copies a file; the destination must not exist."""
        self._a_file(source, "read", f"Cannot copy directory: {source}", f"Source file not found: {source}")
        self._no_file(destination)
        self._sandbox.warden.copy(source, destination)
        return f"Copied {source} to {destination}"

    def _a_file(self, path: str, op: Literal["read", "write"], folder: str, missing: str) -> None:
        self._sandbox.get_path_config(path, op=op)
        try:
            kind = self._sandbox.warden.stat(path).kind
        except errors.NotFoundError:
            raise errors.NotFoundError(missing) from None
        if kind == "dir":
            raise errors.IsAFolderError(folder)

    def _no_file(self, destination: str) -> None:
        self._sandbox.get_path_config(destination, op="write")
        try:
            self._sandbox.warden.stat(destination)
        except errors.NotFoundError:
            return
        raise errors.AlreadyExistsError(f"Destination already exists: {destination}")

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {
            name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(name=name, description=tool.description, parameters_json_schema=tool.args.model_json_schema()),
                max_retries=self._max_retries,
                args_validator=TypeAdapter(tool.args).validator,
            )
            for name, tool in _TOOLS.items()
        }

    async def call_tool(self, name: str, tool_args: Any, ctx: RunContext[Any], tool: ToolsetTool[Any]) -> Any:
        known = _TOOLS.get(name)
        if known is None:
            raise ValueError(f"Unknown tool: {name}")
        args = tool_args if isinstance(tool_args, known.args) else known.args(**tool_args)
        # Off the event loop: a read, a write or a person's answer does not hold the agent up.
        return await anyio.to_thread.run_sync(on_this_thread, asyncio.get_running_loop(), known.run, self, args)


def _checked_pattern(pattern: str) -> str:
    normalized = pattern.replace("\\", "/").strip()
    if not normalized:
        return "**/*"
    if "\x00" in normalized:
        raise ValueError("pattern must not contain null bytes")
    if normalized.startswith(("/", "~")):
        raise ValueError("pattern must be relative (must not start with '/' or '~')")
    if len(normalized) >= 2 and normalized[1] == ":":
        raise ValueError("pattern must not be a Windows drive path")
    if ".." in PurePosixPath(normalized).parts:
        raise ValueError("pattern must not contain '..' path segments")
    return normalized


def _edit_message(path: str, reason: str, old_text: str) -> str:
    preview = (old_text[:100] + "..." if len(old_text) > 100 else old_text).replace("\n", "\\n")
    return f"Cannot edit '{path}': {reason}.\nSearched for: {preview!r}"
