//! Is an OS sandbox available here? Asked once, when a shell sandbox starts.

use std::path::PathBuf;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

use warden_policy::OsBackend;

use crate::run::Backend;

/// Landlock's least ABI for a command: truncate (3), TCP (4), and the
/// scoping of signals and abstract sockets (6), which keeps a command
/// without a PID namespace from signalling what is not its own.
pub const LANDLOCK_ABI: u32 = crate::landlock::LEAST_ABI;

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
    bwrap_refusal(backend).is_none()
}

/// Why the plainest bwrap sandbox does not start here (bwrap's own words), or `None` when it does.
fn bwrap_refusal(backend: &Backend) -> Option<String> {
    let Backend::Bwrap(bwrap) = backend else { return Some("no bubblewrap".into()) };
    let mut probe = Command::new(bwrap);
    let output = crate::pids::without_inherited_descriptors(&mut probe)
        .args(["--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--proc", "/proc", "--dev", "/dev", "--", "/bin/true"])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match output {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("bwrap failed").trim().to_owned()),
        Err(e) => Some(format!("cannot start {}: {e}", bwrap.display())),
    }
}

/// Which OS sandbox `choice` gives on this host, why, and what it
/// enforces, as `warden check` says it. Runs the plainest bwrap sandbox once.
pub fn explain(choice: OsBackend) -> String {
    let bwrap = match probe() {
        backend @ Backend::Bwrap(_) => bwrap_refusal(&backend).map_or(Ok(()), Err),
        Backend::Unsandboxed { reason } => Err(reason),
        other => return format!("{other:?}"),
    };
    let cap = if !crate::pids::cap_holds() {
        "NO process cap (root, and no cgroup Warden may make)"
    } else {
        "the process cap"
    };
    let erratum = match crate::landlock::errata_fixed() {
        Some(fixed) if fixed & crate::landlock::ERRATUM_DISCONNECTED_DIRECTORIES != 0 => "",
        Some(_) => " (this kernel lacks the fix of Landlock's erratum 3: a folder moved out of a bind mount by a process outside the sandbox may keep rights below it)",
        None => " (this kernel cannot say whether it has the fix of Landlock's erratum 3, about folders moved out of a bind mount)",
    };
    // A backend asked for by name is that one or none: its commands are
    // refused, never run without a sandbox (`ShellSandbox::start`).
    let none = |why: &str| match choice {
        OsBackend::Auto => format!("NONE{why}: commands run WITHOUT an OS sandbox (refused under require_os_sandbox)"),
        OsBackend::Bwrap | OsBackend::Landlock => {
            format!("NONE{why}: commands are refused (the policy asks for this sandbox by name in shell.backend)")
        }
    };
    let landlock = |why: String| match landlock() {
        Ok(Backend::Landlock { abi }) => format!(
            "Landlock ABI {abi}{why}{erratum}: writes only in the writable mounts; file contents read only from the system folders, /proc and the mounts \
             (names elsewhere can be looked up, and listed on the way to a denied path); protected and denied paths kept by folder \
             (nothing new can be made in a folder that holds one); TCP refused unless the network is on, other sockets by seccomp; \
             other processes listed in /proc with their command lines, but not signalled, traced or read; no chmod, chown or extended attributes; \
             a temporary folder of its own as TMPDIR; the group killed when the command or Warden ends; a network allowlist through Warden's proxy, \
             reached from a network namespace of the command's own (loopback alone); {cap}"
        ),
        Err(reason) if why.is_empty() => none(&format!(" ({reason})")),
        Ok(_) | Err(_) => none(&why),
    };
    match (choice, bwrap) {
        (OsBackend::Bwrap | OsBackend::Auto, Ok(())) => format!("bubblewrap ({})", bwrap_path().display()),
        (OsBackend::Bwrap, Err(why)) => none(&format!(" (bubblewrap cannot start here: {why})")),
        (OsBackend::Landlock, _) => landlock(String::new()),
        (OsBackend::Auto, Err(why)) => landlock(format!(" (bubblewrap cannot start here: {why})")),
    }
}
