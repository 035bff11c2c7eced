//! Why a shell command could not be run.

#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    #[error("{0}")]
    Policy(String),
    /// No OS sandbox, and the policy requires one.
    #[error("no OS sandbox is available ({reason}), and the policy sets require_os_sandbox: true; the command was not run")]
    SandboxRequired { reason: String },
    /// The policy names a backend (`bwrap`, `landlock`) that cannot run here; nothing ran.
    #[error("the policy asks for the {backend} sandbox (shell.backend), which is not available here ({reason}); the command was not run")]
    BackendUnavailable { backend: &'static str, reason: String },
    /// bwrap works here, but not for this command's mounts; nothing ran.
    #[error("the sandbox for this command could not be set up ({reason}); the command was not run")]
    SandboxSetup { reason: String },
    #[error("cannot run the command: {0}")]
    Spawn(#[from] std::io::Error),
    /// A protected or denied path that a bind mount cannot cover; nothing ran.
    #[error("{0}")]
    Unprotectable(String),
    /// No container engine answered; `tried` says which and why.
    #[error("no container engine works here, and the policy asks for `backend: container` (never replaced by another sandbox): {tried}")]
    NoEngine { tried: String },
    /// The container engine refused or failed a request.
    #[error("{0}")]
    Engine(String),
    #[error("--cwd {path}: {reason}")]
    Cwd { path: String, reason: String },
}
