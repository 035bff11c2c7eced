"""Warden's errors. Each one's text (``str(error)``) is the sandbox's own,
worded for a language model: virtual paths only, and what *is* allowed.

Refusals subclass the builtin :class:`PermissionError`, missing files
:class:`FileNotFoundError`, and so on, so that code which catches those
keeps working.
"""

from __future__ import annotations


class SandboxError(Exception):
    """Any error Warden raises."""


# Refusals by the sandbox.
class PathNotInSandboxError(SandboxError, PermissionError):
    """The path lies outside every readable mount (``..``, absolute host paths, ``~``, symlinks out)."""


class InvalidPathError(PathNotInSandboxError):
    """The string is no usable virtual path (a NUL byte, ``..`` above the root, too long)."""


class PathNotWritableError(SandboxError, PermissionError):
    """The path may be read, not written."""


class PathNotReadableError(SandboxError, PermissionError):
    """The path may be written, not read (a folder given in ``allow_write`` alone)."""


class SuffixNotAllowedError(SandboxError, PermissionError):
    """The mount allows other file suffixes only."""


class FileTooLargeError(SandboxError):
    """The file (or the content to write) is over the mount's ``max_file_bytes``."""


class ApprovalRequiredError(SandboxError, PermissionError):
    """The access needs a person's approval and no approver could be asked."""


class ApprovalDeniedError(SandboxError, PermissionError):
    """The approver was asked and said no."""


class NetworkDeniedError(SandboxError, PermissionError):
    """A connection the sandbox's network does not allow."""


class SandboxPermissionEscalationError(SandboxError, PermissionError):
    """A derived sandbox asked for more than its parent has."""


class WriteEscalationError(SandboxPermissionEscalationError, PathNotWritableError):
    """A derived sandbox asked to write where its parent cannot (a path not writable, too)."""


class ReadEscalationError(SandboxPermissionEscalationError, PathNotInSandboxError):
    """A derived sandbox asked to read where its parent cannot (a path outside its sandbox, too)."""


class MountRootError(SandboxError, PermissionError):
    """The operation would remove or replace a mount itself."""


# Requests that cannot be done as asked.
class NotFoundError(SandboxError, FileNotFoundError):
    """No such file or folder."""


class AlreadyExistsError(SandboxError, FileExistsError):
    """The destination exists already."""


class IsAFolderError(SandboxError, IsADirectoryError):
    """A file operation on a folder."""


class NotAFolderError(SandboxError, NotADirectoryError):
    """A folder operation on a file."""


class NotTextError(SandboxError, ValueError):
    """The file is not UTF-8 text; read it with ``read_bytes``."""


class EditError(SandboxError, ValueError):
    """The text to replace is missing, empty, or found more than once."""


class UnsupportedError(SandboxError, OSError):
    """An operation the sandbox does not do on this kind of file."""


class InvalidGlobError(SandboxError, ValueError):
    """A listing's glob pattern does not parse."""


class SandboxIOError(SandboxError, OSError):
    """Any other failure of the host's filesystem (the text carries no host path)."""


# Policies and derivations.
class PolicyError(SandboxError, ValueError):
    """An invalid policy (with the file, line and column where it has them)."""


class UnknownWorkerError(PolicyError):
    """The policy defines no worker of that name."""


class DeriveError(SandboxError, ValueError):
    """A derivation request that does not make sense (a missing entry, readonly with writes)."""


class AuditLogError(SandboxError, OSError):
    """The audit log cannot be opened or written: nothing was granted."""


# Component tools.
class ToolError(SandboxError):
    """A component tool's call failed."""


class ToolDeniedError(ToolError, PermissionError):
    """The tool was refused by the sandbox (the text is the sandbox's)."""


class ToolInputError(ToolError, ValueError):
    """The input is not JSON, or not what the tool takes."""


class ToolFailedError(ToolError):
    """The tool reported a failure of its own."""


class ToolTimeoutError(ToolError, TimeoutError):
    """The call ran past its time limit and was stopped."""


class ToolLimitError(ToolError):
    """The call ran out of fuel, memory or output and was stopped."""


class ToolTrapError(ToolError):
    """The component trapped."""


class ToolLoadError(ToolError, OSError):
    """The component cannot be read, compiled or linked."""


class ToolUsageError(ToolError, ValueError):
    """A call the runtime cannot make as asked (a command, not a tool; a bad limit)."""


class ToolCancelledError(ToolError):
    """The call was cancelled."""


# Native commands.
class CommandError(SandboxError):
    """A command could not be run in the OS sandbox."""


class OSSandboxUnavailableError(CommandError):
    """No OS sandbox works here and the policy requires one, or its container engine is missing."""


class CommandStartError(CommandError, OSError):
    """The command (or its container) could not be started."""


class SandboxGoneError(CommandError):
    """The kept sandbox named is not running (stopped, removed, or its engine gone)."""


class CommandRefusedError(CommandError, PermissionError):
    """The policy's command rules refused the command (forbid), a person declined it,
    or it needs a person's approval and nobody could be asked. It never ran."""


class CommandPolicyError(CommandError, ValueError):
    """The policy or the request does not allow the command to be run (e.g. a mount that asks first)."""
