//! How a sandbox with no network of its own reaches the proxy.
//!
//! bubblewrap gives the command a new network namespace with only a loopback
//! interface. Before the command starts, the bridge (Warden's own binary,
//! bound into the sandbox) listens on `127.0.0.1:PORT` *inside* that
//! namespace, sends the listening socket to Warden over a Unix socket the
//! sandbox inherited, closes its copies and `exec`s the command. Warden then
//! accepts the command's connections itself, from outside. Nothing else in
//! the sandbox can reach beyond it: there is no route, and the command cannot
//! open a Unix socket (the seccomp filter) to reach anything either.

use std::ffi::OsString;
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;

use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags};

/// The port the proxy appears on inside the sandbox.
pub const PORT: u16 = 3128;

/// The variables that point a command's clients at the proxy. `socks5h`:
/// the proxy, not the command, resolves names.
pub fn proxy_env() -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{PORT}");
    let socks = format!("socks5h://127.0.0.1:{PORT}");
    let mut env = Vec::new();
    for (name, value) in [("HTTP_PROXY", &http), ("HTTPS_PROXY", &http), ("ALL_PROXY", &socks)] {
        env.push((name.to_owned(), value.clone()));
        env.push((name.to_ascii_lowercase(), value.clone()));
    }
    env
}

/// Points `env` at the proxy: [`proxy_env`] in place of any proxy variables it had.
pub fn point_at_proxy(env: &mut Vec<(String, String)>) {
    env.retain(|(name, _)| !is_proxy_variable(name));
    env.extend(proxy_env());
}

/// The names [`proxy_env`] sets, and the `NO_PROXY` that would bypass it.
pub fn is_proxy_variable(name: &str) -> bool {
    ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"].contains(&name.to_ascii_uppercase().as_str())
}

/// The arguments after the bridge program's own: `FD -- COMMAND...`.
pub fn arguments(fd: i32, command: &[OsString]) -> Vec<OsString> {
    let mut args = vec![OsString::from(fd.to_string()), OsString::from("--")];
    args.extend(command.iter().cloned());
    args
}

/// The bridge, inside the sandbox, given [`arguments`]. Returns only on failure,
/// with the exit status to end with.
pub fn main(args: &[OsString]) -> i32 {
    let (fd, command) = match args {
        [fd, dashes, command @ ..] if dashes == "--" && !command.is_empty() => (fd, command),
        _ => return usage(),
    };
    let Some(fd) = fd.to_str().and_then(|f| f.parse::<i32>().ok()).filter(|fd| *fd > 2) else { return usage() };
    // SAFETY: the runner passed this descriptor open, for the bridge alone.
    let control = unsafe { UnixStream::from_raw_fd(fd) };
    if let Err(e) = hand_over(&control) {
        eprintln!("warden: the network bridge could not start: {e}");
        return 126;
    }
    drop(control);
    let error = std::process::Command::new(&command[0]).args(&command[1..]).exec();
    eprintln!("warden: cannot run {}: {error}", command[0].to_string_lossy());
    if error.kind() == io::ErrorKind::NotFound { 127 } else { 126 }
}

fn usage() -> i32 {
    eprintln!("warden: the network bridge is started by Warden's shell runner, not by hand");
    2
}

fn hand_over(control: &UnixStream) -> io::Result<()> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, PORT))?;
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut ancillary = SendAncillaryBuffer::new(&mut space);
    let fds = [listener.as_fd()];
    ancillary.push(SendAncillaryMessage::ScmRights(&fds));
    rustix::net::sendmsg(control, &[IoSlice::new(b"L")], &mut ancillary, SendFlags::empty())?;
    Ok(())
}

/// Warden's side: the listening socket the bridge sends, or `None` once the
/// sandbox has closed its end without sending one.
pub fn receive(control: &UnixStream) -> io::Result<Option<TcpListener>> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut ancillary = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8; 1];
    let msg = rustix::net::recvmsg(control, &mut [IoSliceMut::new(&mut byte)], &mut ancillary, RecvFlags::CMSG_CLOEXEC)?;
    if msg.bytes == 0 {
        return Ok(None);
    }
    let mut received: Option<OwnedFd> = None;
    for message in ancillary.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            for fd in fds {
                received.get_or_insert(fd);
            }
        }
    }
    let fd = received.ok_or_else(|| io::Error::other("the bridge sent no socket"))?;
    let listener = TcpListener::from(fd);
    // Only a listening TCP socket will do: anything else is not the bridge's.
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() || local.port() != PORT {
        return Err(io::Error::other("the bridge sent a socket that is not its listener"));
    }
    Ok(Some(listener))
}
