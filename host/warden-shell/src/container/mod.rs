//! The container backend: one long-lived container per sandbox on podman or
//! docker, reached through the Docker API, under the same plan as bubblewrap.

mod engine;
mod exec;
mod kept;
mod layout;
mod lifecycle;
mod profile;
mod routes;
mod runner;

use std::ffi::OsString;
use std::future::Future;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use warden_policy::{ContainerSettings, EngineChoice, Network};

pub use engine::EngineKind;
use engine::Engine;
use kept::Kept;
pub use layout::{refuse_nested_mounts, Layout, WORKSPACE};
pub use lifecycle::{container_name, Cover, ExecSettings, Owner, DEFAULT_MEMORY, DEFAULT_NANO_CPUS};

use crate::error::ShellError;
use crate::run::{ExecutionResult, Walls};

/// A started container. A container of this process is removed when the
/// last value for it is dropped (or stopped); a kept one stays until `stop`.
pub struct ContainerSandbox {
    running: Arc<Running>,
}

struct Running {
    engine: Engine,
    name: String,
    settings: ExecSettings,
    /// Its runner, which starts every command.
    runner: runner::Link,
    /// What the container's network namespace was given, for the init it was
    /// made with (a restart makes a new one): under an allowlist, the proxy
    /// on 127.0.0.1:3128 inside; under `network: true`, its refused routes.
    network: tokio::sync::Mutex<Option<(NetworkOf, Option<Arc<warden_net::Proxy>>)>>,
    owner: Owner,
    /// The digest of the settings it was created with.
    config: String,
    removed: AtomicBool,
}

/// Which network namespace was given what the policy's network needs: the
/// init's PID alone may be the same after a restart, the cookie is not.
#[derive(Clone, Copy, PartialEq, Eq)]
struct NetworkOf {
    init: u32,
    netns: u64,
}

/// Everything `start` needs.
pub struct StartRequest<'a> {
    pub container: &'a ContainerSettings,
    pub layout: &'a Layout,
    pub exec: ExecSettings,
    /// The files its shield binds read-only, locked: handed to its runner.
    pub held: crate::placeholders::Held,
    /// `exec`, `mcp`, or a kept sandbox's name.
    pub name: &'a str,
    pub owner: Owner,
    /// Refuse, rather than warn, when the engine would not apply memory or CPU limits.
    pub require_limits: bool,
}

/// The containers this process has started, by name: a second sandbox with
/// the same settings shares one, and one with other settings gets its own
/// (`warden-mcp-<pid>-2`) rather than pulling the first from under its user.
fn live() -> &'static Mutex<HashMap<String, Weak<Running>>> {
    static LIVE: OnceLock<Mutex<HashMap<String, Weak<Running>>>> = OnceLock::new();
    LIVE.get_or_init(Default::default)
}

/// Removes every container of this process's still in use (a server that
/// stops: its clients' containers go with it, whoever still holds them).
pub fn remove_own() {
    let running: Vec<Arc<Running>> = live().lock().unwrap_or_else(|p| p.into_inner()).values().filter_map(Weak::upgrade).collect();
    for container in running.iter().filter(|r| r.owner == Owner::ThisProcess) {
        if let Err(e) = container.remove() {
            eprintln!("warden: {e}");
        }
    }
}

