//! Commands started by the runner inside the container (`runner/main.rs`):
//! its program on the host, how Warden reaches it, and one command's request,
//! output and end.
//!
//! The runner listens on a socket in a small tmpfs of the container's own,
//! so that nothing a command writes there reaches the host. Warden reaches
//! it through the container's root as its init sees it (`/proc/PID/root`),
//! resolved inside that root, from outside the container's PID namespace
//! (the runner serves no one inside it), and believes only a peer that is the first
//! started child of the container's init: the runner, which no command can
//! replace while it lives (and the container ends when it dies). A command's
//! stdout and stderr are pipes of Warden's own, handed over with the request,
//! so the runner never copies a byte of output.

use std::ffi::OsString;
use std::io::{IoSlice, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::net::sockopt::Timeout;
use rustix::net::{AddressFamily, SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketAddrUnix, SocketFlags, SocketType};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use crate::container::engine::Engine;
use crate::container::exec::Event;
use crate::container::lifecycle::engine_error;
use crate::error::ShellError;

/// Where the runner's program appears inside the container, read-only.
pub const PROGRAM_INSIDE: &str = "/.warden/runner";
/// The container's own folder for the runner's socket.
pub const SOCKET_DIR_INSIDE: &str = "/.warden/run";
const SOCKET: &str = "runner.sock";

static PROGRAM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/warden-runner"));

/// Which runner this build has: a container started with another (an older
/// Warden's, speaking another protocol) counts as made with other settings.
pub fn program_digest() -> String {
    static DIGEST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DIGEST.get_or_init(|| blake3::hash(PROGRAM).to_hex().to_string()).clone()
}

/// The container's command: the runner, listening on its socket.
pub fn command() -> Vec<String> {
    vec![PROGRAM_INSIDE.to_owned(), format!("{SOCKET_DIR_INSIDE}/{SOCKET}")]
}

/// The runner's program on the host, written once per build into Warden's
/// private folder; `None` where it is not built (not Linux).
pub fn program() -> Result<Option<PathBuf>, ShellError> {
    if PROGRAM.is_empty() {
        return Ok(None);
    }
    let folder = crate::container::engine::own_folder().map_err(ShellError::Engine)?;
    let digest = program_digest();
    let path = folder.join(format!("runner-{}", &digest[..16]));
    if std::fs::read(&path).is_ok_and(|bytes| bytes == PROGRAM) {
        return Ok(Some(path));
    }
    let written = (|| {
        use std::os::unix::fs::OpenOptionsExt;
        let temp = folder.join(format!(".runner-{}-{}", std::process::id(), &digest[..16]));
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o555).open(&temp)?;
        file.write_all(PROGRAM)?;
        file.sync_all()?;
        std::fs::rename(&temp, &path)
    })();
    written.map_err(|e| ShellError::Engine(format!("cannot write the container runner into {}: {e}", folder.display())))?;
    Ok(Some(path))
}

/// Whether `pid` (in this process's PID namespace) is the runner of the
/// container whose init is `init`: init's child that started first. Every
/// process a command makes starts later, and one that outlives its command
/// becomes init's child too, but never an earlier one.
fn is_runner(pid: u32, init: u32) -> bool {
    let Ok(children) = std::fs::read_to_string(format!("/proc/{init}/task/{init}/children")) else { return false };
    let first = children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()).filter_map(|c| Some((start_time(c)?, c))).min();
    first.is_some_and(|(_, child)| child == pid)
}

/// Whether process `pid` is in the cgroup of the container with the full id `id`
/// (`.../libpod-ID...` for podman, `.../docker/ID` or `docker-ID.scope` for docker).
fn in_container(pid: u32, id: &str) -> bool {
    !id.is_empty() && std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|groups| groups.contains(id))
}

/// When `pid` started, in clock ticks since boot (`/proc/PID/stat`'s 22nd field).
fn start_time(pid: u32) -> Option<u64> {
    stat_field(pid, 19)?.parse().ok()
}

