//! Watching a running command on the calling thread: its stdout and stderr
//! read as they come (kept up to a cap), its end, and its time limit, with one
//! `poll` over the two pipes and a pidfd. When it ends or runs out of time,
//! its whole process group is killed; output still buffered is read after.

use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, ChildStderr, ChildStdout, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::process::{kill_process_group, waitid, Pid, Signal, WaitId, WaitIdOptions};

use crate::output::Captured;

/// How long output may still arrive once the command's group is dead: a
/// process outside the group (possible only without an OS sandbox) may hold
/// the pipes open for ever.
const DRAIN_GRACE: Duration = Duration::from_millis(200);

/// How often a cancel flag is looked at while nothing else happens.
const CANCEL_CHECK: Duration = Duration::from_millis(20);

pub struct Watched {
    pub status: ExitStatus,
    pub stdout: Captured,
    pub stderr: Captured,
    pub timed_out: bool,
    pub cancelled: bool,
}

/// A spawned command's process group, killed when this value is dropped: an
/// error or a panic between the spawn and the command's end leaves nothing of
/// it running. [`watch`] kills the group itself, before it reaps the leader
/// (whose pid keeps the group's number from being given to another group).
pub struct Group {
    pgid: Option<Pid>,
    /// What kills the group if Warden dies first (Landlock): told the
    /// command has ended before the leader is reaped, like the group's kill.
    reaper: Option<crate::landlock::Reaper>,
}

impl Group {
    /// The group `child` leads (spawned with `process_group(0)`).
    pub fn of(child: &Child) -> Group {
        Group { pgid: Some(Pid::from_child(child)), reaper: None }
    }

    pub fn watched_by(&mut self, reaper: crate::landlock::Reaper) {
        self.reaper = Some(reaper);
    }

    /// Ends the group before its command was let run, and reaps `child`, its leader.
    pub fn abandon(mut self, mut child: Child) {
        self.kill();
        // Reaped, the leader's number may go to another group: not killed again on drop.
        self.pgid = None;
        let _ = child.wait();
    }

    fn kill(&self) {
        if let Some(pgid) = self.pgid {
            let _ = kill_process_group(pgid, Signal::KILL);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Watches `child` (the leader of `group`) until it ends, runs out of
/// `timeout`, or `cancel` is set.
pub fn watch(mut child: Child, mut group: Group, timeout: Duration, cap: u64, cancel: Option<&AtomicBool>) -> std::io::Result<Watched> {
    let pgid = Pid::from_child(&child);
    let deadline = Instant::now() + timeout;
    let pidfd: Option<OwnedFd> = rustix::process::pidfd_open(pgid, rustix::process::PidfdFlags::empty()).ok();
    let mut streams = [Stream::new(child.stdout.take()), Stream::new(child.stderr.take())];
    let mut ended: Option<Instant> = None;
    let (mut timed_out, mut cancelled) = (false, false);
    loop {
        let now = Instant::now();
        let stop = cancel.is_some_and(|c| c.load(Ordering::Relaxed));
        if ended.is_none() && (stop || now >= deadline || exited(pgid)?) {
            let running = !exited(pgid)?;
            cancelled = stop && running;
            timed_out = !cancelled && now >= deadline && running;
            // Whatever the command left behind in its group goes too.
            group.kill();
            ended = Some(now);
        }
        let open: Vec<usize> = (0..2).filter(|&i| streams[i].is_open()).collect();
        let limit = match ended {
            Some(at) if open.is_empty() || now >= at + DRAIN_GRACE => break,
            Some(at) => at + DRAIN_GRACE - now,
            // Without a pidfd, look at the child now and then.
            None if pidfd.is_none() => (deadline - now).min(Duration::from_millis(10)),
            None if cancel.is_some() => (deadline - now).min(CANCEL_CHECK),
            None => deadline - now,
        };
        let mut fds: Vec<PollFd<'_>> = open.iter().map(|&i| PollFd::from_borrowed_fd(streams[i].pipe().as_fd(), PollFlags::IN)).collect();
        if let (Some(pidfd), None) = (&pidfd, ended) {
            fds.push(PollFd::new(pidfd, PollFlags::IN));
        }
        let timeout = Timespec::try_from(limit).unwrap_or(Timespec { tv_sec: 1, tv_nsec: 0 });
        match poll(&mut fds, Some(&timeout)) {
            Err(rustix::io::Errno::INTR) | Ok(_) => {}
            Err(e) => return Err(e.into()),
        }
        let ready: Vec<bool> = fds.iter().take(open.len()).map(|f| !f.revents().is_empty()).collect();
        drop(fds);
        for (&i, ready) in open.iter().zip(ready) {
            if ready {
                streams[i].read_some(cap);
            }
        }
    }
    // Killed above: reaping the leader now frees the group's number.
    group.pgid = None;
    group.reaper = None;
    let status = child.wait()?;
    let [out, err] = streams;
    Ok(Watched { status, stdout: out.captured.finish(cap), stderr: err.captured.finish(cap), timed_out, cancelled })
}

/// One of the command's output pipes, read until it closes.
struct Stream {
    pipe: Option<Box<dyn ReadFd>>,
    captured: Captured,
}

trait ReadFd: Read + AsFd {}
impl ReadFd for ChildStdout {}
impl ReadFd for ChildStderr {}

impl Stream {
    fn new(pipe: Option<impl ReadFd + 'static>) -> Stream {
        Stream { pipe: pipe.map(|p| Box::new(p) as Box<dyn ReadFd>), captured: Captured::new() }
    }

    fn is_open(&self) -> bool {
        self.pipe.is_some()
    }

    fn pipe(&self) -> &dyn ReadFd {
        self.pipe.as_deref().expect("an open stream")
    }

    /// Reads what is there; a closed or failed pipe is done.
    fn read_some(&mut self, cap: u64) {
        let mut chunk = [0u8; 64 * 1024];
        match self.pipe.as_mut().map(|p| p.read(&mut chunk)) {
            Some(Ok(n)) if n > 0 => self.captured.push(&chunk[..n], cap),
            Some(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
            _ => self.pipe = None,
        }
    }
}

/// Whether the child `pid` has ended, without reaping it.
fn exited(pid: Pid) -> std::io::Result<bool> {
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    Ok(waitid(WaitId::Pid(pid), options)?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn an_abandoned_group_is_killed_and_its_leader_reaped() {
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "sleep 100 & sleep 100"]).process_group(0);
        let child = cmd.spawn().unwrap();
        let pid = child.id();
        let group = Group::of(&child);
        let started = Instant::now();
        group.abandon(child);
        assert!(started.elapsed() < Duration::from_secs(10), "waited for the command instead of killing it");
        // Neither running nor a zombie: reaped.
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        // Its background child was in the group too (once killed, reaped by init).
        let in_group = || std::process::Command::new("pgrep").arg("-g").arg(pid.to_string()).output().unwrap().stdout;
        while !in_group().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(10), "the group's other process still runs");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
