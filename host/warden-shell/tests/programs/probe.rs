//! A hostile command's own program, for the container tests: built static by
//! the test (std alone), written into the container by a command and run
//! there, to try what busybox cannot.
//!
//! `probe unix PATH`: connects to the Unix socket PATH.
//! `probe ptrace`: asks to be traced (PTRACE_TRACEME).
//! `probe tiocsti`: makes a new pty its controlling terminal and pushes a
//! byte into its input (TIOCSTI), as the plain request and with high bits set.
//! `probe raw`: opens a raw ICMP socket.
//! `probe runner @NAME ARGS...`: asks the container's runner at the abstract
//! socket NAME to start ARGS, whole and well-formed, with its own stdout and
//! stderr; prints the runner's answer. `probe bind @NAME`: tries to take
//! that abstract name.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

unsafe extern "C" {
    fn ptrace(request: i64, pid: i32, addr: usize, data: usize) -> i64;
    fn sendmsg(fd: i32, msg: *const MsgHdr, flags: i32) -> isize;
    fn setsid() -> i32;
    fn getsid(pid: i32) -> i32;
    fn getpid() -> i32;
    fn ioctl(fd: i32, request: u64, ...) -> i32;
    fn socket(domain: i32, kind: i32, protocol: i32) -> i32;
}

#[repr(C)]
struct IoVec {
    base: *mut u8,
    len: usize,
}

#[repr(C)]
struct MsgHdr {
    name: *mut u8,
    name_len: u32,
    iov: *mut IoVec,
    iov_len: usize,
    control: *mut u8,
    control_len: usize,
    flags: i32,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("unix") => match UnixStream::connect(&args[1]) {
            Ok(_) => println!("connected"),
            Err(e) => println!("refused errno {}", e.raw_os_error().unwrap_or(0)),
        },
        Some("ptrace") => {
            // SAFETY: PTRACE_TRACEME takes no pointers.
            let got = unsafe { ptrace(0, 0, 0, 0) };
            println!("ptrace {got} errno {}", errno());
        }
        Some("tiocsti") => tiocsti(),
        Some("raw") => {
            // SAFETY: no pointers. AF_INET, SOCK_RAW, IPPROTO_ICMP.
            let fd = unsafe { socket(2, 3, 1) };
            println!("raw {fd} errno {}", if fd < 0 { errno() } else { 0 });
        }
        Some("runner") => println!("{}", ask_runner(&args[1], &args[2..]).unwrap_or_else(|e| format!("failed: {e}"))),
        Some("bind") => match abstract_address(&args[1]).and_then(|a| std::os::unix::net::UnixListener::bind_addr(&a)) {
            Ok(_) => println!("bound"),
            Err(e) => println!("failed: {e}"),
        },
        _ => {
            eprintln!("usage: probe unix PATH | ptrace | tiocsti | raw | runner @NAME ARGS... | bind @NAME");
            std::process::exit(2);
        }
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// TIOCSTI on this process's own controlling terminal, which the kernel
/// would allow: only a filter refuses it.
fn tiocsti() {
    use std::fs::OpenOptions;
    // SAFETY: no pointers. A session of its own, unless it leads one already
    // (the first process of a command the container's runner started does).
    if unsafe { setsid() } < 0 && unsafe { getsid(0) != getpid() } {
        return println!("setsid errno {}", errno());
    }
    let master = OpenOptions::new().read(true).write(true).open("/dev/ptmx").expect("/dev/ptmx");
    let (mut unlock, mut number) = (0i32, 0u32);
    // SAFETY: TIOCSPTLCK reads an int, TIOCGPTN writes an unsigned int.
    unsafe {
        ioctl(master.as_raw_fd(), 0x4004_5431, &mut unlock as *mut i32);
        ioctl(master.as_raw_fd(), 0x8004_5430, &mut number as *mut u32);
    }
    // Opened without O_NOCTTY by a session leader: its controlling terminal.
    let tty = OpenOptions::new().read(true).write(true).open(format!("/dev/pts/{number}")).expect("the pty");
    for request in [0x5412u64, 0x1_0000_5412] {
        let byte = b'x';
        // SAFETY: TIOCSTI reads one byte.
        let got = unsafe { ioctl(tty.as_raw_fd(), request, &byte as *const u8) };
        println!("tiocsti {request:#x} {}", if got < 0 { format!("errno {}", errno()) } else { "INJECTED".to_owned() });
    }
}

/// A `warden-run-3` request for `argv` with a seccomp program that allows
/// everything, sent with descriptors 1 and 2; the runner's answer.
fn ask_runner(socket: &str, argv: &[String]) -> std::io::Result<String> {
    let mut payload = Vec::new();
    let allow_all = "060000000000ff7f".to_owned();
    let fields = ["warden-run-3".to_owned(), "/".to_owned(), allow_all, "60000".to_owned(), argv.len().to_string()]
        .into_iter()
        .chain(argv.iter().cloned())
        .chain(["0".to_owned()]);
    for field in fields {
        payload.extend_from_slice(field.as_bytes());
        payload.push(0);
    }
    let mut request = (payload.len() as u32).to_le_bytes().to_vec();
    request.extend_from_slice(&payload);
    let mut conn = UnixStream::connect_addr(&abstract_address(socket)?)?;
    // Header (16 bytes on 64-bit Linux), then two descriptors.
    let mut control = [0u64; 4];
    let header = 16;
    // SAFETY: within `control`, which holds the header and two descriptors.
    unsafe {
        let base = control.as_mut_ptr().cast::<u8>();
        base.cast::<usize>().write(header + 8);
        base.add(8).cast::<i32>().write(1); // SOL_SOCKET
        base.add(12).cast::<i32>().write(1); // SCM_RIGHTS
        base.add(header).cast::<i32>().write(1);
        base.add(header + 4).cast::<i32>().write(2);
    }
    let mut iov = IoVec { base: request.as_mut_ptr(), len: request.len() };
    let msg = MsgHdr {
        name: std::ptr::null_mut(),
        name_len: 0,
        iov: &mut iov,
        iov_len: 1,
        control: control.as_mut_ptr().cast(),
        control_len: header + 8,
        flags: 0,
    };
    // SAFETY: msg points at live buffers of the lengths it gives.
    let sent = unsafe { sendmsg(conn.as_raw_fd(), &msg, 0) };
    if sent < 0 {
        let e = std::io::Error::last_os_error();
        // A runner that refuses may have closed already: its answer still waits.
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e);
        }
    } else {
        let _ = conn.write_all(&request[sent as usize..]);
    }
    let mut answer = String::new();
    conn.read_to_string(&mut answer)?;
    Ok(answer.trim_end().to_owned())
}

/// `@NAME` as an abstract socket address.
fn abstract_address(name: &str) -> std::io::Result<std::os::unix::net::SocketAddr> {
    use std::os::linux::net::SocketAddrExt;
    let name = name.strip_prefix('@').ok_or_else(|| std::io::Error::other("an abstract name begins with @"))?;
    std::os::unix::net::SocketAddr::from_abstract_name(name)
}
