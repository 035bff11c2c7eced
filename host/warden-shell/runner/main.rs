//! warden-runner: the process that keeps a Warden container alive and starts
//! its commands, so that a command costs a fork and an exec instead of a trip
//! through the engine (`podman exec` takes 80 to 200 ms, this a few).
//!
//! Built by warden-shell's build script as one static program with std alone
//! (it runs in any image, whatever its libc), bound read-only into the
//! container and started as its main process, under the engine's init. It
//! runs as the commands' user, with their limits, inside the same walls: it
//! can start nothing a command could not start itself.
//!
//! `warden-runner SOCKET` listens on SOCKET, in a small tmpfs of the
//! container's own that Warden reaches through the container's root.
//! Each connection asks for one command: a length (u32, little-endian), then
//! NUL-terminated fields `warden-run-2`, the working folder, the seccomp
//! program in hex (what `bwrap --seccomp` loads), the argument count, the
//! arguments, the variable count, the `NAME=value` variables; the first
//! message carries the command's stdout and stderr as SCM_RIGHTS. The runner
//! loads the program in the command's process (with no_new_privs) before the
//! exec, answers `pid N` once the command has started, then, once it ends,
//! `exit N` or `signal N`; or `error WHY` when it cannot start it.
//!
//! A request `warden-listen-1`, PORT asks for a TCP socket listening on
//! 127.0.0.1:PORT inside the container (where a network allowlist's proxy
//! appears to commands): the runner answers one byte with the listening socket
//! as SCM_RIGHTS, and keeps no copy. Warden serves the proxy on it from outside.
//!
//! The runner takes requests from Warden alone: from a peer outside the
//! container's PID namespace, whose PID the kernel gives it as 0. A command,
//! and every process it makes, has a PID here, so a command that finds the
//! socket cannot have processes started outside its own tree and its
//! timeout's reach.
//!
//! Warden trusts an answer only from this process: it checks that the peer
//! of its connection is the child of the container's init that started
//! first, which no command can become while the runner lives; and the
//! container ends when it dies. The runner makes itself undumpable, so that a command of the
//! same user cannot trace it or take its descriptors through /proc.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};

const MAGIC: &[u8] = b"warden-run-2";
const LISTEN: &[u8] = b"warden-listen-1";
const MAX_REQUEST: usize = 4 << 20;

mod sys {
    use std::ffi::{c_char, c_int, c_ulong, c_void};

