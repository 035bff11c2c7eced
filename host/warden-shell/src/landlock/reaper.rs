//! What ends a command's process group if Warden itself ends first (killed,
//! or stopped with Ctrl-C): without a PID namespace nothing else would. A
//! small process forked from Warden before the command, outside the
//! command's Landlock domain (which cannot signal it), waits on a pipe. The
//! command's child writes its process group there first thing, before it
//! confines itself and runs anything of its own ([`announce`]), so no moment
//! of the command goes unwatched. Then a byte means the command ended and all
//! is done; the pipe closing without one means Warden is gone, and the group
//! is killed. A pipe closed before any group was written kills nothing.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

pub struct Reaper {
    pid: libc::pid_t,
    tell: Option<OwnedFd>,
}

impl Reaper {
    /// A reaper for the command about to be spawned, which must
    /// [`announce`] itself on [`Reaper::announce_to`]; it watches for as long
    /// as this value lives.
    pub fn start() -> std::io::Result<Reaper> {
        let (listen, tell) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        // SAFETY: the child makes system calls only (read, kill, _exit): no
        // allocation or lock, as a fork of a threaded process requires.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if pid == 0 {
            unsafe {
                // Out of Warden's process group, deaf to the terminal's and a
                // group kill's signals: Ctrl-C must end Warden, not its reaper.
                libc::setpgid(0, 0);
                for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP, libc::SIGTERM, libc::SIGPIPE] {
                    libc::signal(signal, libc::SIG_IGN);
                }
                // Only the listening end: Warden's death closes the other, and
                // no other command's pipe may be kept open by this process.
                libc::close(tell.as_raw_fd());
                let kept = listen.as_raw_fd() as libc::c_uint;
                if kept > 0 {
                    libc::syscall(libc::SYS_close_range, 0, kept - 1, 0);
                }
                libc::syscall(libc::SYS_close_range, kept + 1, libc::c_uint::MAX, 0);
                let mut group = [0u8; 4];
                let mut done = [0u8; 1];
                if read_all(listen.as_raw_fd(), &mut group) {
                    let pgid = libc::pid_t::from_ne_bytes(group);
                    // Never -1 (every process) or 0 (this one's group).
                    if !read_all(listen.as_raw_fd(), &mut done) && pgid > 1 {
                        libc::kill(-pgid, libc::SIGKILL);
                    }
                }
                libc::_exit(0);
            }
        }
        drop(listen);
        Ok(Reaper { pid, tell: Some(tell) })
    }

    /// Where the command's child [`announce`]s itself: Warden's end of the
    /// pipe, open in the child until its exec.
    pub fn announce_to(&self) -> RawFd {
        self.tell.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }
}

