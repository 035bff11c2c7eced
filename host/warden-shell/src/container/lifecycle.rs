//! One container's life: named so that concurrent hosts never collide,
//! labelled with its owner so that a stale one is removed at the next start,
//! hardened, reused while healthy and unchanged, removed at the end.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bollard::models::{ContainerCreateBody, HostConfig, HostConfigLogConfig, ResourcesUlimits};
use bollard::query_parameters::{CreateContainerOptions, ListContainersOptions, RemoveContainerOptions};
use serde::{Deserialize, Serialize};
use warden_policy::{ContainerSettings, Network};

use crate::container::engine::{Engine, EngineKind};
use crate::container::layout::Layout;
use crate::container::runner;
use crate::error::ShellError;
use crate::pids::MAX_PIDS;
use crate::plan::ExecPlan;

/// Every container Warden makes carries this label, with the sandbox's name.
pub const LABEL_SANDBOX: &str = "io.warden.sandbox";
/// `<pid>:<start time>` of the process whose container it is; absent on a kept sandbox.
const LABEL_OWNER: &str = "io.warden.owner";
/// A digest of the container's settings: a running container is reused only if it matches.
const LABEL_CONFIG: &str = "io.warden.config";
/// How to run commands in it ([`ExecSettings`] as JSON), for `warden exec --sandbox`.
const LABEL_EXEC: &str = "io.warden.exec";
/// The digest of the runner it was started with: another build's runner may
/// speak another protocol.
const LABEL_RUNNER: &str = "io.warden.runner";

/// What running a command needs besides the container: kept in a label, so
/// that another process can run commands in a kept sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecSettings {
    /// `uid:gid` of the first writable mount's owner: files written there stay theirs.
    pub user: String,
    /// The working folder inside when none is given.
    pub cwd: String,
    pub env: Vec<(String, String)>,
    /// The policy's `limits.timeout`: the default for a command.
    pub timeout: Option<std::time::Duration>,
    /// Writable folders as commands see them, for the notes on a refused write.
    pub writable: String,
    /// A root policy: virtual `/` is `/workspace` inside.
    pub virtual_root: bool,
    /// The placeholders made on the host over missing protected paths
    /// (`placeholders.rs`), removed with the container unless another
    /// sandbox still holds them.
    pub placeholders: Vec<PathBuf>,
    /// What the container was made from, to work out the shield again before each command.
    pub plan: ExecPlan,
    /// Each path the shield covered when the container started, with what was
    /// there (device, inode; a symlink's target). Filled in once it runs.
    #[serde(default)]
    pub covers: Vec<Cover>,
    /// The command rules it was started under (the worker's, if one), judged
    /// before each command run in it, by whichever process runs it.
    #[serde(default)]
    pub rules: Option<warden_policy::CommandRules>,
    /// The container's main process is the runner, which starts its commands.
    /// A sandbox made before Warden had one has none, and is refused.
    #[serde(default)]
    pub runner: bool,
}

/// A container's memory when the policy sets none, and its swap: none beyond it.
pub const DEFAULT_MEMORY: u64 = 1 << 30;
/// A container's CPUs, in billionths, when the policy sets none: one.
pub const DEFAULT_NANO_CPUS: u64 = 1_000_000_000;

/// A covered path and what it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cover {
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
    /// When a file's inode last changed (seconds and nanoseconds; none for a
    /// folder): a file removed and made again may get the same inode number,
    /// not the same change time.
    #[serde(default)]
    pub ctime: (i64, i64),
    pub link: Option<PathBuf>,
}

impl Cover {
    pub fn of(path: &Path) -> Cover {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::symlink_metadata(path).ok();
        let link = meta.as_ref().filter(|m| m.file_type().is_symlink()).and_then(|_| std::fs::read_link(path).ok());
        Cover {
            path: path.to_owned(),
            dev: meta.as_ref().map_or(0, |m| m.dev()),
            ino: meta.as_ref().map_or(0, |m| m.ino()),
            // A folder's changes with every entry made in it: only a file's is kept.
            ctime: meta.as_ref().filter(|m| !m.is_dir()).map_or((0, 0), |m| (m.ctime(), m.ctime_nsec())),
            link,
        }
    }
}

