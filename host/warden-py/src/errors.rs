//! Warden's errors as the Python exceptions of `warden.errors`, carrying the
//! sandbox's exact texts.

use pyo3::prelude::*;
use pyo3::types::PyType;
use warden_fs::{Denial, FsError};
use warden_policy::{DeriveError, PolicyError};
use warden_shell::ShellError;
use warden_wasm::{RunError, ToolError};

/// Any failure of this module, before it becomes a Python exception (which
/// needs the GIL, and work runs without it).
pub enum Failure {
    Fs(FsError),
    Policy(PolicyError),
    Run(RunError),
    Tool(ToolError),
    Shell(ShellError),
    /// A class of `warden.errors` by name, and the message.
    Named(&'static str, String),
}

impl From<FsError> for Failure {
    fn from(e: FsError) -> Failure {
        Failure::Fs(e)
    }
}

impl From<PolicyError> for Failure {
    fn from(e: PolicyError) -> Failure {
        Failure::Policy(e)
    }
}

impl From<RunError> for Failure {
    fn from(e: RunError) -> Failure {
        Failure::Run(e)
    }
}

impl From<ShellError> for Failure {
    fn from(e: ShellError) -> Failure {
        Failure::Shell(e)
    }
}

impl From<Failure> for PyErr {
    fn from(failure: Failure) -> PyErr {
        let (class, message) = match failure {
            Failure::Fs(e) => (fs_class(&e), e.to_string()),
            Failure::Policy(e) => ("PolicyError", e.to_string()),
            Failure::Run(e) => (run_class(&e), e.to_string()),
            Failure::Tool(ToolError::Denied(m)) => ("ToolDeniedError", m),
            Failure::Tool(ToolError::InvalidInput(m)) => ("ToolInputError", format!("invalid input: {m}")),
            Failure::Tool(ToolError::Failed(m)) => ("ToolFailedError", m),
            Failure::Shell(e) => (shell_class(&e), e.to_string()),
            Failure::Named(class, message) => (class, message),
        };
        Python::attach(|py| match py.import("warden.errors").and_then(|m| m.getattr(class)).and_then(|c| Ok(c.cast_into::<PyType>()?)) {
            Ok(class) => PyErr::from_type(class, (message,)),
            Err(e) => e,
        })
    }
}

fn fs_class(e: &FsError) -> &'static str {
    match e {
        FsError::Denied(denial) => match denial {
            Denial::OutsideSandbox { .. } => "PathNotInSandboxError",
            Denial::InvalidPath { .. } => "InvalidPathError",
            Denial::ReadOnly { .. } => "PathNotWritableError",
            Denial::WriteOnly { .. } => "PathNotReadableError",
            Denial::SuffixNotAllowed { .. } => "SuffixNotAllowedError",
            Denial::FileTooLarge { .. } | Denial::ContentTooLarge { .. } => "FileTooLargeError",
            Denial::NeedsApproval { .. } => "ApprovalRequiredError",
            Denial::Declined { .. } => "ApprovalDeniedError",
            Denial::Network(_) => "NetworkDeniedError",
        },
        FsError::NotFound { .. } => "NotFoundError",
        FsError::AlreadyExists { .. } => "AlreadyExistsError",
        FsError::IsADirectory { .. } => "IsAFolderError",
        FsError::NotADirectory { .. } => "NotAFolderError",
        FsError::NotText { .. } => "NotTextError",
        FsError::EditNotFound { .. } | FsError::EditNotUnique { .. } | FsError::EditEmpty { .. } => "EditError",
        FsError::MountRoot { .. } => "MountRootError",
        FsError::Unsupported { .. } => "UnsupportedError",
        FsError::InvalidGlob { .. } => "InvalidGlobError",
        FsError::Derive(DeriveError::Escalation { error, .. }) if error.request.starts_with("write access") => "WriteEscalationError",
        FsError::Derive(DeriveError::Escalation { error, .. }) if error.request.starts_with("read access") => "ReadEscalationError",
        FsError::Derive(DeriveError::Escalation { .. }) => "SandboxPermissionEscalationError",
        FsError::Derive(_) => "DeriveError",
        FsError::Policy(_) => "PolicyError",
        FsError::UnknownWorker { .. } => "UnknownWorkerError",
        FsError::Io { .. } => "SandboxIOError",
    }
}

fn run_class(e: &RunError) -> &'static str {
    match e {
        RunError::Timeout { .. } => "ToolTimeoutError",
        RunError::OutOfFuel { .. } | RunError::MemoryLimit(_) | RunError::OutputLimit(_) => "ToolLimitError",
        RunError::Trap(_) => "ToolTrapError",
        RunError::Load { .. } | RunError::Instantiate(_) => "ToolLoadError",
        RunError::Unenforceable(_) | RunError::Usage(_) => "ToolUsageError",
        RunError::Cancelled => "ToolCancelledError",
    }
}

fn shell_class(e: &ShellError) -> &'static str {
    match e {
        ShellError::SandboxRequired { .. } | ShellError::BackendUnavailable { .. } | ShellError::NoEngine { .. } | ShellError::SandboxSetup { .. } => "OSSandboxUnavailableError",
        ShellError::Spawn(_) | ShellError::Engine(_) => "CommandStartError",
        _ => "CommandPolicyError",
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::Shell(ShellError::Spawn(e))
    }
}
