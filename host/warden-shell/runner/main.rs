//! warden-runner: the process that keeps a Warden container alive and starts
//! its commands, so that a command costs a fork and an exec instead of a trip
//! through the engine (`podman exec` takes 80 to 200 ms, this a few), and so
//! that every command in the container is one the runner started and ends.
//!
//! Built by warden-shell's build script as one static program with std alone
//! (it runs in any image, whatever its libc), bound read-only into the
//! container and started as its main process, PID 1 (the image's entrypoint
//! is overridden, and no engine init runs: one would be a dumpable process
//! of the commands' user that a command could take over through
//! /proc/1/mem). As init it reaps every orphan, and the kernel delivers it
//! no signal from inside the container (it handles none). It runs as the commands' user, with
//! their limits, inside the same walls: it can start nothing a command could
//! not start itself.
//!
//! `warden-runner @NAME` listens on the abstract Unix socket NAME of the
//! container's network namespace: no file a command can remove or replace;
//! Warden reaches it by entering that namespace from outside. Each connection
//! asks for one thing: a length (u32, little-endian), then NUL-terminated fields.
//!
//! `warden-run-3`, the working folder, the seccomp program in hex (what
//! `bwrap --seccomp` loads), the time limit in milliseconds (0: none), the
//! argument count, the arguments, the variable count, the `NAME=value`
//! variables; the first message carries the command's stdout and stderr as
//! SCM_RIGHTS. The runner forks a supervisor for it: a subreaper (every
//! process the command leaves becomes its child, whatever it does) that
//! starts the command in a session of its own, with no_new_privs, a guard
//! (no signal, pidfd or limit change for init, the runner or the supervisor)
//! and the seccomp program, answers `pid N`, then ends the command and every
//! process it made when the command exits (`exit N` or `signal N`), when its
//! time is up (`timeout`), or when Warden's side of the connection closes or
//! sends anything (`cancelled`; Warden killed, or the call cancelled). No
//! process outlives its command. `error WHY` when it cannot start it.
//!
//! `warden-hold-1` comes with open files (SCM_RIGHTS), which the runner keeps
//! until it ends, and answers `held N`: the placeholders bound over the
//! container's missing protected paths, whose shared locks tell other
//! sandboxes on the host that this one still covers them (`placeholders.rs`
//! in warden-shell).
//!
//! `warden-listen-1`, PORT asks for a TCP socket listening on 127.0.0.1:PORT
//! inside the container (where a network allowlist's proxy appears to
//! commands): the runner answers one byte with the listening socket as
//! SCM_RIGHTS, and keeps no copy. Warden serves the proxy on it from outside.
//!
//! The runner takes requests from Warden alone: from a peer outside the
//! container's PID namespace, whose PID the kernel gives it as 0. A command,
//! and every process it makes, has a PID here. The runner ends any process
//! in the container that is not a supervisor's (one whose supervisor another
//! command killed). It makes itself undumpable, so that a command of the same
//! user cannot take its descriptors through /proc; Warden's seccomp program
//! refuses every command ptrace.

