//! A cap on the number of processes a command may have, so that a fork bomb
//! stops at the cap: a cgroup (v1 `pids` or v2) when Warden may create one,
//! else `RLIMIT_NPROC` (which the kernel does not apply to root).

use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

pub const MAX_PIDS: u64 = 512;

/// A cgroup made for one command, removed on drop.
pub struct PidsCgroup {
    dir: PathBuf,
    /// `cgroup.procs`, opened before the fork so the child only writes.
    pub procs: OwnedFd,
}

impl PidsCgroup {
    pub fn create() -> Option<PidsCgroup> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("warden-{}-{n}", std::process::id());
        for base in ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"] {
            let dir = PathBuf::from(base).join(&name);
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            let limited = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("pids.max"))
                .and_then(|mut f| f.write_all(MAX_PIDS.to_string().as_bytes()));
            let procs = std::fs::OpenOptions::new().write(true).open(dir.join("cgroup.procs"));
            match (limited, procs) {
                (Ok(()), Ok(procs)) => return Some(PidsCgroup { dir, procs: procs.into() }),
                _ => {
                    let _ = std::fs::remove_dir(&dir);
                }
            }
        }
        None
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // Empty once every process in it has been reaped, which may take a
        // moment after the command ends: removed off the caller's path.
        let dir = std::mem::take(&mut self.dir);
        if std::fs::remove_dir(&dir).is_ok() {
            return;
        }
        std::thread::spawn(move || {
            for _ in 0..100 {
                std::thread::sleep(std::time::Duration::from_millis(10));
                if std::fs::remove_dir(&dir).is_ok() {
                    return;
                }
            }
        });
    }
}
