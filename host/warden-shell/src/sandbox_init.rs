//! The init of a bubblewrap sandbox: the process bwrap clones into the new
//! PID namespace, whose PID its first `--json-status-fd` report gives
//! (`child-pid`). bwrap may report and exit as soon as the command does,
//! while the kernel is still killing what else ran in the sandbox; only
//! when the init is gone is the namespace empty. Warden waits for that
//! before it lets go of what the sandbox held (the placeholders' locks):
//! a process of the sandbox still running could otherwise write where a
//! bind was just lifted.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};

/// How long the sandbox may take to die once its command has ended.
const PATIENCE: Duration = Duration::from_secs(5);

/// The sandbox's init, and what was read from the status pipe to find it.
pub struct SandboxInit {
    pidfd: Option<OwnedFd>,
    pub read: Vec<u8>,
}

impl SandboxInit {
    /// Reads the status pipe until bwrap reports its child (within `patience`):
    /// a pidfd for it. None when bwrap ended, or said nothing, first.
    pub fn find(status: &OwnedFd, patience: Duration) -> SandboxInit {
        let until = Instant::now() + patience;
        let mut read = Vec::new();
        while !read.contains(&b'}') {
            let left = until.saturating_duration_since(Instant::now());
            let timeout = Timespec { tv_sec: left.as_secs() as i64, tv_nsec: i64::from(left.subsec_nanos()) };
            let mut fds = [PollFd::new(status, PollFlags::IN)];
            if left.is_zero() || poll(&mut fds, Some(&timeout)).unwrap_or(0) == 0 {
                break;
            }
            let mut chunk = [0u8; 256];
            match rustix::io::read(status, &mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => read.extend_from_slice(&chunk[..n]),
            }
        }
        let pid = child_pid(&read).and_then(Pid::from_raw);
        let pidfd = pid.and_then(|pid| pidfd_open(pid, PidfdFlags::empty()).ok());
        SandboxInit { pidfd, read }
    }

    /// Waits until the init is gone (killing it if it outstays [`PATIENCE`]):
    /// then no process of the sandbox runs.
    pub fn wait_gone(&self) {
        let Some(pidfd) = &self.pidfd else { return };
        if !exited_within(pidfd, PATIENCE) {
            let _ = pidfd_send_signal(pidfd, Signal::KILL);
            exited_within(pidfd, PATIENCE);
        }
    }
}

fn exited_within(pidfd: &OwnedFd, wait: Duration) -> bool {
    let timeout = Timespec { tv_sec: wait.as_secs() as i64, tv_nsec: i64::from(wait.subsec_nanos()) };
    let mut fds = [PollFd::new(pidfd, PollFlags::IN)];
    poll(&mut fds, Some(&timeout)).is_ok_and(|n| n > 0)
}

/// The `child-pid` of bwrap's first report (`{ "child-pid": 1234 }`).
fn child_pid(report: &[u8]) -> Option<i32> {
    let text = std::str::from_utf8(report).ok()?;
    let after = text.split("\"child-pid\"").nth(1)?;
    let digits: String = after.trim_start_matches([' ', ':']).chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_pid_is_read_from_bwraps_first_report() {
        assert_eq!(child_pid(b"{ \"child-pid\": 4242 }\n"), Some(4242));
        assert_eq!(child_pid(b"{\"child-pid\":17}"), Some(17));
        assert_eq!(child_pid(b"{ \"exit-code\": 1 }"), None);
        assert_eq!(child_pid(b""), None);
    }

    #[test]
    fn the_wait_ends_only_once_the_init_is_gone() {
        let mut init = std::process::Command::new("sleep").arg("0.4").spawn().unwrap();
        let (read, write) = rustix::pipe::pipe().unwrap();
        rustix::io::write(&write, format!("{{ \"child-pid\": {} }}\n", init.id()).as_bytes()).unwrap();
        let found = SandboxInit::find(&read, Duration::from_secs(5));
        assert!(found.pidfd.is_some());
        let started = Instant::now();
        found.wait_gone();
        assert!(started.elapsed() >= Duration::from_millis(300), "returned while it ran");
        assert!(init.try_wait().unwrap().is_some());
        // bwrap gone before it reported: nothing to wait for.
        drop(write);
        let (read, write) = rustix::pipe::pipe().unwrap();
        drop(write);
        assert!(SandboxInit::find(&read, Duration::from_secs(5)).pidfd.is_none());
    }
}
