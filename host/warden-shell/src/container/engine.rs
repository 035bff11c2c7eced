//! Finding a container engine that works, by asking it over the Docker API:
//! dockerd's socket, or podman's Docker-compatible service, which Warden
//! starts itself when none is running. A `docker` or `podman` binary on
//! `PATH` proves nothing (a client may have no daemon behind it).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::os::unix::fs::OpenOptionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bollard::Docker;
use warden_policy::EngineChoice;

use crate::error::ShellError;

/// How long one API request may take before the engine counts as hung.
const REQUEST_TIMEOUT_S: u64 = 120;
/// How long podman's service may take to come up.
const SERVICE_START: Duration = Duration::from_secs(10);
/// The service Warden starts exits after this long without a request.
const SERVICE_IDLE_S: u32 = 600;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Docker,
    Podman,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Docker => "docker",
            EngineKind::Podman => "podman",
        }
    }
}

/// A connected engine, or one known by its address, whose client is made on
/// the first request.
#[derive(Clone)]
pub struct Engine {
    pub kind: EngineKind,
    api: Arc<OnceLock<Docker>>,
    /// Rootless podman on cgroup v1 does not apply memory or CPU limits.
    pub applies_limits: bool,
    /// The socket of the podman service Warden started, which exits when idle.
    own_service: Option<PathBuf>,
    /// The API's socket.
    pub socket: PathBuf,
}

/// Where an engine was found, to reach it again without asking it first.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EngineAddress {
    pub kind: EngineKind,
    pub socket: PathBuf,
    /// Warden's own podman service, started again when it has exited.
    pub own_service: bool,
    pub applies_limits: bool,
}

impl Engine {
    pub fn address(&self) -> EngineAddress {
        EngineAddress { kind: self.kind, socket: self.socket.clone(), own_service: self.own_service.is_some(), applies_limits: self.applies_limits }
    }

    /// The engine at `address`, without a request: a later request finds
    /// out whether it still answers.
    pub fn at(address: &EngineAddress) -> Engine {
        let own_service = address.own_service.then(|| address.socket.clone());
        Engine { kind: address.kind, api: Arc::default(), applies_limits: address.applies_limits, own_service, socket: address.socket.clone() }
    }

    /// The API's client, at the version the engine speaks (asked on first use).
    pub async fn api(&self) -> Result<&Docker, ShellError> {
        if let Some(api) = self.api.get() {
            return Ok(api);
        }
        let api = negotiated(client(&self.socket).map_err(ShellError::Engine)?, &self.socket).await.map_err(ShellError::Engine)?;
        Ok(self.api.get_or_init(|| api))
    }

    async fn answers(&self) -> bool {
        match self.api().await {
            Ok(api) => api.ping().await.is_ok(),
            Err(_) => false,
        }
    }