impl ContainerSandbox {
    /// Starts the container, or reuses a healthy one of the same name and
    /// settings; first removes Warden's containers whose owner is gone.
    pub fn start(request: StartRequest<'_>) -> Result<ContainerSandbox, ShellError> {
        let base = container_name(request.name, request.owner);
        let config = lifecycle::config_digest(request.container, &request.exec);
        // Dropped after the lock: the last reference to a container removes it,
        // and that takes the lock.
        let mut seen: Vec<Arc<Running>> = Vec::new();
        let mut live = live().lock().unwrap_or_else(|p| p.into_inner());
        let mut name = base.clone();
        for n in 2.. {
            match live.get(&name).and_then(Weak::upgrade) {
                Some(running) if running.config == config => return Ok(ContainerSandbox { running }),
                Some(other) if request.owner == Owner::ThisProcess => {
                    seen.push(other);
                    name = format!("{base}-{n}");
                }
                Some(other) => {
                    seen.push(other);
                    break;
                }
                None => break,
            }
        }
        let program = runner::program()?.ok_or_else(|| {
            ShellError::Policy("the container backend needs a Linux host: its runner is a Linux program, started inside the container".into())
        })?;
        let mut exec = request.exec;
        exec.runner = true;
        let held = request.held;
        let (running, created) = block_on(async {
            let engine = engine::connect(request.container.engine).await?;
            if !engine.applies_limits {
                let why = format!(
                    "{} runs rootless on cgroup v1 here and would not apply the container's memory, CPU and process limits",
                    engine.kind.name()
                );
                if request.require_limits {
                    return Err(ShellError::SandboxRequired { reason: why });
                }
                eprintln!("warden: warning: {why}");
            }
            lifecycle::remove_stale(&engine).await?;
            let mut settings = exec.clone();
            let mut created = false;
            let mut found = lifecycle::existing(&engine, &name).await?;
            // One of this name that another process owns (a Warden in another
            // PID namespace, with this PID there) is neither taken nor removed.
            let own_name = name.clone();
            for n in 2.. {
                if request.owner != Owner::ThisProcess || found.as_ref().is_none_or(|old| old.owner == lifecycle::own_mark()) {
                    break;
                }
                name = format!("{own_name}-{n}");
                found = lifecycle::existing(&engine, &name).await?;
            }
            match found {
                // Its own settings: what its shield covered when it started.
                Some(old) if old.running && old.config.as_ref() == Some(&config) => settings = old.exec.unwrap_or(settings),
                Some(old) if old.running && request.owner == Owner::Kept => {
                    return Err(ShellError::Policy(format!(
                        "a sandbox named {} is running with other settings; stop it first (warden sandbox stop {})",
                        request.name, request.name
                    )));
                }
                found => {
                    created = true;
                    let seccomp = profile::security_option(engine.kind)?;
                    let body = lifecycle::create_body(
                        engine.kind,
                        request.container,
                        request.layout,
                        &exec,
                        &program,
                        &seccomp,
                        request.name,
                        request.owner,
                        &config,
                    );
                    if found.is_some() {
                        lifecycle::remove(&engine, &name).await?;
                    }
                    lifecycle::create(&engine, &name, body).await?;
                }
            }
            let runner = runner::Link::new(&settings)?;
            // The first command need not find the runner still getting ready.
            let prepared = async {
                runner.ready(&engine, &name).await?;
                if created {
                    runner.hold(&engine, &name, &held.files()).await?;
                }
                Ok::<_, ShellError>(())
            };
            if let Err(e) = prepared.await {
                // Not left running over placeholders that nothing holds.
                if created {
                    let _ = lifecycle::remove(&engine, &name).await;
                }
                return Err(e);
            }
            let mut runner = runner;
            runner.pin_to_known();
            if request.owner == Owner::Kept
                && let Some((init, id)) = runner.known()
                && let Some(kept) = Kept::of(engine.address(), id, init, config.clone(), runner::program_digest(), settings.clone())
            {
                kept.save(&name);
            }
            let running = Running {
                engine,
                name: name.clone(),
                settings,
                runner,
                network: tokio::sync::Mutex::default(),
                owner: request.owner,
                config,
                removed: AtomicBool::new(false),
            };
            Ok((running, created))
        })?;
        if created {
            held.handed_over();
        }
        let running = Arc::new(running);
        live.insert(name, Arc::downgrade(&running));
        Ok(ContainerSandbox { running })
    }

