//! What ends a command's process group if Warden itself ends first (killed,
//! or stopped with Ctrl-C): without a PID namespace nothing else would. A
//! small process forked from Warden, outside the command's Landlock domain
//! (which cannot signal it), waits on a pipe: a byte means the command ended
//! and all is done; the pipe closing without one means Warden is gone, and
//! the group is killed.

use std::os::fd::{AsRawFd, OwnedFd};

pub struct Reaper {
    pid: libc::pid_t,
    tell: Option<OwnedFd>,
}

impl Reaper {
    /// Watches process group `pgid` for as long as this value lives.
    pub fn watch(pgid: libc::pid_t) -> std::io::Result<Reaper> {
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
                let mut byte = 0u8;
                let read = loop {
                    let n = libc::read(listen.as_raw_fd(), (&mut byte as *mut u8).cast(), 1);
                    if n >= 0 || *libc::__errno_location() != libc::EINTR {
                        break n;
                    }
                };
                if read != 1 {
                    libc::kill(-pgid, libc::SIGKILL);
                }
                libc::_exit(0);
            }
        }
        drop(listen);
        Ok(Reaper { pid, tell: Some(tell) })
    }
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
    use std::time::{Duration, Instant};

    use super::*;

    fn state(pid: libc::pid_t) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit(')').next()?.trim_start().chars().next()
    }

    #[test]
    fn a_reaper_told_the_command_ended_spares_its_group_and_is_gone() {
        let mut group = std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let reaper = Reaper::watch(group.id() as i32).unwrap();
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
    fn a_reaper_whose_warden_is_gone_kills_the_group() {
        let mut group = std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let mut reaper = Reaper::watch(group.id() as i32).unwrap();
        // The pipe closing without a word is what Warden's death looks like.
        drop(reaper.tell.take());
        let since = Instant::now();
        while group.try_wait().unwrap().is_none() {
            assert!(since.elapsed() < Duration::from_secs(10), "the group outlived Warden's reaper");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&group.wait().unwrap()), Some(libc::SIGKILL));
    }
}