/// In the command's child, before anything else: tells the reaper listening
/// on `fd` the child's process group, which the child must lead (a group of
/// its own, made before `pre_exec` runs). System calls only, as a child of a
/// threaded process requires; a reaper already gone fails the spawn.
///
/// # Safety
/// Only in a child between fork and exec, whose signal dispositions are its own.
pub unsafe fn announce(fd: RawFd) -> std::io::Result<()> {
    let failed = || Err(std::io::Error::last_os_error());
    // SAFETY: system calls on integers and on a buffer on this stack.
    unsafe {
        let group = libc::getpgrp();
        if group != libc::getpid() {
            // Not its group's leader: killing `group` would end someone else's.
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        let bytes = group.to_ne_bytes();
        // A dead reaper must fail the spawn (EPIPE), not end the child silently
        // by SIGPIPE, which std restored to its default before `pre_exec`.
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let result = if written == 4 { Ok(()) } else if written < 0 { failed() } else { Err(std::io::Error::from_raw_os_error(libc::EIO)) };
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        result
    }
}

/// Reads exactly `buf.len()` bytes; false on the pipe's end or an error.
unsafe fn read_all(fd: RawFd, buf: &mut [u8]) -> bool {
    let mut got = 0;
    while got < buf.len() {
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        match n {
            n if n > 0 => got += n as usize,
            n if n < 0 && unsafe { *libc::__errno_location() } == libc::EINTR => {}
            _ => return false,
        }
    }
    true
}

impl Drop for Reaper {
    /// The command has ended (its group was killed): the reaper may go.
    fn drop(&mut self) {
        if let Some(tell) = self.tell.take() {
            let _ = rustix::io::write(&tell, &[1]);
        }
        // SAFETY: waits for our own child.
        unsafe { libc::waitpid(self.pid, std::ptr::null_mut(), 0) };
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    use super::*;

    fn state(pid: libc::pid_t) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit(')').next()?.trim_start().chars().next()
    }

    /// `sleep 30` whose child announces itself to `reaper` before exec, as
    /// the Landlock command's child does; leading a group of its own if `own_group`.
    fn announcing_to(reaper: &Reaper, own_group: bool) -> Command {
        let fd = reaper.announce_to();
        let mut sleep = Command::new("sleep");
        sleep.arg("30");
        if own_group {
            sleep.process_group(0);
        }
        // SAFETY: `announce` makes system calls only, in the child.
        unsafe { sleep.pre_exec(move || announce(fd)) };
        sleep
    }

    fn announced_to(reaper: &Reaper) -> Child {
        announcing_to(reaper, true).spawn().unwrap()
    }

    fn killed_within_seconds(group: &mut Child) -> bool {
        let since = Instant::now();
        while group.try_wait().unwrap().is_none() {
            if since.elapsed() > Duration::from_secs(10) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        std::os::unix::process::ExitStatusExt::signal(&group.wait().unwrap()) == Some(libc::SIGKILL)
    }

    #[test]
    fn a_reaper_told_the_command_ended_spares_its_group_and_is_gone() {
        let reaper = Reaper::start().unwrap();
        let mut group = announced_to(&reaper);
        let pid = reaper.pid;
        assert!(matches!(state(pid), Some('R' | 'S')), "the reaper is not watching: {:?}", state(pid));
        drop(reaper);
        assert_eq!(state(pid), None, "the reaper told to go was not reaped");
        std::thread::sleep(Duration::from_millis(50));
        assert!(group.try_wait().unwrap().is_none(), "a reaper told the command ended killed its group");
        group.kill().unwrap();
        group.wait().unwrap();
    }

    #[test]
    fn a_reaper_whose_warden_is_gone_kills_the_group_the_command_announced() {
        let mut reaper = Reaper::start().unwrap();
        let mut group = announced_to(&reaper);
        // The pipe closing without a word is what Warden's death looks like;
        // Warden never told the reaper the group: the command's child did.
        drop(reaper.tell.take());
        assert!(killed_within_seconds(&mut group), "the group outlived Warden's reaper");
    }

    #[test]
    fn a_reaper_that_heard_of_no_group_kills_nothing() {
        let mut bystander = Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let mut reaper = Reaper::start().unwrap();
        let pid = reaper.pid;
        // Three of a group number's four bytes, then Warden gone: nothing to
        // kill. (They alone name the bystander: pids stay below 2^22.)
        let tell = reaper.tell.take().unwrap();
        rustix::io::write(&tell, &bystander.id().to_ne_bytes()[..3]).unwrap();
        drop(tell);
        drop(reaper);
        assert_eq!(state(pid), None, "the reaper did not end");
        std::thread::sleep(Duration::from_millis(50));
        assert!(bystander.try_wait().unwrap().is_none(), "a reaper with no whole group killed one");
        bystander.kill().unwrap();
        bystander.wait().unwrap();
    }

    #[test]
    fn a_reaper_already_gone_fails_the_spawn_rather_than_the_command() {
        let reaper = Reaper::start().unwrap();
        let pid = reaper.pid;
        // SAFETY: signals our own child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        while state(pid) != Some('Z') {
            std::thread::sleep(Duration::from_millis(5));
        }
        let error = announcing_to(&reaper, true).spawn().map(|mut c| c.kill()).expect_err("a command ran with no reaper to end it");
        assert_eq!(error.raw_os_error(), Some(libc::EPIPE));
    }

    #[test]
    fn a_child_that_leads_no_group_of_its_own_is_not_announced() {
        let reaper = Reaper::start().unwrap();
        // Not a group of its own: the child is in this test's group, which must never be the one killed.
        let error = announcing_to(&reaper, false).spawn().map(|mut c| c.kill()).expect_err("a child outside a group of its own was announced");
        assert_eq!(error.raw_os_error(), Some(libc::EINVAL));
    }
}