/// Whether the protected and hidden paths are as the container's mounts
/// cover them. A mount inside the container stays on the file it was made
/// over: a file replaced on the host (an editor's save, `git config`) is no
/// longer covered, and a path that appeared since (a new `.env`) never was.
pub fn shield_holds(settings: &ExecSettings) -> Result<(), ShellError> {
    let changed = |what: &Path| {
        Err(ShellError::Unprotectable(format!(
            "{} changed on the host since this container started, so the container no longer keeps it protected or hidden; \
             the command was not run. Start the sandbox again to cover it",
            what.display()
        )))
    };
    for cover in &settings.covers {
        if Cover::of(&cover.path) != *cover {
            return changed(&cover.path);
        }
    }
    // Protected paths, and the repositories found at the start, have covers
    // checked above; a repository made since (by a command, say) is no reason to stop.
    let now = crate::shield::Shield::of_denied(&settings.plan)?;
    for path in now.covered() {
        if !settings.covers.iter().any(|c| c.path == path) {
            return changed(path);
        }
    }
    Ok(())
}

/// Who a container belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// This process: `warden-<name>-<pid>`, removed when it ends (or by the next start after it died).
    ThisProcess,
    /// Nobody: `warden-<name>`, kept until `warden sandbox stop`.
    Kept,
}

pub fn container_name(name: &str, owner: Owner) -> String {
    match owner {
        Owner::ThisProcess => format!("warden-{name}-{}", std::process::id()),
        Owner::Kept => format!("warden-{name}"),
    }
}

/// The container's settings: hardened, limited, with the layout's mounts.
/// `config` is the digest of what they were made from (see [`config_digest`]).
/// `runner_program`: the runner's program on the host, bound in and started as
/// the container's main process; `seccomp`: the `seccomp=` security option
/// (Warden's profile, as a file for podman or inline for docker).
#[allow(clippy::too_many_arguments)]
pub fn create_body(
    engine: EngineKind,
    settings: &ContainerSettings,
    layout: &Layout,
    exec: &ExecSettings,
    runner_program: &Path,
    seccomp: &str,
    sandbox: &str,
    owner: Owner,
    config: &str,
) -> ContainerCreateBody {
    let (nofile, nproc) = ulimits();
    // podman fills a tmpfs with what the image has there unless told not to; docker does not.
    // docker makes a tmpfs noexec unless told otherwise; /tmp runs programs, as under bubblewrap.
    let no_copy = if engine == EngineKind::Podman { ",notmpcopyup" } else { "" };
    let mut tmpfs = HashMap::from([("/tmp".to_owned(), "rw,exec,nosuid,nodev,size=256m,mode=1777".to_owned())]);
    for dir in &layout.hidden_dirs {
        tmpfs.insert(dir.clone(), format!("ro,nosuid,nodev,noexec,size=4k,mode=0555{no_copy}"));
    }
    let mut mounts = layout.mounts.clone();
    mounts.push(crate::container::layout::bind_mount(runner_program, Path::new(runner::PROGRAM_INSIDE), true));
    let memory = settings.memory_bytes.unwrap_or(DEFAULT_MEMORY) as i64;
    let host_config = HostConfig {
        mounts: Some(mounts),
        cap_drop: Some(vec!["ALL".into()]),
        security_opt: Some(vec!["no-new-privileges".into(), format!("seccomp={seccomp}")]),
        readonly_rootfs: Some(true),
        tmpfs: Some(tmpfs),
        pids_limit: Some(MAX_PIDS as i64),
        // The runner is PID 1 itself: an engine's init (catatonit, tini) runs
        // as the commands' user and dumpable, so a command could write its
        // memory through /proc/1/mem (where ptrace_scope allows) and, as
        // init, stop the runner. The runner reaps as init must.
        init: Some(false),
        network_mode: Some(if exec.plan.network == Network::Full { "bridge" } else { "none" }.into()),
        memory: Some(memory),
        // No swap beyond the memory limit: a command over it is killed, not slowed to a crawl.
        memory_swap: Some(memory),
        nano_cpus: Some(settings.nano_cpus.unwrap_or(DEFAULT_NANO_CPUS) as i64),
        ulimits: Some(vec![
            ResourcesUlimits { name: Some("nofile".into()), soft: Some(nofile), hard: Some(nofile) },
            ResourcesUlimits { name: Some("nproc".into()), soft: Some(nproc), hard: Some(nproc) },
        ]),
        // Nothing reads the container's own output; kept, it would grow on the host's disk without end.
        log_config: Some(HostConfigLogConfig { typ: Some("none".into()), config: None }),
        ..Default::default()
    };
    let mut labels = HashMap::from([
        (LABEL_SANDBOX.to_owned(), sandbox.to_owned()),
        (LABEL_EXEC.to_owned(), serde_json::to_string(exec).expect("settings serialize")),
        (LABEL_CONFIG.to_owned(), config.to_owned()),
        (LABEL_RUNNER.to_owned(), runner::program_digest()),
    ]);
    if owner == Owner::ThisProcess {
        labels.insert(LABEL_OWNER.into(), owner_mark(std::process::id()).unwrap_or_default());
    }
    ContainerCreateBody {
        image: Some(settings.image.clone()),
        // PID 1 is the runner: it keeps the container alive and starts the
        // commands, whatever the image's own entrypoint.
        entrypoint: Some(runner::entrypoint()),
        // PID 1 ignores every signal it has no handler for, and the runner has
        // none: only SIGKILL, from outside, stops it.
        stop_signal: Some("SIGKILL".into()),
        cmd: Some(Vec::new()),
        user: Some(exec.user.clone()),
        working_dir: Some(exec.cwd.clone()),
        hostname: Some("warden".into()),
        network_disabled: Some(exec.plan.network != Network::Full),
        labels: Some(labels),
        host_config: Some(host_config),
        ..Default::default()
    }
}