    /// A kept sandbox started earlier, by any process; with `must_run`, only
    /// one that runs (`stop` takes one that stopped too).
    pub fn attach(name: &str, must_run: bool) -> Result<ContainerSandbox, ShellError> {
        let container = container_name(name, Owner::Kept);
        // No request to the engine while the state its start left still holds.
        if must_run
            && let Some(kept) = Kept::load(&container)
            && kept.settings.runner
            && kept.runner == runner::program_digest()
        {
            let running = Running {
                engine: Engine::at(&kept.engine),
                name: container,
                runner: runner::Link::pinned(&kept.settings, kept.init, &kept.id)?,
                network: tokio::sync::Mutex::default(),
                settings: kept.settings,
                owner: Owner::Kept,
                config: kept.config,
                removed: AtomicBool::new(false),
            };
            return Ok(ContainerSandbox { running: Arc::new(running) });
        }
        block_on(async {
            let mut tried = Vec::new();
            for choice in [EngineChoice::Docker, EngineChoice::Podman] {
                let engine = match engine::connect(choice).await {
                    Ok(engine) => engine,
                    Err(e) => {
                        tried.push(e.to_string());
                        continue;
                    }
                };
                match lifecycle::existing(&engine, &container).await? {
                    // A process's own container is not a kept sandbox, whatever its name.
                    Some(found) if found.owner.is_some() => tried.push(format!("{}: {container} belongs to a running process", choice.name())),
                    Some(found) if found.running || !must_run => {
                        let settings = found.exec.ok_or_else(|| ShellError::Policy(format!("{container} has no Warden settings")))?;
                        if must_run && (!settings.runner || found.runner != Some(runner::program_digest())) {
                            return Err(ShellError::Policy(format!(
                                "the sandbox {name} was started by another Warden build, whose runner this one cannot rely on; \
                                 stop it (warden sandbox stop {name}) and start it again"
                            )));
                        }
                        let config = found.config.clone().unwrap_or_default();
                        if must_run
                            && let Some(kept) =
                                Kept::of(engine.address(), found.id.clone(), found.init, config, found.runner.clone().unwrap_or_default(), settings.clone())
                        {
                            kept.save(&container);
                        }
                        let running = Running {
                            engine,
                            name: container,
                            runner: runner::Link::pinned(&settings, found.init, &found.id)?,
                            network: tokio::sync::Mutex::default(),
                            settings,
                            owner: Owner::Kept,
                            config: found.config.unwrap_or_default(),
                            removed: AtomicBool::new(false),
                        };
                        return Ok(ContainerSandbox { running: Arc::new(running) });
                    }
                    Some(_) => tried.push(format!("{}: {container} is not running", choice.name())),
                    None => tried.push(format!("{}: no container {container}", choice.name())),
                }
            }
            Err(ShellError::Policy(format!("no running sandbox named {name} ({})", tried.join("; "))))
        })
    }

    pub fn engine(&self) -> EngineKind {
        self.running.engine.kind
    }

    /// The container's name.
    pub fn name(&self) -> &str {
        &self.running.name
    }

    pub fn settings(&self) -> &ExecSettings {
        &self.running.settings
    }

    /// Runs `argv` in `cwd` (a folder inside the container), with the notes
    /// a failed command gets.
    pub fn execute(&self, argv: &[OsString], cwd: Option<&str>, timeout: Duration, cancel: Option<&AtomicBool>) -> Result<ExecutionResult, ShellError> {
        let r = &self.running;
        lifecycle::shield_holds(&r.settings)?;
        let cwd = cwd.unwrap_or(&r.settings.cwd);
        let target = exec::Target { engine: &r.engine, container: &r.name, runner: &r.runner };
        let (ended, refused) = block_on(async {
            let (reached, proxy) = self.reach_prepared().await?;
            let ended = exec::execute(&target, reached, &r.settings, argv, cwd, timeout, cancel).await?;
            let refused = proxy.map(|p| p.take_refusals()).unwrap_or_default();
            Ok::<_, ShellError>((ended, refused))
        })?;
        let walls = Walls { writable: r.settings.writable.clone(), network: r.settings.plan.network.clone(), refused };
        Ok(ended.into_result(timeout, &walls, &[], "container"))
    }

