//! Commands started by the runner inside the container (`runner/main.rs`):
//! its program on the host, how Warden reaches it, and one command's request,
//! output and end.
//!
//! The runner listens on an abstract socket of the container's network
//! namespace, which nothing in the container's files can remove or replace.
//! Warden reaches it from a thread that enters that namespace (which takes
//! the right to, as root has), from outside the container's PID namespace
//! (the runner serves no one inside it), and believes only a peer that is the
//! container's init: the runner is PID 1, which no command can replace (the
//! container ends when it dies). A
//! command's stdout and stderr are pipes of Warden's own, handed over with the
//! request, so the runner never copies a byte of output. The runner keeps the
//! command's time limit and ends it, with every process it made, when it
//! exits, when its time is up or when Warden's side of the connection closes.

use std::ffi::OsString;
use std::io::{IoSlice, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

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
/// The runner's socket: an abstract name, in the container's own network namespace.
const SOCKET_NAME: &str = "warden-runner";

static PROGRAM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/warden-runner"));

/// Which runner this build has: a container started with another (an older
/// Warden's, speaking another protocol) counts as made with other settings.
pub fn program_digest() -> String {
    static DIGEST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DIGEST.get_or_init(|| blake3::hash(PROGRAM).to_hex().to_string()).clone()
}

/// The container's entrypoint: the runner, listening on its socket, whatever the image names.
pub fn entrypoint() -> Vec<String> {
    vec![PROGRAM_INSIDE.to_owned(), format!("@{SOCKET_NAME}")]
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

/// Whether process `pid` is in the cgroup of the container with the full id
/// `id`: a folder of its cgroup path named `libpod-ID` or `libpod-ID.scope`
/// (podman), `ID` or `docker-ID.scope` (docker); never a name that merely
/// holds the id (`libpod-conmon-ID.scope` is podman's monitor, outside).
pub(crate) fn in_container(pid: u32, id: &str) -> bool {
    let names_it = |folder: &str| {
        let bare = folder.strip_suffix(".scope").unwrap_or(folder);
        let bare = bare.strip_prefix("libpod-").or_else(|| bare.strip_prefix("docker-")).unwrap_or(bare);
        bare == id
    };
    id.len() >= 32
        && std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
            .is_ok_and(|groups| groups.lines().filter_map(|l| l.splitn(3, ':').nth(2)).any(|path| path.split('/').any(names_it)))
}

/// When process `pid` started, in clock ticks since boot (`/proc/PID/stat`'s
/// 22nd field): with the PID, a process that no reuse of the number can pass for.
pub(crate) fn started_at(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: count after its end.
    stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()
}

/// How Warden reaches one container's runner: the container's init (host
/// PID) and full id, looked up once and again after a restart.
pub struct Link {
    init: std::sync::Mutex<Option<(u32, String)>>,
    /// The container's id when its settings came from elsewhere than its
    /// labels (`kept.rs`): another container of the same name is refused.
    pinned: Option<String>,
    /// The way into the network namespace of the init last reached.
    door: std::sync::Mutex<Option<Door>>,
    /// What the runner loads into each command before it starts it: the
    /// program `bwrap --seccomp` would get, made once for the container.
    seccomp: Vec<u8>,
    /// The host files the container binds read-only: locked again and
    /// handed to a runner this link has not handed them to yet (one started
    /// again, by Warden, the engine or a person; a kept sandbox attached to).
    covered: Vec<PathBuf>,
    /// The runner (init, network namespace) that holds them.
    held_by: std::sync::Mutex<Option<(u32, u64)>>,
}

/// Why a command cannot be started: the runner cannot be reached.
pub fn unreachable(why: &str) -> ShellError {
    ShellError::Engine(format!(
        "Warden starts a container's commands only through its runner, and {why}; the command was not run. \
         Reaching it takes entering the container's network namespace: run Warden as the engine's user (root for \
         rootful podman or docker). If the sandbox is older than this Warden, stop it and start it again"
    ))
}

impl Link {
    pub fn new(settings: &crate::container::ExecSettings) -> Result<Link, ShellError> {
        Ok(Link {
            init: std::sync::Mutex::default(),
            pinned: None,
            door: std::sync::Mutex::default(),
            seccomp: crate::seccomp::program_bytes(settings.plan.allow_unix_sockets)?,
            covered: settings.covers.iter().map(|c| c.path.clone()).chain(settings.placeholders.iter().cloned()).collect(),
            held_by: std::sync::Mutex::default(),
        })
    }

    /// A link to the container `id` (whose init is `init`, 0 when not
    /// known): no other container is reached through it, even one that takes
    /// the name after it, since its settings are another's.
    pub fn pinned(settings: &crate::container::ExecSettings, init: u32, id: &str) -> Result<Link, ShellError> {
        let link = Link { pinned: Some(id.to_owned()), ..Link::new(settings)? };
        if init != 0 {
            *link.init.lock().unwrap_or_else(|p| p.into_inner()) = Some((init, id.to_owned()));
        }
        Ok(link)
    }

    /// Pins this link to the container it has reached (see [`Link::pinned`]).
    pub fn pin_to_known(&mut self) {
        self.pinned = self.known().map(|(_, id)| id);
    }

    /// The container's init and full id, once looked up.
    pub fn known(&self) -> Option<(u32, String)> {
        self.init.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A connection to the container's runner, with the init it runs under:
    /// the container started again first if it stopped under its sandbox (the
    /// engine restarted, say).
    pub async fn reach_running(&self, engine: &Engine, container: &str) -> Result<Reached, ShellError> {
        let (conn, init) = self.connect(engine, container).await?;
        let netns = netns_cookie(&conn);
        if *self.held_by.lock().unwrap_or_else(|p| p.into_inner()) == Some((init, netns)) {
            return Ok(Reached { conn, init, netns });
        }
        // A runner that holds none of the placeholders yet: they are handed
        // over first (the runner serves one connection at a time).
        drop(conn);
        let held = crate::placeholders::Held::take_existing(&self.covered)?;
        self.hold(engine, container, &held.files()).await?;
        held.handed_over();
        let (conn, init) = self.connect(engine, container).await?;
        let netns = netns_cookie(&conn);
        Ok(Reached { conn, init, netns })
    }

    /// Starts `argv` by the runner on `reached`, under Warden's seccomp
    /// filter, with `timeout` kept by the runner itself.
    pub fn start(&self, reached: Reached, argv: &[OsString], env: &[String], cwd: &str, timeout: Duration) -> Result<Started, ShellError> {
        let request = encode(argv, env, cwd, &self.seccomp, timeout)?;
        let (stdout, stderr) = send(&reached.conn, &request).map_err(|e| ShellError::Engine(format!("the container's runner: {e}")))?;
        Ok(Started { conn: reached.conn, stdout, stderr })
    }

    /// A TCP socket listening on 127.0.0.1:`port` inside the container, made by the runner.
    pub async fn listen(&self, engine: &Engine, container: &str, port: u16) -> Result<TcpListener, ShellError> {
        let (conn, _) = self.connect(engine, container).await?;
        let payload = format!("warden-listen-1\0{port}\0").into_bytes();
        (&conn).write_all(&[&(payload.len() as u32).to_le_bytes()[..], &payload].concat())?;
        receive_listener(&conn, port).map_err(|e| ShellError::Engine(format!("the container's runner: {e}")))
    }

    /// Hands `files` to the runner, which keeps them open until it ends:
    /// their locks keep the placeholders the container covers on the host
    /// (`placeholders.rs`), whoever started it and whatever happens to Warden.
    pub async fn hold(&self, engine: &Engine, container: &str, files: &[BorrowedFd<'_>]) -> Result<(), ShellError> {
        let failed = |why: String| ShellError::Engine(format!("the container's runner did not take the placeholders it covers: {why}"));
        let mut by = None;
        for chunk in files.chunks(HELD_PER_REQUEST).chain(files.is_empty().then_some(&[][..])) {
            let (conn, init) = self.connect(engine, container).await?;
            by = Some((init, netns_cookie(&conn)));
            let payload = b"warden-hold-1\0";
            let request = [&(payload.len() as u32).to_le_bytes()[..], payload].concat();
            let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(HELD_PER_REQUEST))];
            let mut ancillary = SendAncillaryBuffer::new(&mut space);
            ancillary.push(SendAncillaryMessage::ScmRights(chunk));
            let sent = rustix::net::sendmsg(&conn, &[IoSlice::new(&request)], &mut ancillary, SendFlags::empty()).map_err(|e| failed(e.to_string()))?;
            (&conn).write_all(&request[sent..]).map_err(|e| failed(e.to_string()))?;
            let mut answer = String::new();
            std::io::Read::read_to_string(&mut &conn, &mut answer).map_err(|e| failed(e.to_string()))?;
            if answer != format!("held {}\n", chunk.len()) {
                return Err(failed(answer.trim_end().to_owned()));
            }
        }
        *self.held_by.lock().unwrap_or_else(|p| p.into_inner()) = by;
        Ok(())
    }

    /// Waits until the runner of a container that has just started (or
    /// restarted) answers; false when it does not within a few seconds.
    pub async fn ready(&self, engine: &Engine, container: &str) -> Result<bool, ShellError> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let (init, id) = self.init(engine, container, true).await?;
            if let Peer::Runner { .. } = self.reach(init, &id)? {
                return Ok(true);
            }
            if tokio::time::Instant::now() > deadline {
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A connection to the runner, checked to be it, and the container's
    /// init. A container that is not running is started again first.
    async fn connect(&self, engine: &Engine, container: &str) -> Result<(UnixStream, u32), ShellError> {
        for fresh in [false, true] {
            let (init, id) = self.init(engine, container, fresh).await?;
            match self.reach(init, &id)? {
                Peer::Runner { conn } => return Ok((conn, init)),
                // The container may have restarted under a new init.
                Peer::Gone | Peer::Impostor | Peer::Absent(_) if !fresh => continue,
                Peer::Gone => {
                    self.start_again(engine, container).await?;
                    let (init, id) = self.init(engine, container, false).await?;
                    if let Peer::Runner { conn } = self.reach(init, &id)? {
                        return Ok((conn, init));
                    }
                }
                // Just (re)started: give the runner its moment to listen.
                Peer::Absent(why) => {
                    if self.ready(engine, container).await? {
                        let (init, id) = self.init(engine, container, false).await?;
                        if let Peer::Runner { conn } = self.reach(init, &id)? {
                            return Ok((conn, init));
                        }
                    }
                    return Err(unreachable(&why));
                }
                Peer::Impostor => return Err(unreachable("what answers at its socket is not the runner")),
            }
        }
        Err(unreachable("the runner does not answer"))
    }

    /// Starts again a container that stopped under its sandbox, and waits for its runner.
    async fn start_again(&self, engine: &Engine, container: &str) -> Result<(), ShellError> {
        let again = |why: String| {
            ShellError::Engine(format!("the container {container} stopped and could not be started again ({why}); stop the sandbox and start it again"))
        };
        engine.serving().await?;
        match crate::container::lifecycle::existing(engine, container).await? {
            Some(found) if found.running => {}
            Some(_) => crate::container::lifecycle::start(engine, container).await.map_err(|e| again(e.to_string()))?,
            None => return Err(again("it is gone".into())),
        }
        if !self.ready(engine, container).await? {
            return Err(again("its runner did not answer within 5 s".into()));
        }
        Ok(())
    }

    async fn init(&self, engine: &Engine, container: &str, fresh: bool) -> Result<(u32, String), ShellError> {
        if !fresh && let Some(known) = self.init.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return Ok(known);
        }
        // Warden's own podman service may have exited while idle.
        engine.serving().await?;
        let inspect = engine.api().await?.inspect_container(container, None).await.map_err(|e| engine_error(engine, "inspect the container", e))?;
        let pid = inspect.state.and_then(|s| s.pid).filter(|&p| p > 0).map(|p| p as u32).unwrap_or(0);
        let known = (pid, inspect.id.unwrap_or_default());
        if self.pinned.as_ref().is_some_and(|id| *id != known.1) {
            return Err(unreachable("another container of the same name has replaced the sandbox's; stop the sandbox and start it again"));
        }
        *self.init.lock().unwrap_or_else(|p| p.into_inner()) = Some(known.clone());
        Ok(known)
    }
}

/// A connection to a container's runner, and the init it runs under.
pub struct Reached {
    conn: UnixStream,
    pub init: u32,
    /// The network namespace the runner was reached in ([`netns_cookie`]).
    pub netns: u64,
}

/// The kernel's cookie for the network namespace of the socket `fd`: unique
/// for the life of the system, where a PID or an inode may be used again
/// (a container restarted under the PID of the last one). 0 where the
/// kernel has none (before Linux 5.14).
pub fn netns_cookie(fd: impl AsFd) -> u64 {
    use std::os::fd::AsRawFd;
    let mut cookie: u64 = 0;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: a u64 to write, its length given.
    let got = unsafe { libc::getsockopt(fd.as_fd().as_raw_fd(), libc::SOL_SOCKET, libc::SO_NETNS_COOKIE, (&raw mut cookie).cast(), &mut len) };
    if got == 0 { cookie } else { 0 }
}

/// Who answered at the runner's socket.
enum Peer {
    Runner { conn: UnixStream },
    /// Nobody, and why.
    Absent(String),
    /// The init known is no longer the container's (it restarted, or stopped).
    Gone,
    /// Something other than the runner.
    Impostor,
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
    stdout: OwnedFd,
    stderr: OwnedFd,
}

/// Files handed to the runner in one request (the kernel takes at most 253).
const HELD_PER_REQUEST: usize = 200;

/// How long Warden waits on the runner's socket to connect, or for a
/// request to be taken.
const PATIENCE: Duration = Duration::from_secs(2);

/// A thread that lives in the network namespace of one container's init and
/// makes sockets there: a socket keeps the namespace it was made in, so the
/// runner's abstract name is then connected to from any thread. Made once per
/// init (entering a namespace costs a thread and a `setns`); it ends with its `Door`.
struct Door {
    init: u32,
    requests: std::sync::mpsc::Sender<std::sync::mpsc::Sender<std::io::Result<OwnedFd>>>,
}

impl Door {
    fn open(init: u32) -> Result<Door, String> {
        let namespace = std::fs::File::open(format!("/proc/{init}/ns/net")).map_err(|e| format!("its network namespace cannot be opened ({e})"))?;
        let (requests, asked) = std::sync::mpsc::channel::<std::sync::mpsc::Sender<std::io::Result<OwnedFd>>>();
        let (entered, outcome) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("warden-runner-door".into())
            .spawn(move || {
                let inside = rustix::thread::move_into_link_name_space(namespace.as_fd(), Some(rustix::thread::LinkNameSpaceType::Network));
                let failed = inside.is_err();
                let _ = entered.send(inside.map_err(|e| format!("its network namespace cannot be entered ({e})")));
                if failed {
                    return;
                }
                drop(namespace);
                for reply in asked {
                    let socket = rustix::net::socket_with(AddressFamily::UNIX, SocketType::STREAM, SocketFlags::CLOEXEC, None);
                    let _ = reply.send(socket.map_err(std::io::Error::from));
                }
            })
            .map_err(|e| e.to_string())?;
        outcome.recv().map_err(|_| "the thread that enters it stopped".to_owned())??;
        Ok(Door { init, requests })
    }

    /// A connection to the runner's socket, made in the namespace.
    fn connect(&self) -> Result<UnixStream, String> {
        let (reply, socket) = std::sync::mpsc::channel();
        self.requests.send(reply).map_err(|_| "the thread in its network namespace stopped".to_owned())?;
        let socket = socket.recv().map_err(|_| "the thread in its network namespace stopped".to_owned())?.map_err(|e| e.to_string())?;
        let address = SocketAddrUnix::new_abstract_name(SOCKET_NAME.as_bytes()).map_err(|e| e.to_string())?;
        rustix::net::sockopt::set_socket_timeout(&socket, Timeout::Send, Some(PATIENCE)).map_err(|e| e.to_string())?;
        rustix::net::sockopt::set_socket_timeout(&socket, Timeout::Recv, Some(PATIENCE)).map_err(|e| e.to_string())?;
        rustix::net::connect(&socket, &address).map_err(|e| format!("nothing answers at its socket ({e})"))?;
        Ok(UnixStream::from(socket))
    }
}

impl Link {
    /// The runner of the container (init `init`, full id `id`), connected to and checked.
    fn reach(&self, init: u32, id: &str) -> Result<Peer, ShellError> {
        if init == 0 || !in_container(init, id) {
            return Ok(Peer::Gone);
        }
        let conn = {
            let mut door = self.door.lock().unwrap_or_else(|p| p.into_inner());
            let known = door.take().filter(|d| d.init == init);
            // A door kept from before may lead into a namespace that is gone
            // (a container restarted under the same PID): opened again once.
            let kept = known.as_ref().map(Door::connect);
            match kept {
                Some(Ok(conn)) => {
                    *door = known;
                    conn
                }
                _ => {
                    let opened = match Door::open(init) {
                        Ok(opened) => opened,
                        Err(why) => return Ok(Peer::Absent(why)),
                    };
                    let conn = opened.connect();
                    *door = Some(opened);
                    match conn {
                        Ok(conn) => conn,
                        Err(why) => return Ok(Peer::Absent(why)),
                    }
                }
            }
        };
        let peer = rustix::net::sockopt::socket_peercred(&conn).map_err(std::io::Error::from)?;
        let pid = peer.pid.as_raw_nonzero().get() as u32;
        // Checked again after the connection: init is still this container's,
        // and the peer is init itself, the runner (which no command can
        // replace: the container ends with it).
        if pid != init || !in_container(init, id) {
            return Ok(Peer::Impostor);
        }
        Ok(Peer::Runner { conn })
    }
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
fn encode(argv: &[OsString], env: &[String], cwd: &str, seccomp: &[u8], timeout: Duration) -> Result<Vec<u8>, ShellError> {
    let fields = argv.iter().map(|a| a.as_bytes()).chain(env.iter().map(|e| e.as_bytes())).chain([cwd.as_bytes()]);
    if fields.into_iter().any(|f| f.contains(&0)) {
        return Err(ShellError::Policy("a command, its variables or its folder holds a NUL byte; it was not run".into()));
    }
    let mut payload = Vec::new();
    let mut field = |bytes: &[u8]| {
        payload.extend_from_slice(bytes);
        payload.push(0);
    };
    field(b"warden-run-3");
    field(cwd.as_bytes());
    field(seccomp.iter().map(|b| format!("{b:02x}")).collect::<String>().as_bytes());
    // At least a millisecond: 0 would mean no limit.
    field(timeout.as_millis().clamp(1, u64::MAX as u128).to_string().as_bytes());
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
    /// A handle that cancels the command: Warden's side of the connection
    /// says no more, and the runner ends the command and all it made.
    pub fn canceller(&self) -> std::io::Result<UnixStream> {
        self.conn.try_clone()
    }

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
            while out_open || err_open || conn_open {
                let event = tokio::select! {
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
                                Some(_) => Event::Started,
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
    match answer.split_once(' ').unwrap_or((answer, "")) {
        ("exit", n) if let Some(code) = number(n) => Event::Exited(code),
        ("signal", n) if let Some(signal) = number(n) => Event::Exited(128 + signal),
        ("timeout", "") => Event::TimedOut,
        ("cancelled", "") => Event::Cancelled,
        ("error", why) => Event::Failed(ShellError::Engine(format!("the container's runner could not start the command: {why}"))),
        // No answer: the runner is gone (and the container with it), or the
        // command's supervisor was killed (by another command).
        _ => Event::Failed(ShellError::Engine("the command's supervisor in the container ended before the command did (the container stopped, or another command killed it); the command and its processes were ended".into())),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::linux::net::SocketAddrExt;

    use super::*;

    #[test]
    fn a_request_is_its_length_then_nul_terminated_fields() {
        let argv = [OsString::from("sh"), OsString::from("-c"), OsString::from("true")];
        let request = encode(&argv, &["A=1".into()], "/w", &[0x06, 0, 0, 0, 0, 0, 0xff, 0x7f], Duration::from_secs(2)).unwrap();
        let payload = nul_terminated(&["warden-run-3", "/w", "060000000000ff7f", "2000", "3", "sh", "-c", "true", "1", "A=1"]);
        assert_eq!(&request[..4], (payload.len() as u32).to_le_bytes());
        assert_eq!(&request[4..], payload);
    }

    fn nul_terminated(fields: &[&str]) -> Vec<u8> {
        fields.iter().flat_map(|f| f.bytes().chain([0])).collect()
    }

    /// The runner's program, started on the host with an abstract socket of
    /// its own name, in a PID namespace of its own as in a container
    /// (`inside`), or in this process's, as a command of its container would be.
    fn runner_in(dir: &std::path::Path, inside: bool) -> (std::process::Child, String) {
        use std::os::unix::fs::PermissionsExt;
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let program = dir.join("runner");
        std::fs::write(&program, PROGRAM).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let name = format!("warden-test-{}-{}", std::process::id(), NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let mut command = if inside {
            let mut unshare = std::process::Command::new("unshare");
            // Its own /proc too, as a container's: the runner finds its children there.
            unshare.args(["--pid", "--fork", "--kill-child", "--mount-proc"]).arg(&program);
            unshare
        } else {
            std::process::Command::new(&program)
        };
        let child = command.arg(format!("@{name}")).spawn().unwrap();
        for _ in 0..500 {
            if open(&name).is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        (child, name)
    }

    /// Asserts that the runner outlived what the test had it do, and ends it.
    fn still_serving(mut runner: std::process::Child) {
        assert!(runner.try_wait().unwrap().is_none(), "the runner stopped");
        let _ = runner.kill();
        let _ = runner.wait();
    }

    fn open(name: &str) -> Option<UnixStream> {
        UnixStream::connect_addr(&std::os::unix::net::SocketAddr::from_abstract_name(name).ok()?).ok()
    }

    /// Sends `request` (with two pipes when `with_pipes`); the runner's answer and the command's stdout.
    /// A runner that refuses closes with the request unread, which may reset the connection
    /// before its answer is read: then asked again.
    fn ask(socket: &str, request: &[u8], with_pipes: bool) -> (String, String) {
        for _ in 0..5 {
            if let Ok(answered) = try_ask(socket, request, with_pipes) {
                return answered;
            }
        }
        panic!("the runner's answer was lost to a reset five times");
    }

    fn try_ask(socket: &str, request: &[u8], with_pipes: bool) -> std::io::Result<(String, String)> {
        let mut conn = open(socket).unwrap();
        let mut stdout = String::new();
        // A runner that refuses may close before the request is all sent.
        if with_pipes {
            if let Ok((out, _err)) = send(&conn, request) {
                std::fs::File::from(out).read_to_string(&mut stdout).unwrap();
            }
        } else {
            let _ = conn.write_all(request);
        }
        let mut answer = String::new();
        conn.read_to_string(&mut answer)?;
        Ok((answer, stdout))
    }

    /// Whether a process of this machine has `marker` in its command line.
    fn running(marker: &str) -> bool {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .any(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
    }

    fn shell(script: &str) -> Vec<OsString> {
        ["/bin/sh", "-c", script].map(OsString::from).to_vec()
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn no_process_outlives_its_command_and_the_runner_keeps_the_time_limit() {
        let dir = tempfile::tempdir().unwrap();
        let (runner, socket) = runner_in(dir.path(), true);
        let filter = crate::seccomp::program_bytes(false).unwrap();
        let marker = |n: u32| format!("{}.{n}", 7000 + std::process::id() % 1000);
        // Left in the background by a command that ends: ended with it.
        let left = marker(1);
        let request = encode(&shell(&format!("sleep {left} & setsid sleep {left} & echo started")), &[], "/", &filter, Duration::from_secs(30)).unwrap();
        let (answer, stdout) = ask(&socket, &request, true);
        assert!(answer.ends_with("\nexit 0\n") && stdout == "started\n", "{answer} {stdout}");
        assert!(!running(&format!("sleep {left}")), "a background process outlived its command");
        // Past its time: ended by the runner, with all it made.
        let slow = marker(2);
        let request = encode(&shell(&format!("sleep {slow} & sleep {slow}")), &[], "/", &filter, Duration::from_millis(300)).unwrap();
        let started = std::time::Instant::now();
        let (answer, _) = ask(&socket, &request, true);
        assert!(answer.ends_with("\ntimeout\n"), "{answer}");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        assert!(!running(&format!("sleep {slow}")));
        // Warden gone (the connection closed): the command and all it made end.
        let orphaned = marker(3);
        let mut conn = open(&socket).unwrap();
        let (_out, _err) = send(&conn, &encode(&shell(&format!("sleep {orphaned} & sleep {orphaned}")), &[], "/", &filter, Duration::from_secs(600)).unwrap()).unwrap();
        let mut line = [0u8; 64];
        let n = conn.read(&mut line).unwrap();
        assert!(line[..n].starts_with(b"pid "), "{:?}", String::from_utf8_lossy(&line[..n]));
        std::thread::sleep(Duration::from_millis(200));
        assert!(running(&format!("sleep {orphaned}")));
        drop(conn);
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            !running(&format!("sleep {orphaned}"))
        });
        assert!(gone, "the command outlived Warden's connection");
        still_serving(runner);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_command_cannot_signal_its_supervisor_the_runner_or_init() {
        let dir = tempfile::tempdir().unwrap();
        let (runner, socket) = runner_in(dir.path(), true);
        let filter = crate::seccomp::program_bytes(false).unwrap();
        // In the runner's PID namespace, the runner is 1 (it has no init of its own here).
        let script = "for target in $PPID 1 -1; do kill -STOP $target 2>/dev/null && echo \"stopped $target\" || echo \"refused $target\"; done";
        let (answer, stdout) = ask(&socket, &encode(&shell(script), &[], "/", &filter, Duration::from_secs(10)).unwrap(), true);
        assert!(answer.ends_with("\nexit 0\n"), "{answer}");
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 3, "{stdout}");
        assert!(lines.iter().all(|l| l.starts_with("refused ")), "{stdout}");
        still_serving(runner);
    }

    #[test]
    fn a_command_cannot_slow_its_supervisor_or_the_runner() {
        // A missing tool would print "refused" too.
        for tool in ["renice", "ionice", "chrt", "taskset"] {
            assert!(std::process::Command::new("sh").args(["-c", &format!("command -v {tool}")]).status().unwrap().success(), "{tool} is not installed");
        }
        let dir = tempfile::tempdir().unwrap();
        let (runner, socket) = runner_in(dir.path(), true);
        let filter = crate::seccomp::program_bytes(false).unwrap();
        let script = "for target in $PPID 1; do \
                        renice -n 19 -p $target >/dev/null 2>&1 && echo \"reniced $target\" || echo refused; \
                        ionice -c 3 -p $target 2>/dev/null && echo \"ioniced $target\" || echo refused; \
                        chrt -i -p 0 $target 2>/dev/null && echo \"idled $target\" || echo refused; \
                        taskset -p 1 $target >/dev/null 2>&1 && echo \"pinned $target\" || echo refused; \
                      done; \
                      renice -n 19 -u $(id -u) >/dev/null 2>&1 && echo 'reniced the user' || echo refused; \
                      ionice -c 3 -u $(id -u) 2>/dev/null && echo 'ioniced the user' || echo refused; \
                      renice -n 1 -p $$ >/dev/null && echo 'itself: allowed'";
        let (answer, stdout) = ask(&socket, &encode(&shell(script), &[], "/", &filter, Duration::from_secs(10)).unwrap(), true);
        assert!(answer.ends_with("\nexit 0\n"), "{answer}");
        assert_eq!(stdout, format!("{}itself: allowed\n", "refused\n".repeat(10)));
        still_serving(runner);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_command_cannot_signal_them_by_a_pidfd_or_an_io_owner() {
        let dir = tempfile::tempdir().unwrap();
        let (runner, socket) = runner_in(dir.path(), true);
        let filter = crate::seccomp::program_bytes(false).unwrap();
        let script = r#"
import errno, fcntl, os, signal
def attempt(what, act):
    try:
        act()
        print(what, "done")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
for target in (os.getppid(), 1):
    attempt(f"pidfd {target}", lambda: signal.pidfd_send_signal(os.open(f"/proc/{target}", os.O_DIRECTORY), signal.SIGSTOP))
r, w = os.pipe()
attempt("F_SETOWN", lambda: fcntl.fcntl(r, fcntl.F_SETOWN, os.getppid()))
attempt("F_SETSIG", lambda: fcntl.fcntl(r, 10, signal.SIGKILL))
attempt("F_SETOWN_EX", lambda: fcntl.fcntl(r, 15, bytes(8)))
attempt("FIOSETOWN", lambda: fcntl.ioctl(r, 0x8901, bytes(4)))
attempt("F_GETFL", lambda: fcntl.fcntl(r, fcntl.F_GETFL))
"#;
        let argv = ["python3", "-c", script].map(OsString::from).to_vec();
        let (answer, stdout) = ask(&socket, &encode(&argv, &["PATH=/usr/bin:/bin".into()], "/", &filter, Duration::from_secs(10)).unwrap(), true);
        assert!(answer.ends_with("\nexit 0\n"), "{answer}");
        let lines: Vec<&str> = stdout.lines().collect();
        // The supervisor is 2 here: the runner is 1.
        assert_eq!(
            lines,
            ["pidfd 2 EPERM", "pidfd 1 EPERM", "F_SETOWN EPERM", "F_SETSIG EPERM", "F_SETOWN_EX EPERM", "FIOSETOWN EPERM", "F_GETFL done"],
            "{stdout}"
        );
        still_serving(runner);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_command_whose_supervisor_another_command_stopped_is_ended() {
        let dir = tempfile::tempdir().unwrap();
        let (mut runner, socket) = runner_in(dir.path(), true);
        let filter = crate::seccomp::program_bytes(false).unwrap();
        let noted = dir.path().join("supervisor");
        let victim = format!("echo $PPID > {0}.part && mv {0}.part {0}; sleep 30; echo outlived", noted.display());
        let request = encode(&shell(&victim), &[], "/", &filter, Duration::from_secs(60)).unwrap();
        let victims = socket.clone();
        let waiting = std::thread::spawn(move || ask(&victims, &request, true));
        for _ in 0..500 {
            if noted.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let supervisor = std::fs::read_to_string(&noted).unwrap().trim().to_owned();
        let (answer, stdout) = ask(&socket, &encode(&shell(&format!("kill -STOP {supervisor}; echo $?")), &[], "/", &filter, Duration::from_secs(10)).unwrap(), true);
        assert!(answer.ends_with("\nexit 0\n"), "{answer}");
        assert_eq!(stdout, "0\n", "the stop itself is another command's to send");
        let (answer, stdout) = waiting.join().unwrap();
        assert!(!answer.contains("exit"), "{answer}");
        assert_eq!(stdout, "", "the victim outlived its stopped supervisor");
        let _ = runner.kill();
        let _ = runner.wait();
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_runner_answers_malformed_requests_and_goes_on_serving() {
        let dir = tempfile::tempdir().unwrap();
        let (runner, socket) = runner_in(dir.path(), true);
        let framed = |fields: &[&str]| {
            let payload = nul_terminated(fields);
            [&(payload.len() as u32).to_le_bytes()[..], &payload].concat()
        };
        let filter = crate::seccomp::program_bytes(false).unwrap();
        let hex: String = filter.iter().map(|b| format!("{b:02x}")).collect();
        let cases: [(&[u8], bool, &str); 11] = [
            (b"xx", false, "error short request\n"),
            (&(5u32 << 20).to_le_bytes(), false, "error request too long\n"),
            (&framed(&["warden-run-9", "/", &hex, "10", "1", "true", "0"]), true, "error malformed request\n"),
            // The protocol before the runner kept the time limit.
            (&framed(&["warden-run-2", "/", &hex, "1", "true", "0"]), true, "error malformed request\n"),
            (&framed(&["warden-run-3", "/", &hex, "soon", "1", "true", "0"]), true, "error malformed request\n"),
            (&framed(&["warden-run-3", "/", &hex, "10", "999999", "true", "0"]), true, "error malformed request\n"),
            (&framed(&["warden-run-3", "/", &hex, "10", "0", "0"]), true, "error malformed request\n"),
            // Without a seccomp program, or with a broken one, nothing runs.
            (&framed(&["warden-run-3", "/", "", "10", "1", "true", "0"]), true, "error malformed request\n"),
            (&framed(&["warden-run-3", "/", &hex[2..], "10", "1", "true", "0"]), true, "error malformed request\n"),
            (&framed(&["warden-run-3", "/", &"zz".repeat(8), "10", "1", "true", "0"]), true, "error malformed request\n"),
            (&encode(&[OsString::from("true")], &[], "/", &filter, Duration::from_secs(1)).unwrap(), false, "error expected two descriptors\n"),
        ];
        for (request, with_pipes, expected) in cases {
            assert_eq!(ask(&socket, request, with_pipes).0, expected, "{request:?}");
        }
        let argv = ["/bin/sh", "-c", "echo \"$GREETING from $(pwd)\"; exit 4"].map(OsString::from);
        let (answer, stdout) = ask(&socket, &encode(&argv, &["GREETING=hello".into()], "/tmp", &filter, Duration::from_secs(10)).unwrap(), true);
        assert_eq!(stdout, "hello from /tmp\n");
        assert!(answer.starts_with("pid ") && answer.ends_with("\nexit 4\n"), "{answer}");
        // The command runs under the filter and no_new_privs.
        let argv = ["/bin/sh", "-c", "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status"].map(OsString::from);
        let (_, stdout) = ask(&socket, &encode(&argv, &[], "/", &filter, Duration::from_secs(10)).unwrap(), true);
        assert_eq!(stdout, "NoNewPrivs:\t1\nSeccomp:\t2\n");
        still_serving(runner);
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
        let request = encode(&argv, &[], "/", &crate::seccomp::program_bytes(false).unwrap(), Duration::from_secs(10)).unwrap();
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
        let second = Duration::from_secs(1);
        assert!(encode(&argv, &[], "/", &[], second).is_err());
        assert!(encode(&[OsString::from("true")], &["A=\0".into()], "/", &[], second).is_err());
        assert!(encode(&[OsString::from("true")], &[], "/w\0", &[], second).is_err());
    }

    #[test]
    fn answers_become_endings() {
        assert!(matches!(ending("exit 3\n"), Event::Exited(3)));
        assert!(matches!(ending("signal 9\n"), Event::Exited(137)));
        assert!(matches!(ending("timeout\n"), Event::TimedOut));
        assert!(matches!(ending("cancelled\n"), Event::Cancelled));
        let Event::Failed(e) = ending("error Resource temporarily unavailable\n") else { panic!() };
        assert_eq!(e.to_string(), "the container's runner could not start the command: Resource temporarily unavailable");
        let Event::Failed(e) = ending("") else { panic!() };
        assert!(e.to_string().contains("the command's supervisor in the container ended before the command did"), "{e}");
    }
}
