"""``Mount`` and ``SandboxConfig``: pydantic-ai-filesystem-sandbox 0.9's
configuration, field for field, validated the same way."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, Field, model_validator


def _mount_point(raw: str) -> str:
    point = raw.replace("\\", "/").strip() or "/"
    if "\x00" in point:
        raise ValueError("mount_point must not contain null bytes")
    if not point.startswith("/"):
        raise ValueError(f"mount_point must start with '/': {raw!r}")
    if any(part in (".", "..") for part in point.split("/")):
        raise ValueError(f"mount_point must not contain '.' or '..' segments: {raw!r}")
    point = posixpath.normpath(re.sub(r"/{2,}", "/", point))
    return "/" if point in ("/", "//", ".") else point.rstrip("/")


class Mount(BaseModel):
    """A host folder seen at ``mount_point`` in the sandbox: ``ro`` or ``rw``,
    with optional suffix and size rules. ``write_approval`` and
    ``read_approval`` say which calls an approval layer asks about."""

    host_path: Path = Field(description="Host directory path to mount")
    mount_point: str = Field(description="Where to mount in virtual filesystem (e.g., '/docs', '/data')")
    mode: Literal["ro", "rw"] = Field(default="ro", description="Access mode: 'ro' (read-only) or 'rw' (read-write)")
    suffixes: Optional[list[str]] = Field(default=None, description="Allowed file suffixes (e.g., ['.md']). None allows all.")
    max_file_bytes: Optional[int] = Field(default=None, description="Maximum file size in bytes. None means no limit.")
    write_approval: bool = Field(default=True, description="Whether writes to this mount require approval")
    read_approval: bool = Field(default=False, description="Whether reads from this mount require approval")

    @model_validator(mode="after")
    def _normal_mount_point(self) -> Mount:
        self.mount_point = _mount_point(self.mount_point)
        return self


class SandboxConfig(BaseModel):
    """The mounts of a sandbox (at least one; mount points may nest, the most specific serving its paths)."""

    mounts: list[Mount] = Field(description="List of directory mounts")

    @model_validator(mode="after")
    def _some_mount(self) -> SandboxConfig:
        if not self.mounts:
            raise ValueError("SandboxConfig requires at least one mount")
        return self
