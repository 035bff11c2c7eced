//! Is an OS sandbox available here? Asked once, when a shell sandbox starts.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::run::Backend;

/// bwrap by absolute path, so that `PATH` cannot swap it; `WARDEN_BWRAP` overrides it (tests).
pub fn bwrap_path() -> PathBuf {
    std::env::var_os("WARDEN_BWRAP").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/bin/bwrap"))
}

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
    let out = Command::new(&bwrap)
        .args(["--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--proc", "/proc", "--dev", "/dev"])
        .args(["--cap-drop", "ALL", "--", "/bin/true"])
        .env_clear()
        .stdin(Stdio::null())
        .output();
    match out {
        Err(e) => Backend::Unsandboxed { reason: format!("cannot start {}: {e}", bwrap.display()) },
        Ok(out) if out.status.success() => Backend::Bwrap(bwrap),
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr);
            let why = why.lines().next().unwrap_or("it failed without a message").trim().to_owned();
            Backend::Unsandboxed { reason: format!("{} does not work here: {why}", bwrap.display()) }
        }
    }
}
