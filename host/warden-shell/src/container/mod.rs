//! The container backend: one long-lived container per sandbox on podman or
//! docker, reached through the Docker API, under the same plan as bubblewrap.

mod engine;
mod exec;
mod layout;
mod lifecycle;
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
pub use layout::{Layout, WORKSPACE};
pub use lifecycle::{container_name, Cover, ExecSettings, Owner};

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
    /// Its runner, when it was made with one.
    runner: Option<runner::Link>,
    /// Under a network allowlist: the proxy on 127.0.0.1:3128 inside, with
    /// the container's init it was made for (a restart makes a new network).
    proxy: Mutex<Option<(u32, warden_net::Proxy)>>,
    owner: Owner,
    /// The digest of the settings it was created with.
    config: String,
    removed: AtomicBool,
}

/// Everything `start` needs.
pub struct StartRequest<'a> {
    pub container: &'a ContainerSettings,
    pub layout: &'a Layout,
    pub exec: ExecSettings,
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
        let program = runner::program()?;
        let mut exec = request.exec;
        exec.runner = program.is_some();
        let running = block_on(async {
            let engine = engine::connect(request.container.engine).await?;
            let asks_limits = request.container.memory_bytes.is_some() || request.container.nano_cpus.is_some();
            if asks_limits && !engine.applies_limits {
                let why = format!("{} runs rootless on cgroup v1 here and would not apply the policy's memory and CPU limits", engine.kind.name());
                if request.require_limits {
                    return Err(ShellError::SandboxRequired { reason: why });
                }
                eprintln!("warden: warning: {why}");
            }
            lifecycle::remove_stale(&engine).await?;
            let mut settings = exec.clone();
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
            let body =
                lifecycle::create_body(engine.kind, request.container, request.layout, &exec, program.as_deref(), request.name, request.owner, &config);
            match found {
                // Its own settings: what its shield covered when it started.
                Some(old) if old.running && old.config.as_ref() == Some(&config) => settings = old.exec.unwrap_or(settings),
                Some(old) if old.running && request.owner == Owner::Kept => {
                    return Err(ShellError::Policy(format!(
                        "a sandbox named {} is running with other settings; stop it first (warden sandbox stop {})",
                        request.name, request.name
                    )));
                }
                Some(_) => {
                    lifecycle::remove(&engine, &name).await?;
                    lifecycle::create(&engine, &name, body).await?;
                }
                None => lifecycle::create(&engine, &name, body).await?,
            }
            let runner = settings.runner.then(|| runner::Link::new(settings.plan.allow_unix_sockets)).transpose()?;
            // The first command need not find the runner still getting ready.
            if let Some(link) = &runner
                && !link.ready(&engine, &name).await?
            {
                eprintln!("warden: warning: the container's runner did not answer within 5 s; the engine starts its commands");
            }
            Ok(Running {
                engine,
                name: name.clone(),
                settings,
                runner,
                proxy: Mutex::default(),
                owner: request.owner,
                config,
                removed: AtomicBool::new(false),
            })
        })?;
        let running = Arc::new(running);
        live.insert(name, Arc::downgrade(&running));
        Ok(ContainerSandbox { running })
    }

    /// A kept sandbox started earlier, by any process; with `must_run`, only
    /// one that runs (`stop` takes one that stopped too).
    pub fn attach(name: &str, must_run: bool) -> Result<ContainerSandbox, ShellError> {
        block_on(async {
            let container = container_name(name, Owner::Kept);
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
                        if must_run && settings.runner && found.runner != Some(runner::program_digest()) {
                            return Err(ShellError::Policy(format!(
                                "the sandbox {name} was started by another Warden build, whose runner this one cannot rely on; \
                                 stop it (warden sandbox stop {name}) and start it again"
                            )));
                        }
                        let running = Running {
                            engine,
                            name: container,
                            runner: settings.runner.then(|| runner::Link::new(settings.plan.allow_unix_sockets)).transpose()?,
                            proxy: Mutex::default(),
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
        self.serve_egress()?;
        let target = exec::Target { engine: &r.engine, container: &r.name, runner: r.runner.as_ref() };
        let ended = block_on(exec::execute(&target, &r.settings, argv, cwd, timeout, cancel))?;
        let refused = r.proxy.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|(_, p)| p.take_refusals()).unwrap_or_default();
        let walls = Walls { writable: r.settings.writable.clone(), network: r.settings.plan.network.clone(), refused };
        Ok(ended.into_result(timeout, &walls, &[], true))
    }

    /// Under a network allowlist, makes sure the proxy serves inside the
    /// container: from the first command on, for the container's life in this
    /// process, made again if the container restarted. Its listener on
    /// 127.0.0.1:3128 inside comes from the runner; without a runner the
    /// command is refused, never run with more network.
    fn serve_egress(&self) -> Result<(), ShellError> {
        let r = &self.running;
        let Network::Allow(_) = &r.settings.plan.network else { return Ok(()) };
        let unreachable = |why: &str| {
            ShellError::Policy(format!(
                "a network allowlist in a container is served by Warden's runner inside it, and {why}; the command was not run"
            ))
        };
        let link = r.runner.as_ref().ok_or_else(|| unreachable("this container was made without one"))?;
        let mut proxy = r.proxy.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((init, _)) = proxy.as_ref()
            && link.init_now() == Some(*init)
        {
            return Ok(());
        }
        *proxy = None;
        let listener = block_on(link.listen(&r.engine, &r.name, warden_net::bridge::PORT))?
            .ok_or_else(|| unreachable("Warden cannot reach it here (a rootless engine, or a runner that a command stopped or replaced)"))?;
        let init = link.init_now().unwrap_or(0);
        *proxy = Some((init, warden_net::Proxy::start(r.settings.plan.network.clone(), move || Ok(Some(listener)))));
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
        let result = if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| s.spawn(|| block_on(lifecycle::remove(&self.engine, &self.name))).join().unwrap_or(Ok(())))
        } else {
            block_on(lifecycle::remove(&self.engine, &self.name))
        };
        crate::run::remove_placeholders(&self.settings.placeholders);
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