use std::ffi::{c_int, c_long, OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUN: &[u8] = b"warden-run-3";
const LISTEN: &[u8] = b"warden-listen-1";
const HOLD: &[u8] = b"warden-hold-1\0";
/// Descriptors one request may carry (the kernel's SCM_MAX_FD).
const MAX_FDS: usize = 253;
const MAX_REQUEST: usize = 4 << 20;
/// How long the processes a command left may take to die before the answer goes anyway.
const KILL_PATIENCE: Duration = Duration::from_secs(5);

mod sys {
    use std::ffi::{c_char, c_int, c_long, c_short, c_ulong, c_void};

    pub const PR_SET_DUMPABLE: c_int = 4;
    pub const PR_SET_SECCOMP: c_int = 22;
    pub const PR_SET_CHILD_SUBREAPER: c_int = 36;
    pub const PR_SET_NO_NEW_PRIVS: c_int = 38;
    pub const SECCOMP_MODE_FILTER: c_ulong = 2;
    pub const SOL_SOCKET: c_int = 1;
    pub const SO_PEERCRED: c_int = 17;
    pub const SCM_RIGHTS: c_int = 1;
    pub const MSG_CTRUNC: c_int = 0x8;
    pub const MSG_DONTWAIT: c_int = 0x40;
    pub const MSG_CMSG_CLOEXEC: c_int = 0x4000_0000;
    pub const O_WRONLY: c_int = 1;
    pub const O_CLOEXEC: c_int = 0o2_000_000;
    pub const POLLIN: c_short = 0x1;
    pub const POLLHUP: c_short = 0x10;
    pub const POLLRDHUP: c_short = 0x2000;
    pub const WNOHANG: c_int = 1;
    pub const WUNTRACED: c_int = 2;
    pub const SIGKILL: c_int = 9;
    pub const SYS_PIDFD_OPEN: c_long = 434;

    #[repr(C)]
    pub struct IoVec {
        pub base: *mut c_void,
        pub len: usize,
    }

    #[repr(C)]
    pub struct MsgHdr {
        pub name: *mut c_void,
        pub name_len: u32,
        pub iov: *mut IoVec,
        pub iov_len: usize,
        pub control: *mut c_void,
        pub control_len: usize,
        pub flags: c_int,
    }

    #[repr(C)]
    pub struct UCred {
        pub pid: i32,
        pub uid: u32,
        pub gid: u32,
    }

    #[repr(C)]
    pub struct PollFd {
        pub fd: c_int,
        pub events: c_short,
        pub revents: c_short,
    }

    /// `struct sock_fprog`: a seccomp program of `len` 8-byte instructions.
    #[repr(C)]
    pub struct SockFprog {
        pub len: u16,
        pub filter: *const u64,
    }

    #[repr(C)]
    pub struct CmsgHdr {
        pub len: usize,
        pub level: c_int,
        pub kind: c_int,
    }

    unsafe extern "C" {
        pub fn prctl(option: c_int, arg2: c_ulong, arg3: c_ulong, arg4: c_ulong, arg5: c_ulong) -> c_int;
        pub fn getsockopt(fd: c_int, level: c_int, name: c_int, value: *mut c_void, len: *mut u32) -> c_int;
        pub fn recvmsg(fd: c_int, msg: *mut MsgHdr, flags: c_int) -> isize;
        pub fn recv(fd: c_int, buf: *mut c_void, len: usize, flags: c_int) -> isize;
        pub fn sendmsg(fd: c_int, msg: *const MsgHdr, flags: c_int) -> isize;
        pub fn open(path: *const c_char, flags: c_int, ...) -> c_int;
        pub fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
        pub fn close(fd: c_int) -> c_int;
        pub fn poll(fds: *mut PollFd, n: c_ulong, timeout: c_int) -> c_int;
        pub fn fork() -> c_int;
        pub fn setsid() -> c_int;
        pub fn setpgid(pid: c_int, pgid: c_int) -> c_int;
        pub fn getpid() -> c_int;
        pub fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
        pub fn kill(pid: c_int, signal: c_int) -> c_int;
        pub fn syscall(number: c_long, ...) -> c_long;
        pub fn _exit(code: c_int) -> !;
    }
}

fn main() {
    let Some(name) = std::env::args_os().nth(1).and_then(|a| a.as_bytes().strip_prefix(b"@").map(<[u8]>::to_vec)) else {
        eprintln!("warden-runner: usage: warden-runner @SOCKET-NAME");
        std::process::exit(2);
    };
    // SAFETY: plain prctls and setpgid; no pointers.
    unsafe {
        sys::prctl(sys::PR_SET_DUMPABLE, 0, 0, 0, 0);
        // Orphans of a supervisor that died come here, to be ended.
        sys::prctl(sys::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        // The runner's group is the supervisors' too: the guard names it.
        sys::setpgid(0, 0);
    }
    match SocketAddr::from_abstract_name(&name).and_then(|address| UnixListener::bind_addr(&address)) {
        Ok(listener) => serve(listener),
        // Warden refuses commands when it cannot reach the runner, and says so.
        Err(e) => eprintln!("warden-runner: cannot listen on @{}: {e}", String::from_utf8_lossy(&name)),
    }
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// One thread, no locks: a supervisor is forked from here and is free to run
/// any code. Between connections, children are reaped and strays ended.
fn serve(listener: UnixListener) -> ! {
    let runner = std::process::id() as c_int;
    let mut supervisors: Vec<c_int> = Vec::new();
    // Kept open, never read: their locks keep the placeholders bound here on the host.
    let mut held = Held::default();
    loop {
        if readable(listener.as_raw_fd(), 100) {
            if let Ok((conn, _)) = listener.accept() {
                if let Some(supervisor) = answer(conn, runner, &listener, &mut held) {
                    supervisors.push(supervisor);
                }
            }
        }
        reap(&mut supervisors);
        end_strays(&supervisors);
    }
}

/// Whether `fd` has something to read within `millis`.
fn readable(fd: RawFd, millis: c_int) -> bool {
    let mut poll = sys::PollFd { fd, events: sys::POLLIN, revents: 0 };
    // SAFETY: one pollfd, the count given.
    unsafe { sys::poll(&mut poll, 1, millis) > 0 }
}

/// Reaps the children that ended; a supervisor among them is forgotten. A
/// child that was stopped (another command sent its supervisor SIGSTOP, which
/// nothing can refuse) is killed: a stopped supervisor would keep neither its
/// command's time nor its client's end, and its orphans are ended as strays.
fn reap(supervisors: &mut Vec<c_int>) {
    loop {
        let mut status = 0;
        // SAFETY: a status word to write.
        let pid = unsafe { sys::waitpid(-1, &mut status, sys::WNOHANG | sys::WUNTRACED) };
        if pid <= 0 {
            return;
        }
        if status & 0xff == 0x7f {
            // SAFETY: a signal to a child of ours, not yet reaped.
            unsafe { sys::kill(pid, sys::SIGKILL) };
            continue;
        }
        supervisors.retain(|&s| s != pid);
    }
}

/// Ends every child of the runner that is not a supervisor: the processes of
/// a command whose supervisor was killed, which came here as orphans.
fn end_strays(supervisors: &[c_int]) {
    for child in children() {
        if !supervisors.contains(&child) {
            // SAFETY: a signal to a child of ours.
            unsafe { sys::kill(child, sys::SIGKILL) };
        }
    }
}

/// This (single-threaded) process's children, as /proc lists them.
fn children() -> Vec<c_int> {
    let listed = std::fs::read_to_string("/proc/thread-self/children").unwrap_or_default();
    listed.split_whitespace().filter_map(|c| c.parse().ok()).collect()
}

/// Answers one connection; a command's supervisor's PID when one was started.
fn answer(mut conn: UnixStream, runner: c_int, listener: &UnixListener, held: &mut Held) -> Option<c_int> {
    if !from_outside(&conn) {
        refuse(conn);
        return None;
    }
    let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
    let reply = match receive(&conn) {
        Ok((payload, fds)) if payload == HOLD => {
            let count = fds.len();
            held.take(fds);
            format!("held {count}\n")
        }
        Ok((payload, _)) if payload.starts_with(LISTEN) => match listen_port(&payload) {
            Some(port) => match hand_over_listener(&conn, port) {
                Ok(()) => return None,
                Err(e) => format!("error cannot listen on 127.0.0.1:{port}: {e}\n"),
            },
            None => "error malformed request\n".to_owned(),
        },
        Ok((payload, fds)) => match (parse(&payload), <[OwnedFd; 2]>::try_from(fds)) {
            (None, _) => "error malformed request\n".to_owned(),
            (Some(_), Err(_)) => "error expected two descriptors\n".to_owned(),
            (Some(request), Ok([stdout, stderr])) => {
                // SAFETY: this process has one thread; the child runs only supervise, then exits.
                match unsafe { sys::fork() } {
                    0 => {
                        drop(unsafe { OwnedFd::from_raw_fd(listener.as_raw_fd()) });
                        // The runner's copies keep the locks: none reaches the command.
                        std::mem::take(held);
                        supervise(conn, request, stdout, stderr, runner)
                    }
                    pid if pid > 0 => return Some(pid),
                    _ => format!("error {}\n", io::Error::last_os_error()),
                }
            }
        },
        Err(e) => format!("error {e}\n"),
    };
    let _ = conn.write_all(reply.as_bytes());
    None
}

/// The files Warden handed over (`warden-hold-1`), one of each: a Warden
/// that attaches to the container again hands them again.
#[derive(Default)]
struct Held(Vec<(u64, u64, OwnedFd)>);

impl Held {
    fn take(&mut self, fds: Vec<OwnedFd>) {
        use std::os::unix::fs::MetadataExt;
        for fd in fds {
            let file = std::fs::File::from(fd);
            let Ok(meta) = file.metadata() else { continue };
            if !self.0.iter().any(|(dev, ino, _)| (*dev, *ino) == (meta.dev(), meta.ino())) {
                self.0.push((meta.dev(), meta.ino(), file.into()));
            }
        }
    }
}

/// Says no, and reads what the peer already sent without waiting for more:
/// closed with it unread, the connection would be reset and the answer lost.
fn refuse(mut conn: UnixStream) {
    let _ = conn.write_all(b"error the runner takes requests from Warden only\n");
    let _ = conn.shutdown(std::net::Shutdown::Write);
    let mut sink = [0u8; 64 << 10];
    // At most 1 MiB: a peer that keeps sending cannot hold the runner here.
    for _ in 0..16 {
        // SAFETY: a buffer of the length given.
        if unsafe { sys::recv(conn.as_raw_fd(), sink.as_mut_ptr().cast(), sink.len(), sys::MSG_DONTWAIT) } <= 0 {
            break;
        }
    }
}

/// Whether the peer is outside this container's PID namespace, as Warden is:
/// the kernel gives a peer that this namespace cannot see the PID 0.
fn from_outside(conn: &UnixStream) -> bool {
    let mut cred = sys::UCred { pid: -1, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<sys::UCred>() as u32;
    // SAFETY: a buffer of the length given.
    let got = unsafe { sys::getsockopt(conn.as_raw_fd(), sys::SOL_SOCKET, sys::SO_PEERCRED, (&raw mut cred).cast(), &mut len) };
    got == 0 && cred.pid == 0
}

/// The port of a `warden-listen-1` request.
fn listen_port(payload: &[u8]) -> Option<u16> {
    let mut fields = payload.strip_suffix(b"\0")?.split(|&b| b == 0);
    (fields.next()? == LISTEN).then_some(())?;
    let port = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
    fields.next().is_none().then_some(port)
}

/// Listens on 127.0.0.1:`port` and sends the socket on `conn`: one byte, `L`,
/// with the descriptor. The runner's copy closes on return.
fn hand_over_listener(conn: &UnixStream, port: u16) -> io::Result<()> {
    let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))?;
    let header = std::mem::size_of::<sys::CmsgHdr>();
    let mut control = [0u64; 4];
    let space = header + 8;
    // SAFETY: the control buffer holds a header and one descriptor, 8-aligned.
    unsafe {
        let cmsg = control.as_mut_ptr().cast::<sys::CmsgHdr>();
        (*cmsg).len = header + std::mem::size_of::<RawFd>();
        (*cmsg).level = sys::SOL_SOCKET;
        (*cmsg).kind = sys::SCM_RIGHTS;
        control.as_mut_ptr().cast::<u8>().add(header).cast::<RawFd>().write_unaligned(listener.as_raw_fd());
    }
    let mut byte = *b"L";
    let mut iov = sys::IoVec { base: byte.as_mut_ptr().cast(), len: 1 };
    let msg = sys::MsgHdr {
        name: std::ptr::null_mut(),
        name_len: 0,
        iov: &mut iov,
        iov_len: 1,
        control: control.as_mut_ptr().cast(),
        control_len: space,
        flags: 0,
    };
    // SAFETY: msg points at live buffers of the lengths it gives.
    if unsafe { sys::sendmsg(conn.as_raw_fd(), &msg, 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

struct Request {
    cwd: OsString,
    /// The seccomp program's instructions, 8 bytes each, in the host's byte order.
    seccomp: Vec<u64>,
    /// None: no time limit.
    timeout: Option<Duration>,
    argv: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

fn parse(payload: &[u8]) -> Option<Request> {
    let mut fields = payload.strip_suffix(b"\0")?.split(|&b| b == 0).map(|f| OsStr::from_bytes(f).to_owned());
    if fields.next()?.as_bytes() != RUN {
        return None;
    }
    let cwd = fields.next()?;
    let seccomp = from_hex(fields.next()?.as_bytes())?;
    let millis: u64 = fields.next()?.to_str()?.parse().ok()?;
    let take = |fields: &mut dyn Iterator<Item = OsString>| -> Option<Vec<OsString>> {
        let count: usize = fields.next()?.to_str()?.parse().ok()?;
        let list: Vec<OsString> = fields.take(count).collect();
        (list.len() == count).then_some(list)
    };
    let argv = take(&mut fields)?;
    let env = take(&mut fields)?;
    if argv.is_empty() || fields.next().is_some() {
        return None;
    }
    let env = env
        .into_iter()
        .map(|kv| {
            let bytes = kv.as_bytes();
            let at = bytes.iter().position(|&b| b == b'=').unwrap_or(bytes.len());
            (OsStr::from_bytes(&bytes[..at]).to_owned(), OsStr::from_bytes(bytes.get(at + 1..).unwrap_or_default()).to_owned())
        })
        .collect();
    Some(Request { cwd, seccomp, timeout: (millis > 0).then(|| Duration::from_millis(millis)), argv, env })
}

/// A seccomp program in hex: whole instructions, at least one and at most the
/// kernel's 4096.
fn from_hex(hex: &[u8]) -> Option<Vec<u64>> {
    if hex.is_empty() || hex.len() % 16 != 0 || hex.len() / 16 > 4096 {
        return None;
    }
    let bytes = hex
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    Some(bytes.chunks(8).map(|ins| u64::from_ne_bytes(ins.try_into().expect("eight bytes"))).collect())
}

/// The supervisor of one command, in a process of its own: starts it, then
/// ends it and all it made when it exits, its time is up or Warden goes.
fn supervise(mut conn: UnixStream, request: Request, stdout: OwnedFd, stderr: OwnedFd, runner: c_int) -> ! {
    // SAFETY: a plain prctl and getpid.
    let me = unsafe {
        sys::prctl(sys::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        sys::getpid()
    };
    // A limit past what a clock can hold is no limit.
    let deadline = request.timeout.and_then(|t| Instant::now().checked_add(t));
    let ending = match start(&request, stdout, stderr, runner, me) {
        Ok(child) => {
            let _ = writeln!(conn, "pid {}", child.id());
            watch(&conn, child, deadline)
        }
        Err(code) => format!("exit {code}\n"),
    };
    end_all();
    let _ = conn.write_all(ending.as_bytes());
    // SAFETY: leaves without running the runner's code further down the stack.
    unsafe { sys::_exit(0) }
}

/// Starts the command in a session of its own, under the guard and the
/// seccomp program; on failure, the exit code a shell would give (said on its stderr).
fn start(request: &Request, stdout: OwnedFd, stderr: OwnedFd, runner: c_int, me: c_int) -> Result<std::process::Child, i32> {
    let mut report = stderr.try_clone().map(std::fs::File::from).ok();
    let mut command = Command::new(&request.argv[0]);
    command
        .args(&request.argv[1..])
        .env_clear()
        .envs(request.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&request.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr));
    let guard = guard(&[1, runner, me]);
    let seccomp = request.seccomp.clone();
    // SAFETY: between fork and exec only async-signal-safe calls, no allocation.
    unsafe {
        command.pre_exec(move || {
            if sys::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            // Undumpable as the runner is, its /proc files are root's; the command's own
            // must be its own (it becomes dumpable at the exec anyway).
            sys::prctl(sys::PR_SET_DUMPABLE, 1, 0, 0, 0);
            prefer_by_oom();
            confine(&guard)?;
            confine(&seccomp)
        })
    };
    command.spawn().map_err(|e| {
        if let Some(report) = &mut report {
            let _ = writeln!(report, "warden: cannot run {}: {e}", request.argv[0].to_string_lossy());
        }
        if e.kind() == io::ErrorKind::NotFound { 127 } else { 126 }
    })
}

/// Waits until the command exits, its time is up, or Warden's side of the
/// connection closes or speaks (a cancel); the answer for each.
fn watch(conn: &UnixStream, mut child: std::process::Child, deadline: Option<Instant>) -> String {
    // SAFETY: pidfd_open of our own child; the descriptor is ours.
    let pidfd = unsafe { sys::syscall(sys::SYS_PIDFD_OPEN, child.id() as c_long, 0 as c_long) };
    let pidfd = (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) });
    loop {
        let wait = match deadline {
            Some(at) => at.saturating_duration_since(Instant::now()).as_millis().min(60_000) as c_int,
            None => 60_000,
        };
        let mut polls = [
            sys::PollFd { fd: conn.as_raw_fd(), events: sys::POLLIN | sys::POLLRDHUP, revents: 0 },
            sys::PollFd { fd: pidfd.as_ref().map_or(-1, AsRawFd::as_raw_fd), events: sys::POLLIN, revents: 0 },
        ];
        // Without a pidfd (a kernel before 5.3), the child is looked at every 10 ms.
        let wait = if pidfd.is_some() { wait } else { wait.min(10) };
        // SAFETY: two pollfds, the count given.
        unsafe { sys::poll(polls.as_mut_ptr(), 2, wait) };
        if polls[0].revents & (sys::POLLIN | sys::POLLRDHUP | sys::POLLHUP) != 0 {
            return "cancelled\n".to_owned();
        }
        match child.try_wait() {
            Ok(Some(status)) => {
                return match (status.code(), status.signal()) {
                    (Some(code), _) => format!("exit {code}\n"),
                    (None, Some(signal)) => format!("signal {signal}\n"),
                    (None, None) => "error no exit status\n".to_owned(),
                };
            }
            Ok(None) => {}
            Err(e) => return format!("error {e}\n"),
        }
        if deadline.is_some_and(|at| Instant::now() >= at) {
            return "timeout\n".to_owned();
        }
    }
}

/// Ends every process below this supervisor: its children, and those that
/// become its children as their parents die, until none is left.
fn end_all() {
    // No child left at all, the usual case: nothing to look for in /proc.
    loop {
        let mut status = 0;
        // SAFETY: a status word to write.
        match unsafe { sys::waitpid(-1, &mut status, sys::WNOHANG) } {
            0 => break,
            reaped if reaped > 0 => continue,
            _ => return,
        }
    }
    let until = Instant::now() + KILL_PATIENCE;
    loop {
        let children = children();
        if children.is_empty() || Instant::now() > until {
            return;
        }
        for child in &children {
            // SAFETY: a signal to a child of ours.
            unsafe { sys::kill(*child, sys::SIGKILL) };
        }
        let mut status = 0;
        // SAFETY: a status word to write; blocks until one of the killed is gone.
        while unsafe { sys::waitpid(-1, &mut status, sys::WNOHANG) } > 0 {}
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A seccomp program refusing (EPERM) the calls that could stop, kill or
/// limit `pids` (init, the runner, the supervisor) or their group: `kill`,
/// `tkill`, `tgkill`, `rt_sigqueueinfo`, `rt_tgsigqueueinfo`, `pidfd_open`,
/// `prlimit64` aimed at them, and `kill(-1)` (every process the caller may
/// signal); and the ways to signal a process that name no target these
/// could check: `pidfd_send_signal` (its pidfd may be a `/proc/PID` folder),
/// `fcntl` `F_SETOWN`, `F_SETOWN_EX` and `F_SETSIG`, and `ioctl` `FIOSETOWN`
/// and `SIOCSPGRP` (I/O signals sent to an owner). A target or value is
/// read as the kernel reads it: its low 32 bits. Nor may a command slow
/// them down: `setpriority`, `ioprio_set` and the scheduler's settings
/// (`SCHED_IDLE`, an affinity) aimed at them are refused, and so are
/// `setpriority` and `ioprio_set` for a whole user (theirs is the command's).
fn guard(pids: &[c_int]) -> Vec<u64> {
    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
    const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;
    // kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_open, prlimit64,
    // sched_setparam, sched_setscheduler, sched_setaffinity, sched_setattr;
    // pidfd_send_signal; fcntl; ioctl; setpriority; ioprio_set.
    #[cfg(target_arch = "x86_64")]
    let (arch, aimed, pidfd_send_signal, fcntl, ioctl, setpriority, ioprio_set): (u32, &[u32], u32, u32, u32, u32, u32) =
        (AUDIT_ARCH_X86_64, &[62, 200, 234, 129, 297, 434, 302, 142, 144, 203, 314], 424, 72, 16, 141, 251);
    #[cfg(target_arch = "aarch64")]
    let (arch, aimed, pidfd_send_signal, fcntl, ioctl, setpriority, ioprio_set): (u32, &[u32], u32, u32, u32, u32, u32) =
        (AUDIT_ARCH_AARCH64, &[129, 130, 131, 138, 240, 434, 261, 118, 119, 122, 274], 424, 25, 29, 140, 30);
    let _ = (AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64);
    const F_SETOWN: u32 = 8;
    const F_SETSIG: u32 = 10;
    const F_SETOWN_EX: u32 = 15;
    const FIOSETOWN: u32 = 0x8901;
    const SIOCSPGRP: u32 = 0x8902;
    const PRIO_USER: u32 = 2;
    const IOPRIO_WHO_USER: u32 = 3;
    let mut targets: Vec<u32> = pids.iter().map(|&p| p as u32).collect();
    targets.extend(pids.iter().map(|&p| (-p) as u32));
    targets.push(u32::MAX); // -1
    let mut program = vec![ins(LOAD, 0, 0, 4), ins(JEQ, 1, 0, arch), ins(RET, 0, 0, ALLOW)];
    for &call in aimed {
        refuse_when(&mut program, call, 16, &targets);
    }
    refuse_when(&mut program, pidfd_send_signal, 16, &[]);
    refuse_when(&mut program, fcntl, 24, &[F_SETOWN, F_SETSIG, F_SETOWN_EX]);
    refuse_when(&mut program, ioctl, 24, &[FIOSETOWN, SIOCSPGRP]);
    for call in [setpriority, ioprio_set] {
        refuse_when(&mut program, call, 24, &targets);
    }
    refuse_when(&mut program, setpriority, 16, &[PRIO_USER]);
    refuse_when(&mut program, ioprio_set, 16, &[IOPRIO_WHO_USER]);
    program.push(ins(RET, 0, 0, ALLOW));
    program
}

const LOAD: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JA: u16 = 0x05; // BPF_JMP | BPF_JA
const RET: u16 = 0x06; // BPF_RET | BPF_K
const ALLOW: u32 = 0x7fff_0000;
const EPERM: u32 = 0x0005_0000 | 1;

fn ins(code: u16, jt: u8, jf: u8, k: u32) -> u64 {
    u64::from_ne_bytes(pack(code, jt, jf, k))
}

/// Appends: system call `call` is refused when the low half of the argument
/// at `offset` (16: the first, 24: the second) is one of `values`, or always
/// when there are none; any other call, or this one with another value,
/// goes on to the rules that follow.
fn refuse_when(program: &mut Vec<u64>, call: u32, offset: u32, values: &[u32]) {
    if values.is_empty() {
        program.extend([ins(LOAD, 0, 0, 0), ins(JEQ, 0, 1, call), ins(RET, 0, 0, EPERM)]);
        return;
    }
    let n = values.len();
    program.extend([ins(LOAD, 0, 0, 0), ins(JEQ, 0, (n + 3) as u8, call), ins(LOAD, 0, 0, offset)]);
    for (i, &value) in values.iter().enumerate() {
        program.push(ins(JEQ, (n - i) as u8, 0, value));
    }
    // The call, with another value: on to the next rule.
    program.extend([ins(JA, 0, 0, 1), ins(RET, 0, 0, EPERM)]);
}

fn pack(code: u16, jt: u8, jf: u8, k: u32) -> [u8; 8] {
    let mut out = [0u8; 8];
    out[..2].copy_from_slice(&code.to_ne_bytes());
    out[2] = jt;
    out[3] = jf;
    out[4..].copy_from_slice(&k.to_ne_bytes());
    out
}

/// An OOM score of 1000, which the command's children inherit: when a command
/// runs the container out of memory, the kernel kills it, not the runner.
fn prefer_by_oom() {
    const PATH: &[u8] = b"/proc/self/oom_score_adj\0";
    // SAFETY: a NUL-terminated path and a buffer of the given length.
    unsafe {
        let fd = sys::open(PATH.as_ptr().cast(), sys::O_WRONLY | sys::O_CLOEXEC);
        if fd >= 0 {
            sys::write(fd, b"1000".as_ptr().cast(), 4);
            sys::close(fd);
        }
    }
}

/// Loads a seccomp program into this process, which the command then is
/// (with no_new_privs); when it cannot, the command does not start.
fn confine(program: &[u64]) -> io::Result<()> {
    let fprog = sys::SockFprog { len: program.len() as u16, filter: program.as_ptr() };
    // SAFETY: plain prctls; fprog points at `len` instructions that outlive the calls.
    unsafe {
        if sys::prctl(sys::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || sys::prctl(sys::PR_SET_SECCOMP, sys::SECCOMP_MODE_FILTER, (&raw const fprog) as usize as std::ffi::c_ulong, 0, 0) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// One request: its payload and the descriptors that came with it.
fn receive(conn: &UnixStream) -> io::Result<(Vec<u8>, Vec<OwnedFd>)> {
    let mut first = vec![0u8; 64 << 10];
    let (got, fds) = recv_with_fds(conn.as_raw_fd(), &mut first)?;
    first.truncate(got);
    if first.len() < 4 {
        return Err(io::Error::other("short request"));
    }
    let length = u32::from_le_bytes(first[..4].try_into().expect("four bytes")) as usize;
    if length > MAX_REQUEST {
        return Err(io::Error::other("request too long"));
    }
    let mut payload = first.split_off(4);
    if payload.len() > length {
        return Err(io::Error::other("request longer than it says"));
    }
    let missing = length - payload.len();
    (&*conn).take(missing as u64).read_to_end(&mut payload)?;
    if payload.len() != length {
        return Err(io::Error::other("request cut short"));
    }
    Ok((payload, fds))
}

fn recv_with_fds(fd: RawFd, buffer: &mut [u8]) -> io::Result<(usize, Vec<OwnedFd>)> {
    // Room for as many descriptors as one message may carry, aligned as the kernel writes them.
    let mut control = [0u64; (16 + MAX_FDS * 4).div_ceil(8)];
    let mut iov = sys::IoVec { base: buffer.as_mut_ptr().cast(), len: buffer.len() };
    let mut msg = sys::MsgHdr {
        name: std::ptr::null_mut(),
        name_len: 0,
        iov: &mut iov,
        iov_len: 1,
        control: control.as_mut_ptr().cast(),
        control_len: std::mem::size_of_val(&control),
        flags: 0,
    };
    let got = loop {
        // SAFETY: msg points at live buffers of the lengths it gives.
        let n = unsafe { sys::recvmsg(fd, &mut msg, sys::MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break n as usize;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    let mut fds = Vec::new();
    let header = std::mem::size_of::<sys::CmsgHdr>();
    let base = control.as_ptr().cast::<u8>();
    let mut at = 0;
    while at + header <= msg.control_len {
        // SAFETY: within the control buffer, at an 8-byte boundary the kernel wrote.
        let cmsg = unsafe { &*base.add(at).cast::<sys::CmsgHdr>() };
        if cmsg.len < header || at + cmsg.len > msg.control_len {
            break;
        }
        if cmsg.level == sys::SOL_SOCKET && cmsg.kind == sys::SCM_RIGHTS {
            let count = (cmsg.len - header) / std::mem::size_of::<RawFd>();
            for i in 0..count {
                // SAFETY: the kernel put `count` descriptors after the header, now ours.
                let raw = unsafe { base.add(at + header + i * 4).cast::<RawFd>().read_unaligned() };
                fds.push(unsafe { OwnedFd::from_raw_fd(raw) });
            }
        }
        at += (cmsg.len + 7) & !7;
    }
    if msg.flags & sys::MSG_CTRUNC != 0 {
        return Err(io::Error::other("too many descriptors"));
    }
    Ok((got, fds))
}