/// Stopped by a signal, or by a tracer.
fn is_stopped(pid: u32) -> bool {
    stat_field(pid, 0).is_some_and(|state| state == "T" || state == "t")
}

/// Starts a stopped runner again; whether it runs now.
fn resume(pid: u32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else { return false };
    rustix::process::kill_process(pid, rustix::process::Signal::CONT).is_ok()
}

/// Field `n` of `/proc/PID/stat` after the command name (0: the state).
fn stat_field(pid: u32, n: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].split(' ').nth(n).map(str::to_owned)
}

/// How Warden reaches one container's runner: the container's init (host
/// PID) and full id, looked up once and again after a restart.
pub struct Link {
    init: std::sync::Mutex<Option<(u32, String)>>,
    /// What the runner loads into each command before it starts it: the
    /// program `bwrap --seccomp` would get, made once for the container.
    seccomp: Vec<u8>,
}

impl Link {
    pub fn new(allow_unix_sockets: bool) -> Result<Link, ShellError> {
        Ok(Link { init: std::sync::Mutex::default(), seccomp: crate::seccomp::program_bytes(allow_unix_sockets)? })
    }

    /// Starts `argv` by the runner, under Warden's seccomp filter; `None`
    /// when there is no runner that answers (the engine then starts it).
    pub async fn start(&self, engine: &Engine, container: &str, argv: &[OsString], env: &[String], cwd: &str) -> Result<Option<Started>, ShellError> {
        let request = encode(argv, env, cwd, &self.seccomp)?;
        let Some((conn, runner)) = self.connect(engine, container).await? else { return Ok(None) };
        let (stdout, stderr) = send(&conn, &request)?;
        Ok(Some(Started { conn, runner, stdout, stderr }))
    }

    /// A TCP socket listening on 127.0.0.1:`port` inside the container, made
    /// by the runner; `None` when there is no runner that answers.
    pub async fn listen(&self, engine: &Engine, container: &str, port: u16) -> Result<Option<TcpListener>, ShellError> {
        let Some((conn, _)) = self.connect(engine, container).await? else { return Ok(None) };
        let payload = format!("warden-listen-1\0{port}\0").into_bytes();
        (&conn).write_all(&[&(payload.len() as u32).to_le_bytes()[..], &payload].concat())?;
        receive_listener(&conn, port).map(Some).map_err(|e| ShellError::Engine(format!("the container's runner: {e}")))
    }

    /// Waits until the runner of a container that has just started (or
    /// restarted) answers; false when it does not within a few seconds.
    pub async fn ready(&self, engine: &Engine, container: &str) -> Result<bool, ShellError> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let (init, id) = self.init(engine, container, true).await?;
            if let Peer::Runner { .. } = reach(init, &id)? {
                return Ok(true);
            }
            if tokio::time::Instant::now() > deadline {
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A connection to the runner, checked to be it, and its PID.
    async fn connect(&self, engine: &Engine, container: &str) -> Result<Option<(UnixStream, u32)>, ShellError> {
        for fresh in [false, true] {
            let (init, id) = self.init(engine, container, fresh).await?;
            match reach(init, &id)? {
                Peer::Runner { conn, pid } => return Ok(Some((conn, pid))),
                // Just (re)started: give the runner its moment to listen.
                Peer::Absent if fresh => {
                    if !self.ready(engine, container).await? {
                        return Ok(None);
                    }
                    let (init, id) = self.init(engine, container, false).await?;
                    return Ok(match reach(init, &id)? {
                        Peer::Runner { conn, pid } => Some((conn, pid)),
                        _ => None,
                    });
                }
                Peer::Absent => return Ok(None),
                Peer::Stopped => {
                    eprintln!("warden: warning: the container's runner is stopped (by a command?); the engine starts the command");
                    return Ok(None);
                }
                // The container may have restarted under a new init.
                Peer::Gone | Peer::Impostor if !fresh => continue,
                Peer::Gone => return Ok(None),
                Peer::Impostor => break,
            }
        }
        eprintln!("warden: warning: what listens at the container's runner socket is not the runner (a command replaced it?); the engine starts the command");
        Ok(None)
    }

    /// The container's init as last found, if it is still the container's.
    pub fn init_now(&self) -> Option<u32> {
        let known = self.init.lock().unwrap_or_else(|p| p.into_inner()).clone()?;
        in_container(known.0, &known.1).then_some(known.0)
    }

    async fn init(&self, engine: &Engine, container: &str, fresh: bool) -> Result<(u32, String), ShellError> {
        if !fresh && let Some(known) = self.init.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return Ok(known);
        }
        let inspect = engine.api.inspect_container(container, None).await.map_err(|e| engine_error(engine, "inspect the container", e))?;
        let pid = inspect.state.and_then(|s| s.pid).filter(|&p| p > 0).map(|p| p as u32).unwrap_or(0);
        let known = (pid, inspect.id.unwrap_or_default());
        *self.init.lock().unwrap_or_else(|p| p.into_inner()) = Some(known.clone());
        Ok(known)
    }
}