    /// Makes sure the engine answers before a request that needs it: a
    /// podman service of Warden's that exited while idle (commands never
    /// need it, so it may have) is started again on its socket.
    pub async fn serving(&self) -> Result<(), ShellError> {
        let Some(socket) = &self.own_service else { return Ok(()) };
        if self.answers().await {
            return Ok(());
        }
        start_service(socket).map_err(ShellError::Engine)?;
        let deadline = Instant::now() + SERVICE_START;
        while !self.answers().await {
            if Instant::now() > deadline {
                return Err(ShellError::Engine(format!("`podman system service` on {} did not answer again within 10 s", socket.display())));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }
}

/// The first engine of `choice` that answers, or why none did.
pub async fn connect(choice: EngineChoice) -> Result<Engine, ShellError> {
    let kinds: &[EngineKind] = match choice {
        EngineChoice::Auto => &[EngineKind::Docker, EngineKind::Podman],
        EngineChoice::Docker => &[EngineKind::Docker],
        EngineChoice::Podman => &[EngineKind::Podman],
    };
    let mut failures = Vec::new();
    for kind in kinds {
        match connect_kind(*kind).await {
            Ok(engine) => return Ok(engine),
            Err(why) => failures.push(format!("{}: {why}", kind.name())),
        }
    }
    Err(ShellError::NoEngine { tried: failures.join("; ") })
}

async fn connect_kind(kind: EngineKind) -> Result<Engine, String> {
    let (api, socket, own) = match kind {
        EngineKind::Docker => docker_api().await?,
        EngineKind::Podman => podman_api().await?,
    };
    let info = api.info().await.map_err(|e| format!("info failed: {e}"))?;
    let rootless = info.security_options.unwrap_or_default().iter().any(|o| o.contains("rootless"));
    let cgroup_v1 = info.cgroup_version.map(|v| v.to_string() == "1").unwrap_or(false);
    Ok(Engine { kind, api: Arc::new(OnceLock::from(api)), applies_limits: !(rootless && cgroup_v1), own_service: own.then(|| socket.clone()), socket })
}

/// dockerd at `DOCKER_HOST` (a unix socket) or its usual socket.
async fn docker_api() -> Result<(Docker, PathBuf, bool), String> {
    let socket = match std::env::var("DOCKER_HOST") {
        Ok(host) => host.strip_prefix("unix://").map(PathBuf::from).ok_or_else(|| format!("DOCKER_HOST={host} is not a unix:// socket"))?,
        Err(_) => PathBuf::from("/var/run/docker.sock"),
    };
    Ok((answering(&socket).await?, socket, false))
}

/// podman's system socket if it answers, else Warden's own service (started
/// now if needed), with the socket and whether it is Warden's own.
async fn podman_api() -> Result<(Docker, PathBuf, bool), String> {
    // podman's own socket unit: /run/podman for root, $XDG_RUNTIME_DIR/podman for a user.
    let system = match std::env::var_os("XDG_RUNTIME_DIR") {
        _ if rustix::process::geteuid().is_root() => PathBuf::from("/run/podman/podman.sock"),
        Some(dir) => PathBuf::from(dir).join("podman/podman.sock"),
        None => PathBuf::from(format!("/run/user/{}/podman/podman.sock", rustix::process::geteuid().as_raw())),
    };
    if let Ok(api) = answering(&system).await {
        return Ok((api, system, false));
    }
    let own = own_folder()?.join("podman.sock");
    if let Ok(api) = answering(&own).await {
        return Ok((api, own, true));
    }
    start_service(&own)?;
    let deadline = Instant::now() + SERVICE_START;
    loop {
        match answering(&own).await {
            Ok(api) => return Ok((api, own, true)),
            Err(why) if Instant::now() > deadline => return Err(format!("`podman system service` did not answer within 10 s: {why}")),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// An API client for `socket`, if the engine behind it answers a ping.
async fn answering(socket: &Path) -> Result<Docker, String> {
    let shown = socket.display();
    if !socket.exists() {
        return Err(format!("no socket at {shown}"));
    }
    let api = negotiated(client(socket)?, socket).await?;
    api.ping().await.map_err(|e| format!("{shown} did not answer: {e}"))?;
    Ok(api)
}

/// `api` at the highest API version both it and the engine on `socket` speak.
async fn negotiated(api: Docker, socket: &Path) -> Result<Docker, String> {
    let shown = socket.display();
    tokio::time::timeout(Duration::from_secs(5), api.negotiate_version())
        .await
        .map_err(|_| format!("{shown} did not answer within 5 s"))?
        .map_err(|e| format!("{shown} did not answer: {e}"))
}

/// A client of the API on `socket`; no request made.
fn client(socket: &Path) -> Result<Docker, String> {
    Docker::connect_with_unix(&socket.to_string_lossy(), REQUEST_TIMEOUT_S, bollard::API_DEFAULT_VERSION)
        .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))
}

/// Starts `podman system service` on `socket`, detached: it outlives this
/// process (a kept sandbox needs it later) and exits by itself when idle.
fn start_service(socket: &Path) -> Result<(), String> {
    let folder = socket.parent().expect("a socket path has a folder");
    let _ = std::fs::remove_file(socket);
    let log = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(folder.join("podman-service.log"))
        .map_err(|e| format!("cannot open {}: {e}", folder.join("podman-service.log").display()))?;
    let mut command = Command::new("podman");
    command
        .args(["system", "service", &format!("--time={SERVICE_IDLE_S}")])
        .arg(format!("unix://{}", socket.display()))
        // The service outlives this process, and its conmons inherit its working
        // folder: one that is removed later (a temporary folder) fails every start.
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    // It outlives this process: a descriptor of its caller (a pipe whose end
    // the caller waits for) must not stay open in it.
    crate::pids::without_inherited_descriptors(&mut command);
    match command.spawn() {
        Ok(mut child) => {
            // Reaped when it exits, so that no zombie stays behind in a long-lived host.
            std::thread::spawn(move || child.wait());
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err("`podman` is not installed".into()),
        Err(e) => Err(format!("cannot start `podman system service`: {e}")),
    }
}

/// Warden's private folder (the podman service's socket and log, the container runner).
pub(crate) fn own_folder() -> Result<PathBuf, String> {
    warden_policy::private_folder()
}
