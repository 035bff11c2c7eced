//! What a sandboxed command may see, worked out from a policy once, for any backend.

use std::path::{Path, PathBuf};

use warden_fs::Sandbox;
use warden_policy::{system_dir_of, Network, Policy};

use crate::error::ShellError;

/// Paths inside every writable mount that stay read-only, whether or not they exist:
/// places where a command could plant code that runs later, outside the sandbox.
pub const PROTECTED: &[&str] = &[
    ".git/hooks",
    ".git/config",
    // The git folders of linked worktrees (and, with .git/config, the
    // commondir beside it: see Shield::build).
    ".git/worktrees",
    ".gitconfig",
    ".gitmodules",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".envrc",
    ".mcp.json",
    ".vscode",
    ".idea",
    // Agents' and editors' settings run commands (Claude Code's hooks, Codex's,
    // Cursor's and Gemini's rules and MCP servers, a dev container's
    // initializeCommand); git runs Husky's hooks (core.hooksPath) and the
    // pre-commit hook runs its config's commands.
    ".claude",
    ".codex",
    ".cursor",
    ".husky",
    ".pre-commit-config.yaml",
    ".devcontainer",
    ".gemini",
];

/// The system's runtime folders, read-only by default (compilers, git and interpreters need them).
pub const SYSTEM_READ: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];

/// One mount as a command sees it: at its host path.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Bind {
    /// Canonical host path, read from the mount's open handle.
    pub host: PathBuf,
    /// The mount's virtual path, for messages.
    pub vpath: String,
    pub writable: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExecPlan {
    /// Ordered so that a deeper bind comes after (and so over) a shallower one.
    pub binds: Vec<Bind>,
    pub read_all: bool,
    /// Host paths inside writable binds that must stay read-only (they may not exist).
    pub protected: Vec<PathBuf>,
    /// Host paths inside binds that must look absent or empty.
    pub denied: Vec<PathBuf>,
    pub network: Network,
    pub allow_unix_sockets: bool,
    pub max_output_bytes: u64,
    /// The first writable bind, else the first bind, else `/`.
    pub default_cwd: PathBuf,
}

impl ExecPlan {
    pub fn new(policy: &Policy, sandbox: &Sandbox) -> Result<ExecPlan, ShellError> {
        let mut binds = Vec::new();
        for mount in sandbox.mounts() {
            let host = handle_path(mount.dir()).unwrap_or_else(|| mount.host_root.clone());
            if mount.rules.writable && (host == Path::new("/") || system_dir_of(&host).is_some()) {
                return Err(ShellError::Policy(format!(
                    "{} is a system folder and cannot be a writable mount for shell commands",
                    mount.path
                )));
            }
            binds.push(Bind { host, vpath: mount.path.to_string(), writable: mount.rules.writable });
        }
        binds.sort_by_key(|b| b.host.components().count());
        let shell = &policy.shell;
        let within = |list: &[String], only_writable: bool| -> Vec<PathBuf> {
            let mut out = Vec::new();
            for entry in list {
                let entry = entry.trim_end_matches('/');
                for bind in binds.iter().filter(|b| b.writable || !only_writable) {
                    let path = if Path::new(entry).is_absolute() { PathBuf::from(entry) } else { bind.host.join(entry) };
                    if path.starts_with(&bind.host) && !out.contains(&path) {
                        out.push(path);
                    }
                }
            }
            out
        };
        let protected_names: Vec<String> =
            PROTECTED.iter().map(|s| s.to_string()).chain(shell.protect.iter().cloned()).collect();
        let default_cwd = binds
            .iter()
            .find(|b| b.writable)
            .or(binds.first())
            .map(|b| b.host.clone())
            .unwrap_or_else(|| PathBuf::from("/"));
        let mut denied = within(&shell.deny_read, false);
        if shell.read_all {
            // The whole host is visible: absolute entries outside the mounts
            // are hidden too, and always Warden's own folder (its tokens, the
            // podman service's socket).
            let outside = shell.deny_read.iter().map(|e| PathBuf::from(e.trim_end_matches('/'))).filter(|p| p.is_absolute());
            for path in outside.chain([warden_policy::warden_folder()]) {
                if !denied.contains(&path) {
                    denied.push(path);
                }
            }
        }
        Ok(ExecPlan {
            protected: within(&protected_names, true),
            denied,
            binds,
            read_all: shell.read_all,
            network: policy.network.clone(),
            allow_unix_sockets: shell.allow_unix_sockets,
            max_output_bytes: shell.max_output_bytes,
            default_cwd,
        })
    }

    /// Writable paths as a command sees them, for notes: `/portfolio (/home/u/p)`.
    pub fn writable_list(&self) -> String {
        let list: Vec<String> =
            self.binds.iter().filter(|b| b.writable).map(|b| format!("{} ({})", b.vpath, b.host.display())).collect();
        if list.is_empty() { "(none)".to_owned() } else { list.join(", ") }
    }
}

/// Where an open directory handle really is, from the kernel, not from a joined string.
fn handle_path(dir: &cap_std::fs::Dir) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd())).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        None
    }
}