    pub const PR_SET_DUMPABLE: c_int = 4;
    pub const PR_SET_SECCOMP: c_int = 22;
    pub const PR_SET_NO_NEW_PRIVS: c_int = 38;
    pub const SECCOMP_MODE_FILTER: c_ulong = 2;
    pub const SOL_SOCKET: c_int = 1;
    pub const SO_PEERCRED: c_int = 17;
    pub const SCM_RIGHTS: c_int = 1;
    pub const MSG_CTRUNC: c_int = 0x8;
    pub const MSG_CMSG_CLOEXEC: c_int = 0x4000_0000;
    pub const O_WRONLY: c_int = 1;
    pub const O_CLOEXEC: c_int = 0o2_000_000;

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
        pub fn sendmsg(fd: c_int, msg: *const MsgHdr, flags: c_int) -> isize;
        pub fn open(path: *const c_char, flags: c_int, ...) -> c_int;
        pub fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
        pub fn close(fd: c_int) -> c_int;
        pub fn pause() -> c_int;
    }
}

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("warden-runner: usage: warden-runner SOCKET");
        std::process::exit(2);
    };
    // SAFETY: plain prctl; no pointers.
    unsafe { sys::prctl(sys::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    match listen(&path) {
        Ok(listener) => serve(listener),
        // The container must stay up all the same: Warden then starts
        // commands through the engine, as it does without a runner.
        Err(e) => eprintln!("warden-runner: cannot listen on {}: {e}", path.to_string_lossy()),
    }
    loop {
        // SAFETY: waits for a signal; no arguments.
        unsafe { sys::pause() };
    }
}

fn listen(path: &OsStr) -> io::Result<UnixListener> {
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

fn serve(listener: UnixListener) {
    for conn in listener.incoming() {
        let Ok(conn) = conn else {
            // Out of descriptors, say: wait rather than spin.
            std::thread::sleep(std::time::Duration::from_millis(10));
            continue;
        };
        // A thread per command, which waits for it; none when threads run out.
        let _ = std::thread::Builder::new().stack_size(64 << 10).spawn(move || answer(conn));
    }
}

fn answer(mut conn: UnixStream) {
    if !from_outside(&conn) {
        refuse(conn);
        return;
    }
    let reply = match receive(&conn) {
        Ok((payload, _)) if payload.starts_with(LISTEN) => match listen_port(&payload) {
            Some(port) => match hand_over_listener(&conn, port) {
                Ok(()) => return,
                Err(e) => format!("error cannot listen on 127.0.0.1:{port}: {e}\n"),
            },
            None => "error malformed request\n".to_owned(),
        },
        Ok((payload, fds)) => match parse(&payload) {
            Some(request) => run(request, fds, &mut conn),
            None => "error malformed request\n".to_owned(),
        },
        Err(e) => format!("error {e}\n"),
    };
    let _ = conn.write_all(reply.as_bytes());
}

/// Says no, then reads what the peer sent: closed with it unread, the
/// connection would be reset and the answer lost.
fn refuse(mut conn: UnixStream) {
    let _ = conn.write_all(b"error the runner takes requests from Warden only\n");
    let _ = conn.shutdown(std::net::Shutdown::Write);
    let _ = conn.set_read_timeout(Some(std::time::Duration::from_millis(200)));
    let _ = io::copy(&mut (&conn).take(MAX_REQUEST as u64), &mut io::sink());
}

/// Whether the peer is outside this container's PID namespace, as Warden is:
/// the kernel gives a peer that this namespace cannot see the PID 0.
fn from_outside(conn: &UnixStream) -> bool {
    use std::os::fd::AsRawFd;
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
    use std::os::fd::AsRawFd;
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
    argv: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

fn parse(payload: &[u8]) -> Option<Request> {
    let mut fields = payload.strip_suffix(b"\0")?.split(|&b| b == 0).map(|f| OsStr::from_bytes(f).to_owned());
    if fields.next()?.as_bytes() != MAGIC {
        return None;
    }
    let cwd = fields.next()?;
    let seccomp = from_hex(fields.next()?.as_bytes())?;
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
    Some(Request { cwd, seccomp, argv, env })
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

/// Starts the command with `fds` (stdout, stderr), says its PID on `conn`
/// (`pid N`), and waits for it.
fn run(request: Request, fds: Vec<OwnedFd>, conn: &mut UnixStream) -> String {
    let [stdout, stderr]: [OwnedFd; 2] = match fds.try_into() {
        Ok(pair) => pair,
        Err(_) => return "error expected two descriptors\n".to_owned(),
    };
    let mut report = match stderr.try_clone() {
        Ok(fd) => std::fs::File::from(fd),
        Err(e) => return format!("error {e}\n"),
    };
    let mut command = Command::new(&request.argv[0]);
    command
        .args(&request.argv[1..])
        .env_clear()
        .envs(request.env)
        .current_dir(&request.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr));
    let seccomp = request.seccomp;
    // SAFETY: between fork and exec only async-signal-safe calls, no allocation.
    unsafe {
        command.pre_exec(move || {
            prefer_by_oom()?;
            confine(&seccomp)
        })
    };
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            let _ = writeln!(report, "warden: cannot run {}: {e}", request.argv[0].to_string_lossy());
            let code = if e.kind() == io::ErrorKind::NotFound { 127 } else { 126 };
            return format!("exit {code}\n");
        }
    };
    drop(command);
    drop(report);
    let _ = writeln!(conn, "pid {}", child.id());
    match child.wait() {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("exit {code}\n"),
            (None, Some(signal)) => format!("signal {signal}\n"),
            (None, None) => "error no exit status\n".to_owned(),
        },
        Err(e) => format!("error {e}\n"),
    }
}

/// An OOM score of 1000, which the command's children inherit: when a command
/// runs the container out of memory, the kernel kills it, not the runner.
fn prefer_by_oom() -> io::Result<()> {
    const PATH: &[u8] = b"/proc/self/oom_score_adj\0";
    // SAFETY: a NUL-terminated path and a buffer of the given length.
    unsafe {
        let fd = sys::open(PATH.as_ptr().cast(), sys::O_WRONLY | sys::O_CLOEXEC);
        if fd >= 0 {
            sys::write(fd, b"1000".as_ptr().cast(), 4);
            sys::close(fd);
        }
    }
    Ok(())
}

/// Loads the seccomp program into this process, which the command then is;
/// when it cannot, the command does not start.
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
    use std::os::fd::AsRawFd;
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
    // Room for a few descriptors, aligned as the kernel writes them.
    let mut control = [0u64; 8];
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
