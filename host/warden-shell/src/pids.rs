//! A cap on the number of processes a sandbox's commands may have, so that a
//! fork bomb stops at the cap: a cgroup when Warden may create one (root),
//! else `RLIMIT_NPROC` (which the kernel does not apply to root).
//!
//! Every command of a sandbox is spawned by one thread of its own, which makes
//! the sandbox's cgroup when the sandbox starts (while the caller goes on), and
//! then, by the kind of cgroup:
//! - cgroup v1: the thread joins it by writing `0` to `tasks`. That moves the
//!   thread alone, which the kernel does without the global lock a
//!   `cgroup.procs` write takes (and the RCU grace period that lock waits for,
//!   10–20 ms here). Commands are then born inside, with `posix_spawn` in
//!   Warden's own programs: no page tables copied (a Landlock command has
//!   steps of its own between fork and exec, so std forks for it).
//! - cgroup v2 keeps a process's threads together: each child joins by writing
//!   `0` to `cgroup.procs` between fork and exec.
//! - no cgroup: each child sets `RLIMIT_NPROC` between fork and exec.
//!
//! No command gets a descriptor its sandbox does not hand it. Warden's own
//! programs make every other descriptor close-on-exec when they start
//! ([`close_inherited_descriptors_on_exec`]) and again before each
//! `posix_spawn`, which makes a sandbox's inheritable only under a lock that
//! every other one takes. Any other command (in a library's host, or under
//! cgroup v2 or no cgroup) makes all its descriptors close-on-exec between
//! fork and exec, but the standard three and its sandbox's. The rule that
//! makes the `posix_spawn` path hold: Warden's programs open every
//! descriptor close-on-exec (a thread opening one without, between the
//! sweep and the spawn, would pass it on).

use std::io::{self, Write};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

pub const MAX_PIDS: u64 = 512;
const PREFIX: &str = "warden-";

type Request = (Command, Vec<RawFd>, mpsc::Sender<io::Result<Child>>);

/// A sandbox's process cap, and the thread that spawns its commands under it.
pub struct ProcessCap {
    requests: Option<mpsc::Sender<Request>>,
    thread: Option<JoinHandle<()>>,
    /// Set by the spawner thread once it knows: 1 the cap holds, 2 it does not.
    in_force: Arc<AtomicU8>,
}

impl ProcessCap {
    pub fn start() -> io::Result<ProcessCap> {
        let (requests, incoming) = mpsc::channel::<Request>();
        let in_force = Arc::new(AtomicU8::new(0));
        let told = Arc::clone(&in_force);
        let thread = std::thread::Builder::new().name("warden-spawner".into()).spawn(move || {
            let cgroup = PidsCgroup::create();
            told.store(if cgroup.is_some() || !exempt_from_rlimit_nproc() { 1 } else { 2 }, Ordering::Relaxed);
            // Where this thread is now, to return to before the cgroup is removed.
            let home = cgroup.as_ref().filter(|c| c.v1).and_then(|_| own_v1_tasks());
            let joined = home.is_some() && cgroup.as_ref().is_some_and(|c| rustix::io::write(&c.join, b"0").is_ok());
            for (cmd, inherit, reply) in incoming {
                let join = match &cgroup {
                    Some(_) if joined => Join::AsItsParent,
                    Some(c) => Join::Cgroup(c.join.as_raw_fd()),
                    None => Join::Rlimit,
                };
                let child = match join {
                    Join::AsItsParent if STARTED_CLEAN.load(Ordering::Relaxed) => spawn_inheriting(cmd, &inherit),
                    join => spawn_sandboxed(cmd, inherit, join),
                };
                let _ = reply.send(child);
            }
            if let (true, Some(home)) = (joined, &home) {
                let _ = rustix::io::write(home, b"0");
            }
        })?;
        Ok(ProcessCap { requests: Some(requests), thread: Some(thread), in_force })
    }

    /// Whether the cap holds for the commands spawned: not for root with no
    /// cgroup of its own, which the kernel exempts from `RLIMIT_NPROC`.
    /// Known once a command has been spawned; `true` until then.
    pub fn in_force(&self) -> bool {
        self.in_force.load(Ordering::Relaxed) != 2
    }

    /// Spawns `cmd` under the cap; `inherit` are descriptors (close-on-exec
    /// here) that the child must keep open under the same numbers.
    pub fn spawn(&self, cmd: Command, inherit: Vec<RawFd>) -> io::Result<Child> {
        self.spawn_soon(cmd, inherit)?.wait()
    }