/// Who answered at the runner's socket.
enum Peer {
    Runner { conn: UnixStream, pid: u32 },
    /// Nobody: no socket, or nothing listening.
    Absent,
    /// The init known is no longer the container's (it restarted, or stopped).
    Gone,
    /// Something other than the runner.
    Impostor,
    /// The runner, stopped (a command of the same user may send it SIGSTOP),
    /// and Warden may not start it again.
    Stopped,
}

/// The runner's answer to a `warden-listen-1` request: its one byte with the
/// listening socket, checked to be one on 127.0.0.1:`port`; else its error.
fn receive_listener(conn: &UnixStream, port: u16) -> std::io::Result<TcpListener> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut ancillary = RecvAncillaryBuffer::new(&mut space);
    let mut text = [0u8; 256];
    let msg = rustix::net::recvmsg(conn, &mut [std::io::IoSliceMut::new(&mut text)], &mut ancillary, RecvFlags::CMSG_CLOEXEC)?;
    let mut received: Option<OwnedFd> = None;
    for message in ancillary.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            for fd in fds {
                received.get_or_insert(fd);
            }
        }
    }
    let Some(fd) = received else {
        let said = String::from_utf8_lossy(&text[..msg.bytes]);
        return Err(std::io::Error::other(said.trim_end().strip_prefix("error ").unwrap_or("no listening socket").to_owned()));
    };
    let listener = TcpListener::from(fd);
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() || local.port() != port {
        return Err(std::io::Error::other("the runner sent a socket that is not the listener asked for"));
    }
    Ok(listener)
}