/// A digest of what a container is made from: the policy's container
/// settings, the plan, and how commands run. Not of the mounts worked out
/// from the host: those change while a container runs (the runtime leaves
/// empty files over missing protected paths), the policy does not.
pub fn config_digest(settings: &ContainerSettings, exec: &ExecSettings) -> String {
    let exec = ExecSettings { placeholders: Vec::new(), covers: Vec::new(), runner: false, ..exec.clone() };
    let text = format!("{settings:?}\n{exec:?}\n{}\n{}", env!("CARGO_PKG_VERSION"), runner::program_digest());
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// Open-file and process limits the engine may set: no higher than this
/// process's own hard limits (root without CAP_SYS_RESOURCE cannot raise them).
fn ulimits() -> (i64, i64) {
    let hard = |r| rustix::process::getrlimit(r).maximum.map(|m| m as i64).unwrap_or(i64::MAX);
    (hard(rustix::process::Resource::Nofile).min(1 << 20), hard(rustix::process::Resource::Nproc).min(32768))
}

/// `<pid>:<start time>`: a pid alone could be reused by another process.
/// `PID:START:NS`: process `pid` of this PID namespace, when it started, and
/// the namespace, since hosts in other PID namespaces (Warden in containers
/// of its own) may share one engine and their PIDs.
fn owner_mark(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    let start = after_name.split(' ').nth(19)?;
    Some(format!("{pid}:{start}:{}", pid_namespace()?))
}

/// This process's PID namespace, by inode (`pid:[4026531836]`).
fn pid_namespace() -> Option<String> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some(link.to_str()?.strip_prefix("pid:[")?.strip_suffix(']')?.to_owned())
}

/// This process's mark, as its containers carry it.
pub fn own_mark() -> Option<String> {
    owner_mark(std::process::id())
}

/// Whether the owner of `mark` still runs. One in another PID namespace
/// cannot be looked up from here, and counts as running.
fn owner_alive(mark: &str) -> bool {
    let mut parts = mark.split(':');
    let Some(pid) = parts.next().and_then(|p| p.parse::<u32>().ok()) else { return false };
    let (Some(_start), namespace) = (parts.next(), parts.next()) else { return false };
    if namespace.is_some_and(|ns| Some(ns) != pid_namespace().as_deref()) {
        return true;
    }
    // A mark without a namespace is from this one (made before marks had it).
    owner_mark(pid).is_some_and(|now| now == mark || namespace.is_none() && now.starts_with(&format!("{mark}:")))
}