    /// A connection to the runner of the running container, whose network
    /// namespace has what the policy's network needs, and the proxy whose
    /// refusals the command reports.
    async fn reach_prepared(&self) -> Result<(runner::Reached, Option<Arc<warden_net::Proxy>>), ShellError> {
        let r = &self.running;
        for _ in 0..3 {
            let reached = r.runner.reach_running(&r.engine, &r.name).await?;
            let of = NetworkOf { init: reached.init, netns: reached.netns };
            if let Some((made_for, proxy)) = r.network.lock().await.as_ref()
                && *made_for == of
            {
                return Ok((reached, proxy.clone()));
            }
            // The runner serves one connection at a time: this one is closed
            // while the network is made, then the runner is reached again.
            drop(reached);
            self.prepare_network(of).await?;
        }
        Err(runner::unreachable("the container kept restarting while its command was being started"))
    }

    /// Gives the network namespace of the container's init `init` what the
    /// policy's network needs, once per init: under an allowlist, the proxy
    /// serving 127.0.0.1:3128 inside (its listener made by the runner); under
    /// `network: true`, routes that refuse the cloud metadata addresses and
    /// the host's own. Anything that cannot be done refuses the command.
    async fn prepare_network(&self, of: NetworkOf) -> Result<(), ShellError> {
        let r = &self.running;
        let mut network = r.network.lock().await;
        if network.as_ref().is_some_and(|(made_for, _)| *made_for == of) {
            return Ok(());
        }
        *network = None;
        let proxy = match &r.settings.plan.network {
            Network::Off => None,
            Network::Full => {
                routes::refuse(of.init, of.netns)?;
                None
            }
            Network::Allow(_) => {
                let listener = r.runner.listen(&r.engine, &r.name, warden_net::bridge::PORT).await?;
                if runner::netns_cookie(&listener) != of.netns {
                    return Err(runner::unreachable("the container started again while its network was being made"));
                }
                Some(Arc::new(warden_net::Proxy::start(r.settings.plan.network.clone(), move || Ok(Some(listener)))))
            }
        };
        *network = Some((of, proxy));
        Ok(())
    }

    /// Runs a command as a [`crate::ShellSandbox`] of the same policy would, in
    /// `cwd`, a virtual path (default: the first writable mount).
    pub fn run(&self, argv: &[OsString], cwd: Option<&str>, timeout: Duration) -> Result<ExecutionResult, ShellError> {
        let settings = self.settings();
        let cwd = match cwd {
            Some(vpath) => {
                let vpath = warden_policy::VPath::parse(vpath, warden_policy::Namespace::Root)
                    .map_err(|e| ShellError::Cwd { path: vpath.into(), reason: e.to_string() })?;
                Some(if settings.virtual_root { format!("{WORKSPACE}{vpath}") } else { vpath.to_string() })
            }
            None => None,
        };
        self.execute(argv, cwd.as_deref(), timeout, None)
    }

    /// Removes the container (and the mount points the runtime left on the
    /// host) now: a kept one always, one of this process if nothing else here uses it.
    pub fn stop(self) -> Result<(), ShellError> {
        if self.running.owner == Owner::Kept || Arc::strong_count(&self.running) == 1 {
            return self.running.remove();
        }
        Ok(())
    }
}

impl Running {
    fn remove(&self) -> Result<(), ShellError> {
        if self.removed.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return Ok(());
        }
        // Under the registry's lock: a start of the same name meanwhile would
        // find this container still running and take it, just before it goes.
        let _live = live().lock().unwrap_or_else(|p| p.into_inner());
        // Inside async code a runtime cannot block; a thread of its own can.
        let removing = || block_on(async { self.engine.serving().await?; lifecycle::remove(&self.engine, &self.name).await });
        let result = if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| s.spawn(removing).join().unwrap_or(Ok(())))
        } else {
            removing()
        };
        if self.owner == Owner::Kept {
            Kept::forget(&self.name);
        }
        // Its runner is gone with their locks: those no other sandbox holds go.
        crate::placeholders::remove_unused(&self.settings.placeholders, &self.settings.covers);
        result
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.owner == Owner::Kept {
            return;
        }
        if let Err(e) = self.remove() {
            eprintln!("warden: {e}");
        }
    }
}

/// The runtime every container call runs on, for the life of the process.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("warden-container")
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

fn block_on<T>(future: impl Future<Output = T>) -> T {
    runtime().block_on(future)
}