/// A command the runner started: its pipes and the connection its end comes on.
pub struct Started {
    conn: UnixStream,
    /// The runner's PID, to start it again if a command stops it meanwhile.
    runner: u32,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

/// How long Warden waits on the runner's socket to connect, or for a
/// request to be taken: a command may leave a listener there that never
/// accepts, or stop the runner.
const PATIENCE: Duration = Duration::from_secs(2);

/// The runner's socket in the container whose init is `init`, connected to.
/// The folder is resolved inside the container's root and the socket beneath
/// it, with no symlink anywhere and no other file system: a link a command
/// put there cannot lead Warden to a socket of the host (a mount's own, say).
fn connect(init: u32) -> Option<UnixStream> {
    let root = rustix::fs::open(format!("/proc/{init}/root"), OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).ok()?;
    let inside = SOCKET_DIR_INSIDE.trim_start_matches('/');
    let path_only = OFlags::PATH | OFlags::CLOEXEC;
    let folder = rustix::fs::openat2(&root, inside, path_only | OFlags::DIRECTORY, Mode::empty(), ResolveFlags::IN_ROOT | ResolveFlags::NO_SYMLINKS).ok()?;
    let beneath = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_XDEV;
    let socket = rustix::fs::openat2(&folder, SOCKET, path_only, Mode::empty(), beneath).ok()?;
    if rustix::fs::FileType::from_raw_mode(rustix::fs::fstat(&socket).ok()?.st_mode) != rustix::fs::FileType::Socket {
        return None;
    }
    let conn = rustix::net::socket_with(AddressFamily::UNIX, SocketType::STREAM, SocketFlags::CLOEXEC, None).ok()?;
    rustix::net::sockopt::set_socket_timeout(&conn, Timeout::Send, Some(PATIENCE)).ok()?;
    rustix::net::sockopt::set_socket_timeout(&conn, Timeout::Recv, Some(PATIENCE)).ok()?;
    let address = SocketAddrUnix::new(format!("/proc/self/fd/{}", socket.as_raw_fd())).ok()?;
    rustix::net::connect(&conn, &address).ok()?;
    Some(UnixStream::from(conn))
}

/// The runner of the container (init `init`, full id `id`), connected to and checked.
fn reach(init: u32, id: &str) -> Result<Peer, ShellError> {
    if init == 0 || !in_container(init, id) {
        return Ok(Peer::Gone);
    }
    let Some(conn) = connect(init) else { return Ok(Peer::Absent) };
    let peer = rustix::net::sockopt::socket_peercred(&conn).map_err(std::io::Error::from)?;
    let pid = peer.pid.as_raw_nonzero().get() as u32;
    // Checked again after the connection: init is still this container's, and the peer its runner.
    if !is_runner(pid, init) || !in_container(init, id) {
        return Ok(Peer::Impostor);
    }
    if is_stopped(pid) {
        // A command of the same user stopped it; Warden may start it again.
        if !resume(pid) {
            return Ok(Peer::Stopped);
        }
    }
    Ok(Peer::Runner { conn, pid })
}

/// Sends `request` with the write ends of two new pipes; returns their read ends.
fn send(conn: &UnixStream, request: &[u8]) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (out_read, out_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let (err_read, err_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut ancillary = SendAncillaryBuffer::new(&mut space);
    let fds = [out_write.as_fd(), err_write.as_fd()];
    ancillary.push(SendAncillaryMessage::ScmRights(&fds));
    let sent = rustix::net::sendmsg(conn, &[IoSlice::new(request)], &mut ancillary, SendFlags::empty())?;
    let mut conn = conn;
    conn.write_all(&request[sent..])?;
    Ok((out_read, err_read))
}

/// The request's bytes, as the runner reads them; NUL-terminated fields
/// cannot hold a NUL (the seccomp program goes in hex).
fn encode(argv: &[OsString], env: &[String], cwd: &str, seccomp: &[u8]) -> Result<Vec<u8>, ShellError> {
    let fields = argv.iter().map(|a| a.as_bytes()).chain(env.iter().map(|e| e.as_bytes())).chain([cwd.as_bytes()]);
    if fields.into_iter().any(|f| f.contains(&0)) {
        return Err(ShellError::Policy("a command, its variables or its folder holds a NUL byte; it was not run".into()));
    }
    let mut payload = Vec::new();
    let mut field = |bytes: &[u8]| {
        payload.extend_from_slice(bytes);
        payload.push(0);
    };
    field(b"warden-run-2");
    field(cwd.as_bytes());
    field(seccomp.iter().map(|b| format!("{b:02x}")).collect::<String>().as_bytes());
    field(argv.len().to_string().as_bytes());
    for arg in argv {
        field(arg.as_bytes());
    }
    field(env.len().to_string().as_bytes());
    for var in env {
        field(var.as_bytes());
    }
    let mut request = (payload.len() as u32).to_le_bytes().to_vec();
    request.extend_from_slice(&payload);
    Ok(request)
}

impl Started {
    /// Sends the command's PID, its output, then its end, to `events` until
    /// both pipes are closed and the runner has said how it ended.
    pub async fn pump(self, events: mpsc::Sender<Event>) {
        let ended = async {
            let mut stdout = tokio::net::unix::pipe::Receiver::from_owned_fd(self.stdout)?;
            let mut stderr = tokio::net::unix::pipe::Receiver::from_owned_fd(self.stderr)?;
            self.conn.set_nonblocking(true)?;
            let mut conn = tokio::net::UnixStream::from_std(self.conn)?;
            let (mut out_open, mut err_open, mut conn_open) = (true, true, true);
            let mut answer = Vec::new();
            let (mut out_buf, mut err_buf, mut conn_buf) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10], [0u8; 256]);
            let mut watch = tokio::time::interval(Duration::from_millis(250));
            while out_open || err_open || conn_open {
                let event = tokio::select! {
                    // A command may stop the runner while another waits on it for its end.
                    _ = watch.tick(), if conn_open => {
                        if is_stopped(self.runner) {
                            resume(self.runner);
                        }
                        continue;
                    }
                    n = stdout.read(&mut out_buf), if out_open => match n? {
                        0 => { out_open = false; continue }
                        n => Event::Out(out_buf[..n].to_vec()),
                    },
                    n = stderr.read(&mut err_buf), if err_open => match n? {
                        0 => { err_open = false; continue }
                        n => Event::Err(err_buf[..n].to_vec()),
                    },
                    n = conn.read(&mut conn_buf), if conn_open => match n? {
                        0 => { conn_open = false; continue }
                        n => {
                            answer.extend_from_slice(&conn_buf[..n]);
                            match take_pid(&mut answer) {
                                Some(pid) => Event::Started(pid),
                                None => continue,
                            }
                        }
                    },
                };
                if events.send(event).await.is_err() {
                    return Ok(None);
                }
            }
            Ok::<_, std::io::Error>(Some(answer))
        };
        let event = match ended.await {
            Ok(None) => return,
            Ok(Some(answer)) => ending(&String::from_utf8_lossy(&answer)),
            Err(e) => Event::Failed(ShellError::Engine(format!("the container's runner: {e}"))),
        };
        let _ = events.send(event).await;
    }
}