/// Removes Warden's containers whose owning process is gone.
pub async fn remove_stale(engine: &Engine) -> Result<Vec<String>, ShellError> {
    let filters = HashMap::from([("label".to_owned(), vec![LABEL_OWNER.to_owned()])]);
    let options = |all| ListContainersOptions { all, filters: Some(filters.clone()), ..Default::default() };
    let list = match engine.api().await?.list_containers(Some(options(true))).await {
        Ok(list) => list,
        // podman 4 reports some stopped containers in a state the Docker API
        // does not have; the running ones, at least, can still be listed.
        Err(bollard::errors::Error::JsonDataError { .. } | bollard::errors::Error::JsonSerdeError { .. }) => {
            engine.api().await?.list_containers(Some(options(false))).await.map_err(|e| engine_error(engine, "list containers", e))?
        }
        Err(e) => return Err(engine_error(engine, "list containers", e)),
    };
    let mut removed = Vec::new();
    for container in list {
        let labels = container.labels.unwrap_or_default();
        let Some(mark) = labels.get(LABEL_OWNER) else { continue };
        if owner_alive(mark) {
            continue;
        }
        let Some(id) = container.id else { continue };
        let name = container.names.and_then(|n| n.first().cloned()).unwrap_or_else(|| id.clone());
        // Another host may be sweeping the same one: a failure here is not this start's.
        if remove(engine, &id).await.is_err() {
            continue;
        }
        if let Some(exec) = labels.get(LABEL_EXEC).and_then(|e| serde_json::from_str::<ExecSettings>(e).ok()) {
            crate::placeholders::remove_unused(&exec.placeholders, &exec.covers);
        }
        removed.push(name.trim_start_matches('/').to_owned());
    }
    Ok(removed)
}

/// What is known of an existing container of a name.
pub struct Existing {
    pub running: bool,
    /// The process it belongs to (`io.warden.owner`), unless it is kept.
    pub owner: Option<String>,
    pub config: Option<String>,
    pub exec: Option<ExecSettings>,
    /// The digest of its runner (`io.warden.runner`).
    pub runner: Option<String>,
    /// Its full id, and its init's host PID (0 when it is not running).
    pub id: String,
    pub init: u32,
}

pub async fn existing(engine: &Engine, name: &str) -> Result<Option<Existing>, ShellError> {
    match engine.api().await?.inspect_container(name, None).await {
        Ok(c) => {
            let labels = c.config.and_then(|c| c.labels).unwrap_or_default();
            if !labels.contains_key(LABEL_SANDBOX) {
                return Err(ShellError::Policy(format!("a container named {name} exists and was not made by Warden; it is left alone")));
            }
            let init = c.state.as_ref().and_then(|s| s.pid).filter(|&p| p > 0).map_or(0, |p| p as u32);
            Ok(Some(Existing {
                id: c.id.unwrap_or_default(),
                init,
                running: c.state.and_then(|s| s.running).unwrap_or(false),
                owner: labels.get(LABEL_OWNER).cloned(),
                config: labels.get(LABEL_CONFIG).cloned(),
                exec: labels.get(LABEL_EXEC).and_then(|e| serde_json::from_str(e).ok()),
                runner: labels.get(LABEL_RUNNER).cloned(),
            }))
        }
        Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => Ok(None),
        Err(e) => Err(engine_error(engine, "inspect a container", e)),
    }
}

/// Creates and starts the container.
pub async fn create(engine: &Engine, name: &str, body: ContainerCreateBody) -> Result<(), ShellError> {
    let image = body.image.clone().unwrap_or_default();
    let options = CreateContainerOptions { name: Some(name.to_owned()), ..Default::default() };
    if let Err(e) = engine.api().await?.create_container(Some(options), body).await {
        if let bollard::errors::Error::DockerResponseServerError { status_code: 404, .. } = e {
            return Err(ShellError::Policy(format!(
                "the image {image} is not in {}'s store; build, import or pull it first",
                engine.kind.name()
            )));
        }
        return Err(engine_error(engine, "create the container", e));
    }
    if let Err(e) = engine.api().await?.start_container(name, None).await {
        let _ = remove(engine, name).await;
        return Err(engine_error(engine, "start the container", e));
    }
    Ok(())
}

/// Starts a container that stopped (the engine restarted, say).
pub async fn start(engine: &Engine, name: &str) -> Result<(), ShellError> {
    engine.api().await?.start_container(name, None).await.map_err(|e| engine_error(engine, "start the container", e))
}

pub async fn remove(engine: &Engine, name: &str) -> Result<(), ShellError> {
    let options = RemoveContainerOptions { force: true, v: true, ..Default::default() };
    match engine.api().await?.remove_container(name, Some(options)).await {
        // 404: gone already; 409: being removed already (by another host's sweep).
        Ok(()) | Err(bollard::errors::Error::DockerResponseServerError { status_code: 404 | 409, .. }) => Ok(()),
        Err(e) => Err(engine_error(engine, "remove the container", e)),
    }
}

pub fn engine_error(engine: &Engine, doing: &str, e: bollard::errors::Error) -> ShellError {
    let why = match e {
        bollard::errors::Error::DockerResponseServerError { message, .. } => message,
        other => other.to_string(),
    };
    ShellError::Engine(format!("{} could not {doing}: {why}", engine.kind.name()))
}