    /// Hands `cmd` to the spawner thread and returns at once, so that the
    /// caller can go on while it is spawned. `inherit` must stay open until
    /// [`Spawning::wait`] has returned.
    pub fn spawn_soon(&self, cmd: Command, inherit: Vec<RawFd>) -> io::Result<Spawning> {
        let (reply, answer) = mpsc::channel();
        self.requests.as_ref().ok_or_else(spawner_gone)?.send((cmd, inherit, reply)).map_err(|_| spawner_gone())?;
        Ok(Spawning(answer))
    }
}

/// A command the spawner thread is spawning.
pub struct Spawning(mpsc::Receiver<io::Result<Child>>);

impl Spawning {
    /// The command, once spawned.
    pub fn wait(self) -> io::Result<Child> {
        self.0.recv().map_err(|_| spawner_gone())?
    }
}

fn spawner_gone() -> io::Error {
    io::Error::other("the spawner thread is gone")
}

impl Drop for ProcessCap {
    fn drop(&mut self) {
        drop(self.requests.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Set once the program's `main` has made the descriptors it started with close-on-exec.
static STARTED_CLEAN: AtomicBool = AtomicBool::new(false);

/// For Warden's own programs alone, which need no descriptor inheritable:
/// makes every descriptor but the standard three close-on-exec, now and
/// before each command is spawned, so that none reaches a command. Its
/// commands can then be spawned without a fork (`posix_spawn`, where the
/// cgroup allows). A library's host, which does not call this, keeps its
/// descriptors: each command makes them close-on-exec in the child instead,
/// between fork and exec.
#[doc(hidden)]
pub fn close_inherited_descriptors_on_exec() {
    close_on_exec_from(3);
    STARTED_CLEAN.store(true, Ordering::Relaxed);
}

/// Held while a sandbox's descriptors are inheritable in this process (for a
/// `posix_spawn`): another sandbox's command spawned the same way then would
/// get them, and could read this command's bwrap options before its bwrap does.
static INHERITABLE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `posix_spawn`s `cmd` (std does, with no code to run in the child) with
/// `inherit` open in it, in Warden's own program: every other descriptor is
/// made close-on-exec here first, under [`INHERITABLE`], which another
/// sandbox's spawn takes to make its own inheritable.
fn spawn_inheriting(mut cmd: Command, inherit: &[RawFd]) -> io::Result<Child> {
    let _inheritable = INHERITABLE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // Again at each spawn: this is Warden's own program, which needs no
    // descriptor inheritable, and one made so since it started must not reach the command.
    close_on_exec_from(3);
    let set = |cloexec: bool| -> io::Result<()> {
        for &fd in inherit {
            // SAFETY: the caller keeps `fd` open until the spawn returns.
            let fd = unsafe { BorrowedFd::borrow_raw(fd) };
            let flags = if cloexec { rustix::io::FdFlags::CLOEXEC } else { rustix::io::FdFlags::empty() };
            rustix::io::fcntl_setfd(fd, flags)?;
        }
        Ok(())
    };
    if let Err(e) = set(false) {
        let _ = set(true);
        return Err(e);
    }
    let child = cmd.spawn();
    if let Err(e) = set(true) {
        // Left inheritable, they would reach the next spawn of the process: this one does not run.
        if let Ok(mut child) = child {
            let _ = child.kill();
            let _ = child.wait();
        }
        return Err(e);
    }
    child
}

/// How a command joins the sandbox's process cap.
enum Join {
    /// Born inside: the spawner thread has joined the cgroup (v1).
    AsItsParent,
    /// Writes `0` to this `cgroup.procs` (v2).
    Cgroup(RawFd),
    /// Sets `RLIMIT_NPROC` (no cgroup).
    Rlimit,
}

/// Forks; the child makes every descriptor close-on-exec but the standard
/// three and `inherit` (which it makes inheritable), joins the cap by
/// `join`, then execs. Every descriptor of this process is made
/// close-on-exec in the child, not only Warden's: one that the program
/// embedding Warden left inheritable (a file or socket outside every mount),
/// or another sandbox's made inheritable for its spawn, would otherwise
/// reach the command.
fn spawn_sandboxed(mut cmd: Command, inherit: Vec<RawFd>, join: Join) -> io::Result<Child> {
    // SAFETY: only system calls run between fork and exec here: no allocation, no locks.
    unsafe {
        cmd.pre_exec(move || {
            close_on_exec_from(3);
            for &fd in &inherit {
                rustix::io::fcntl_setfd(BorrowedFd::borrow_raw(fd), rustix::io::FdFlags::empty())?;
            }
            match join {
                Join::AsItsParent => {}
                Join::Cgroup(fd) => {
                    rustix::io::write(BorrowedFd::borrow_raw(fd), b"0")?;
                }
                Join::Rlimit => {
                    let limit = rustix::process::Rlimit { current: Some(MAX_PIDS), maximum: Some(MAX_PIDS) };
                    let _ = rustix::process::setrlimit(rustix::process::Resource::Nproc, limit);
                }
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// Makes every descriptor from `first` up close-on-exec: `close_range(2)`;
/// before Linux 5.11 (and off Linux), each one `/proc/self/fd` lists, or,
/// without `/proc`, each number below the open-file limits (at most 2^20,
/// the kernel's default ceiling). System calls only, into a buffer on the
/// stack: it runs between fork and exec.
fn close_on_exec_from(first: RawFd) {
    let set = |fd: RawFd| {
        // SAFETY: F_SETFD on a number that may not be open: EBADF then, and nothing else.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    };
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range with CLOSE_RANGE_CLOEXEC closes nothing; it sets a flag.
        let done = unsafe { libc::syscall(libc::SYS_close_range, first as libc::c_uint, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC) };
        if done == 0 {
            return;
        }
        if each_listed(first, set) {
            return;
        }
    }
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let highest = [limit.current, limit.maximum].into_iter().map(|l| l.unwrap_or(u64::MAX)).max().unwrap_or(u64::MAX).min(1 << 20);
    (first..RawFd::try_from(highest).unwrap_or(RawFd::MAX)).for_each(set);
}

/// Calls `act` on each open descriptor from `first` up that `/proc/self/fd`
/// lists; false without `/proc`, or when the listing fails part way. No allocation: the listing is read into a
/// buffer on the stack.
#[cfg(target_os = "linux")]
fn each_listed(first: RawFd, act: impl Fn(RawFd)) -> bool {
    use rustix::fs::{Mode, OFlags};
    let Ok(listing) = rustix::fs::open(c"/proc/self/fd", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()) else {
        return false;
    };
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 2048];
    let mut entries = rustix::fs::RawDir::new(&listing, &mut buf);
    while let Some(entry) = entries.next() {
        // A listing cut short leaves the rest unseen: the caller falls back.
        let Ok(entry) = entry else { return false };
        let number = entry.file_name().to_bytes().iter().try_fold(0 as RawFd, |n, &d| {
            d.is_ascii_digit().then(|| n.checked_mul(10)?.checked_add(RawFd::from(d - b'0'))).flatten()
        });
        if let Some(fd) = number.filter(|&fd| fd >= first) {
            act(fd);
        }
    }
    true
}

/// Keeps every descriptor of this process from `cmd`'s program but the
/// standard three (made close-on-exec in its child, between fork and exec):
/// for the programs Warden starts outside any sandbox (a probe of bwrap, the
/// podman service, a browser), which must not hold a sandbox's pipes, nor
/// its caller's descriptors.
pub fn without_inherited_descriptors(cmd: &mut Command) -> &mut Command {
    // SAFETY: system calls only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            close_on_exec_from(3);
            Ok(())
        })
    }
}

/// Whether the kernel ignores `RLIMIT_NPROC` for this process's children:
/// their real uid is root of the first user namespace (with or without
/// capabilities, the kernel checks the user).
fn exempt_from_rlimit_nproc() -> bool {
    rustix::process::getuid().is_root()
        && std::fs::read_to_string("/proc/self/uid_map")
            .is_ok_and(|map| map.lines().any(|l| l.split_whitespace().take(2).eq(["0", "0"])))
}

/// Whether the process cap would hold for a command spawned here.
pub(crate) fn cap_holds() -> bool {
    !exempt_from_rlimit_nproc() || cgroup_available()
}

/// Whether Warden may make a pids cgroup here (it makes one and removes it).
fn cgroup_available() -> bool {
    PidsCgroup::create().is_some()
}

/// The `tasks` file of the v1 pids cgroup the calling thread is in.
fn own_v1_tasks() -> Option<OwnedFd> {
    let text = std::fs::read_to_string("/proc/thread-self/cgroup").ok()?;
    let path = text.lines().find_map(|l| {
        let (_, rest) = l.split_once(':')?;
        let (controllers, path) = rest.split_once(':')?;
        controllers.split(',').any(|c| c == "pids").then_some(path)
    })?;
    let tasks = Path::new("/sys/fs/cgroup/pids").join(path.trim_start_matches('/')).join("tasks");
    std::fs::OpenOptions::new().write(true).open(tasks).ok().map(Into::into)
}

/// A sandbox's cgroup, removed on drop when its processes are gone.
struct PidsCgroup {
    dir: PathBuf,
    /// The file a thread or process writes `0` to to join, opened once.
    join: OwnedFd,
    v1: bool,
}

impl PidsCgroup {
    fn create() -> Option<PidsCgroup> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("{PREFIX}{}-{n}", std::process::id());
        for (base, join_file, v1) in [("/sys/fs/cgroup/pids", "tasks", true), ("/sys/fs/cgroup", "cgroup.procs", false)] {
            let base = Path::new(base);
            if n == 0 {
                remove_stale(base);
            }
            let dir = base.join(&name);
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            let limited = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("pids.max"))
                .and_then(|mut f| f.write_all(MAX_PIDS.to_string().as_bytes()));
            let join = std::fs::OpenOptions::new().write(true).open(dir.join(join_file));
            match (limited, join) {
                (Ok(()), Ok(join)) => return Some(PidsCgroup { dir, join: join.into(), v1 }),
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
        // Busy while this thread is still in it or the last killed processes
        // are being reaped: then it is left for the next Warden to start here
        // (`remove_stale`), rather than keep anyone waiting.
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Removes the cgroups of Warden processes that are gone (a cgroup still in
/// use cannot be removed, so a live one is never touched).
fn remove_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)).and_then(|rest| rest.split('-').next()) else {
            continue;
        };
        let gone = owner
            .parse::<i32>()
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            .is_some_and(|pid| rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH));
        if gone {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_started_outside_the_sandboxes_keeps_none_of_this_processs_descriptors() {
        let (_dir, file) = held_inheritable();
        let read = |keep_out: bool| {
            let mut cmd = Command::new("/bin/cat");
            cmd.arg(format!("/proc/self/fd/{}", file.as_raw_fd()));
            if keep_out {
                without_inherited_descriptors(&mut cmd);
            }
            let out = cmd.output().unwrap();
            (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.success())
        };
        // Left inheritable, the descriptor reaches a program spawned plainly.
        assert_eq!(read(false), ("held\n".to_owned(), true));
        assert_eq!(read(true), (String::new(), false));
    }

    fn held_inheritable() -> (tempfile::TempDir, std::fs::File) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("held.txt"), "held\n").unwrap();
        let file = std::fs::File::open(dir.path().join("held.txt")).unwrap();
        rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty()).unwrap();
        (dir, file)
    }

    #[test]
    fn a_descriptor_made_inheritable_after_the_start_does_not_reach_a_command_spawned_without_a_fork() {
        // Warden's own program, started clean, opens a descriptor without
        // close-on-exec later (a dependency's socket, say): the next sandbox
        // command, posix_spawned, must not get it.
        let (_dir, file) = held_inheritable();
        let (pipe, kept) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", &format!("cat /proc/self/fd/{}; echo sandbox\\'s > /proc/self/fd/{}", file.as_raw_fd(), kept.as_raw_fd())]);
        cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        let out = spawn_inheriting(cmd, &[kept.as_raw_fd()]).unwrap().wait_with_output().unwrap();
        drop(kept);
        assert!(out.stdout.is_empty(), "the command read the file: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with(&format!("cat: /proc/self/fd/{}: No such file", file.as_raw_fd())), "{out:?}");
        let mut told = String::new();
        std::io::Read::read_to_string(&mut std::fs::File::from(pipe), &mut told).unwrap();
        assert_eq!(told, "sandbox's\n", "the sandbox's own descriptor must still reach it");
        assert!(rustix::io::fcntl_getfd(&file).unwrap().contains(rustix::io::FdFlags::CLOEXEC));
    }

    #[test]
    fn the_listing_of_proc_self_fd_finds_every_descriptor_from_the_first_asked() {
        let (_dir, file) = held_inheritable();
        let (low, high) = (std::sync::Mutex::new(Vec::new()), file.as_raw_fd());
        assert!(each_listed(high, |fd| low.lock().unwrap().push(fd)));
        let seen = low.into_inner().unwrap();
        assert!(seen.contains(&high) && seen.iter().all(|&fd| fd >= high), "{seen:?}");
    }
}