/// The command's PID inside the container, once the runner's first line has come; the line is taken.
fn take_pid(answer: &mut Vec<u8>) -> Option<u32> {
    let end = answer.iter().position(|&b| b == b'\n')?;
    let pid = std::str::from_utf8(&answer[..end]).ok()?.strip_prefix("pid ")?.parse().ok()?;
    answer.drain(..=end);
    Some(pid)
}

/// The runner's answer as the command's ending; a signal as a shell reports it.
fn ending(answer: &str) -> Event {
    let answer = answer.trim_end();
    let number = |s: &str| s.parse::<i32>().ok();
    match answer.split_once(' ') {
        Some(("exit", n)) if let Some(code) = number(n) => Event::Exited(code),
        Some(("signal", n)) if let Some(signal) = number(n) => Event::Exited(128 + signal),
        Some(("error", why)) => Event::Failed(ShellError::Engine(format!("the container's runner could not start the command: {why}"))),
        // No answer: the runner is gone, and the container with it.
        _ => Event::Failed(ShellError::Engine("the container stopped while the command ran".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_its_length_then_nul_terminated_fields() {
        let argv = [OsString::from("sh"), OsString::from("-c"), OsString::from("true")];
        let request = encode(&argv, &["A=1".into()], "/w", &[0x06, 0, 0, 0, 0, 0, 0xff, 0x7f]).unwrap();
        let payload = nul_terminated(&["warden-run-2", "/w", "060000000000ff7f", "3", "sh", "-c", "true", "1", "A=1"]);
        assert_eq!(&request[..4], (payload.len() as u32).to_le_bytes());
        assert_eq!(&request[4..], payload);
    }

    fn nul_terminated(fields: &[&str]) -> Vec<u8> {
        fields.iter().flat_map(|f| f.bytes().chain([0])).collect()
    }

    /// The runner's program, started on the host with a socket in `dir`, in
    /// a PID namespace of its own as in a container (`inside`), or in this
    /// process's, as a command of its container would be.
    fn runner_in(dir: &std::path::Path, inside: bool) -> (std::process::Child, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let program = dir.join("runner");
        std::fs::write(&program, PROGRAM).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let socket = dir.join("runner.sock");
        let mut command = if inside {
            let mut unshare = std::process::Command::new("unshare");
            unshare.args(["--pid", "--fork", "--kill-child"]).arg(&program);
            unshare
        } else {
            std::process::Command::new(&program)
        };
        let child = command.arg(&socket).spawn().unwrap();
        for _ in 0..500 {
            if UnixStream::connect(&socket).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        (child, socket)
    }

    /// Sends `request` (with two pipes when `with_pipes`); the runner's answer and the command's stdout.
    fn ask(socket: &std::path::Path, request: &[u8], with_pipes: bool) -> (String, String) {
        use std::io::Read;
        let mut conn = UnixStream::connect(socket).unwrap();
        let mut stdout = String::new();
        // A runner that refuses may close before the request is all sent.
        if with_pipes {
            if let Ok((out, _err)) = send(&conn, request) {
                std::fs::File::from(out).read_to_string(&mut stdout).unwrap();
            }
        } else {
            let _ = conn.write_all(request);
        }
        let _ = conn.shutdown(std::net::Shutdown::Write);
        let mut answer = String::new();
        conn.read_to_string(&mut answer).unwrap();
        (answer, stdout)
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_runner_answers_malformed_requests_and_goes_on_serving() {
        let dir = tempfile::tempdir().unwrap();
        let (mut runner, socket) = runner_in(dir.path(), true);
        let framed = |fields: &[&str]| {
            let payload = nul_terminated(fields);
            [&(payload.len() as u32).to_le_bytes()[..], &payload].concat()
        };
        let filter = crate::seccomp::program_bytes(false).unwrap();
        let hex: String = filter.iter().map(|b| format!("{b:02x}")).collect();
        let cases: [(&[u8], bool, &str); 10] = [
            (b"xx", false, "error short request\n"),
            (&(5u32 << 20).to_le_bytes(), false, "error request too long\n"),
            (&framed(&["warden-run-9", "/", &hex, "1", "true", "0"]), true, "error malformed request\n"),
            (&framed(&["warden-run-1", "/", "1", "true", "0"]), true, "error malformed request\n"),
            (&framed(&["warden-run-2", "/", &hex, "999999", "true", "0"]), true, "error malformed request\n"),
            (&framed(&["warden-run-2", "/", &hex, "0", "0"]), true, "error malformed request\n"),
            // Without a seccomp program, or with a broken one, nothing runs.
            (&framed(&["warden-run-2", "/", "", "1", "true", "0"]), true, "error malformed request\n"),
            (&framed(&["warden-run-2", "/", &hex[2..], "1", "true", "0"]), true, "error malformed request\n"),
            (&framed(&["warden-run-2", "/", &"zz".repeat(8), "1", "true", "0"]), true, "error malformed request\n"),
            (&encode(&[OsString::from("true")], &[], "/", &filter).unwrap(), false, "error expected two descriptors\n"),
        ];
        for (request, with_pipes, expected) in cases {
            assert_eq!(ask(&socket, request, with_pipes).0, expected, "{request:?}");
        }
        let argv = ["/bin/sh", "-c", "echo \"$GREETING from $(pwd)\"; exit 4"].map(OsString::from);
        let (answer, stdout) = ask(&socket, &encode(&argv, &["GREETING=hello".into()], "/tmp", &filter).unwrap(), true);
        assert_eq!(stdout, "hello from /tmp\n");
        assert!(answer.starts_with("pid ") && answer.ends_with("\nexit 4\n"), "{answer}");
        // The command runs under the filter and no_new_privs.
        let argv = ["/bin/sh", "-c", "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status"].map(OsString::from);
        let (_, stdout) = ask(&socket, &encode(&argv, &[], "/", &filter).unwrap(), true);
        assert_eq!(stdout, "NoNewPrivs:\t1\nSeccomp:\t2\n");
        assert!(runner.try_wait().unwrap().is_none(), "the runner stopped");
        let _ = runner.kill();
        let _ = runner.wait();
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_peer_the_runner_can_see_cannot_have_it_start_a_process() {
        // Here the runner shares this test's PID namespace, as a command
        // shares the runner's in its container: the request is refused,
        // whole and well-formed as it is.
        let dir = tempfile::tempdir().unwrap();
        let (mut runner, socket) = runner_in(dir.path(), false);
        let marker = dir.path().join("ran");
        let argv = ["/bin/sh", "-c", "touch \"$1\"", "sh"].map(OsString::from).into_iter().chain([marker.clone().into_os_string()]).collect::<Vec<_>>();
        let request = encode(&argv, &[], "/", &crate::seccomp::program_bytes(false).unwrap()).unwrap();
        let (answer, _) = ask(&socket, &request, true);
        assert_eq!(answer, "error the runner takes requests from Warden only\n");
        let (answer, _) = ask(&socket, b"\x15\0\0\0warden-listen-1\x003128\0", false);
        assert_eq!(answer, "error the runner takes requests from Warden only\n");
        assert!(!marker.exists());
        let _ = runner.kill();
        let _ = runner.wait();
    }

    #[test]
    fn the_first_line_gives_the_pid() {
        let mut answer = b"pid 42\nexit 0\n".to_vec();
        assert_eq!(take_pid(&mut answer), Some(42));
        assert_eq!(answer, b"exit 0\n");
        let mut partial = b"pid 4".to_vec();
        assert_eq!(take_pid(&mut partial), None);
        assert_eq!(take_pid(&mut b"exit 1\n".to_vec()), None);
    }

    #[test]
    fn a_nul_byte_in_a_field_is_refused_not_sent() {
        let argv = [OsString::from("sh\0-c")];
        assert!(encode(&argv, &[], "/", &[]).is_err());
        assert!(encode(&[OsString::from("true")], &["A=\0".into()], "/", &[]).is_err());
        assert!(encode(&[OsString::from("true")], &[], "/w\0", &[]).is_err());
    }

    #[test]
    fn answers_become_endings() {
        assert!(matches!(ending("exit 3\n"), Event::Exited(3)));
        assert!(matches!(ending("signal 9\n"), Event::Exited(137)));
        let Event::Failed(e) = ending("error Resource temporarily unavailable\n") else { panic!() };
        assert_eq!(e.to_string(), "the container's runner could not start the command: Resource temporarily unavailable");
        let Event::Failed(e) = ending("") else { panic!() };
        assert!(e.to_string().contains("the container stopped while the command ran"), "{e}");
    }

    #[test]
    fn only_the_first_child_of_init_is_the_runner() {
        use std::io::BufRead;
        // A shell stands for the container's init: two children, 50 ms apart.
        let mut init = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & echo $!; sleep 0.05; sleep 5 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(init.stdout.take().unwrap()).lines();
        let mut pid = || lines.next().unwrap().unwrap().parse::<u32>().unwrap();
        let (first, later) = (pid(), pid());
        assert!(is_runner(first, init.id()));
        assert!(!is_runner(later, init.id()));
        assert!(!is_runner(first, std::process::id()), "not a child of this init");
        for child in [first, later, init.id()] {
            let _ = std::process::Command::new("kill").arg(child.to_string()).status();
        }
        let _ = init.wait();
    }
}
