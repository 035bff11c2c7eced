//! Is an OS sandbox available here? Asked once, when a shell sandbox starts.

use std::path::PathBuf;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

use warden_policy::OsBackend;

use crate::run::Backend;

/// Landlock's least ABI for a command: truncate (3), TCP (4), and the
/// scoping of signals and abstract sockets (6), which keeps a command
/// without a PID namespace from signalling what is not its own.
pub const LANDLOCK_ABI: u32 = 6;

/// bwrap by absolute path, so that `PATH` cannot swap it; `WARDEN_BWRAP` overrides it (tests).
pub fn bwrap_path() -> PathBuf {
    std::env::var_os("WARDEN_BWRAP").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/bin/bwrap"))
}

/// The backend `choice` gives on this host: for `auto`, bubblewrap if it can
/// run here, else Landlock, else none (which the caller refuses under
/// `require_os_sandbox`, and otherwise reports on every result).
pub fn probe_for(choice: OsBackend) -> Backend {
    match choice {
        OsBackend::Bwrap => probe(),
        OsBackend::Landlock => landlock().unwrap_or_else(|reason| Backend::Unsandboxed { reason }),
        OsBackend::Auto => match probe() {
            Backend::Unsandboxed { reason } => landlock().unwrap_or_else(|why| Backend::Unsandboxed { reason: format!("{reason}; {why}") }),
            backend => backend,
        },
    }
}

/// Landlock, if this kernel offers enough of it.
pub fn landlock() -> Result<Backend, String> {
    match crate::landlock::abi() {
        0 => Err("this kernel has no Landlock".into()),
        abi if abi < LANDLOCK_ABI => Err(format!("this kernel's Landlock is ABI {abi}; Warden needs ABI {LANDLOCK_ABI} (Linux 6.12)")),
        abi => Ok(Backend::Landlock { abi }),
    }
}

/// A cheap check, made at start: is there a bwrap to run, and may this user
/// make the namespaces it needs? Whether bwrap really works here is learned
/// from the first command's `--json-status-fd` report, without a probe spawn.
pub fn probe() -> Backend {
    if cfg!(target_os = "macos") {
        let exec = PathBuf::from(crate::seatbelt::SANDBOX_EXEC);
        return if exec.exists() {
            Backend::Seatbelt(exec)
        } else {
            Backend::Unsandboxed { reason: format!("{} is missing", exec.display()) }
        };
    }
    let bwrap = bwrap_path();
    match std::fs::metadata(&bwrap) {
        Err(e) => return Backend::Unsandboxed { reason: format!("cannot start {}: {e}", bwrap.display()) },
        Ok(m) if m.permissions().mode() & 0o111 == 0 => {
            return Backend::Unsandboxed { reason: format!("{} is not executable", bwrap.display()) };
        }
        Ok(_) => {}
    }
    if !rustix::process::geteuid().is_root() && !user_namespaces_allowed() {
        return Backend::Unsandboxed { reason: "user namespaces are disabled on this system".into() };
    }
    Backend::Bwrap(bwrap)
}

fn user_namespaces_allowed() -> bool {
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_owned());
    read("/proc/sys/user/max_user_namespaces").is_none_or(|n| n != "0")
        && read("/proc/sys/kernel/unprivileged_userns_clone").is_none_or(|n| n != "0")
}

/// Whether the plainest bwrap sandbox starts here.
pub(crate) fn bwrap_works(backend: &Backend) -> bool {
    let Backend::Bwrap(bwrap) = backend else { return false };
    Command::new(bwrap)
        .args(["--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--proc", "/proc", "--dev", "/dev", "--", "/bin/true"])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
