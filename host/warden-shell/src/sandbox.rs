//! The library API: a shell sandbox built from a policy, started once, used
//! for many commands, from async code.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use warden_fs::Sandbox;
use warden_policy::{Network, Policy};

use crate::container::{ContainerSandbox, ExecSettings, Layout, Owner, StartRequest};
use crate::error::ShellError;
use crate::pids::ProcessCap;
use crate::plan::ExecPlan;
use crate::probe::{bwrap_works, probe_for};
use crate::run::{run, Backend, ExecutionResult, Job, Outcome};
use crate::shield::Shield;

pub struct ShellSandbox {
    inner: Arc<Inner>,
}

struct Inner {
    plan: ExecPlan,
    /// The seccomp program, compiled once.
    seccomp: Vec<u8>,
    /// The process cap of every command of this sandbox, made once.
    cap: ProcessCap,
    /// Becomes `Unsandboxed` if bwrap turns out not to work here (and that is allowed).
    backend: Mutex<Backend>,
    require_os_sandbox: bool,
    /// Whether a bubblewrap that fails may give way to Landlock.
    os_backend: warden_policy::OsBackend,
    policy_env: Vec<(String, String)>,
    /// Kept open: the mounts' handles are where the bind paths come from.
    fs: Sandbox,
    /// `backend: container`: commands run in this container instead.
    container: Option<InContainer>,
}

struct InContainer {
    sandbox: ContainerSandbox,
    layout: Layout,
}

/// What a container of a sandbox is called, and whose it is.
#[derive(Debug, Clone)]
pub struct ContainerName {
    /// `exec`, `mcp`, a kept sandbox's name.
    pub name: String,
    pub owner: Owner,
}

impl Default for ContainerName {
    fn default() -> ContainerName {
        ContainerName { name: "shell".into(), owner: Owner::ThisProcess }
    }
}

impl ShellSandbox {
    /// Builds the plan and probes for an OS sandbox. Without one, a policy
    /// with `require_os_sandbox: true` is refused; otherwise every result says
    /// it ran unsandboxed.
    pub fn new(policy: &Policy, worker: Option<&str>) -> Result<ShellSandbox, ShellError> {
        let fs = Sandbox::open_for(policy, worker).map_err(|e| ShellError::Policy(e.to_string()))?;
        ShellSandbox::with_filesystem(&policy.clone().with_network_of(worker), fs)
    }

    /// Like [`ShellSandbox::new`], with the mounts of `fs`: e.g. the sandbox in
    /// effect of an approval session, whose grants become extra binds. A mount
    /// whose rules still need approval is refused: a command cannot pause to ask.
    pub fn with_filesystem(policy: &Policy, fs: Sandbox) -> Result<ShellSandbox, ShellError> {
        ShellSandbox::with_cap(policy, fs, ProcessCap::start()?)
    }

    /// Like [`ShellSandbox::with_filesystem`], with a process cap started
    /// earlier: making its cgroup then overlaps the caller's own start-up.
    pub fn with_cap(policy: &Policy, fs: Sandbox, cap: ProcessCap) -> Result<ShellSandbox, ShellError> {
        ShellSandbox::with_options(policy, fs, cap, ContainerName::default())
    }

    /// Like [`ShellSandbox::with_cap`]; a `backend: container` policy starts
    /// (or reuses) the container `container` names now.
    pub fn with_options(policy: &Policy, fs: Sandbox, cap: ProcessCap, container: ContainerName) -> Result<ShellSandbox, ShellError> {
        if let Some(m) = fs.mounts().iter().find(|m| m.rules.read_approval || m.rules.write_approval) {
            let what = if m.rules.read_approval { "reads" } else { "writes" };
            return Err(ShellError::Policy(format!(
                "{} needs a person's approval for {what}, and a command cannot pause to ask; \
                 run it with the sandbox in effect of an approval session",
                m.path
            )));
        }
        if let Some(m) = fs.mounts().iter().find(|m| !m.rules.readable) {
            return Err(ShellError::Policy(format!(
                "{} is write-only, and an OS sandbox cannot let a command write a folder without reading it; \
                 give the worker read access there too",
                m.path
            )));
        }
        let plan = ExecPlan::new(policy, &fs)?;
        let in_container = match &policy.shell.container {
            Some(settings) => Some(start_container(policy, settings, &plan, &container)?),
            None => None,
        };
        let backend = match &in_container {
            Some(c) => Backend::Container { engine: c.sandbox.engine().name(), name: c.sandbox.name().to_owned() },
            None => probe_for(policy.shell.os_backend),
        };
        if let Backend::Unsandboxed { reason } = &backend {
            // A backend asked for by name is that one or none at all.
            if let Some(named) = named_backend(policy.shell.os_backend) {
                return Err(ShellError::BackendUnavailable { backend: named, reason: reason.clone() });
            }
            if policy.require_os_sandbox {
                return Err(ShellError::SandboxRequired { reason: reason.clone() });
            }
        }
        let seccomp = crate::seccomp::program_bytes(plan.allow_unix_sockets)?;
        let inner = Inner {
            plan,
            seccomp,
            cap,
            backend: Mutex::new(backend),
            require_os_sandbox: policy.require_os_sandbox,
            os_backend: policy.shell.os_backend,
            policy_env: policy.env.clone(),
            fs,
            container: in_container,
        };
        Ok(ShellSandbox { inner: Arc::new(inner) })
    }

    pub async fn start(policy: Policy, worker: Option<String>) -> Result<ShellSandbox, ShellError> {
        tokio::task::spawn_blocking(move || ShellSandbox::new(&policy, worker.as_deref()))
            .await
            .map_err(|e| ShellError::Spawn(std::io::Error::other(e)))?
    }

    /// Runs `command` with `/bin/sh -c` in the default working folder.
    pub async fn execute(&self, command: &str, timeout: Duration) -> Result<ExecutionResult, ShellError> {
        let argv = vec![OsString::from("/bin/sh"), OsString::from("-c"), OsString::from(command)];
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || inner.execute_argv(&argv, None, timeout, None))
            .await
            .map_err(|e| ShellError::Spawn(std::io::Error::other(e)))?
    }

    /// Runs a program with arguments, blocking; `cwd` is a virtual path.
    pub fn execute_argv(&self, argv: &[OsString], cwd: Option<&str>, timeout: Duration) -> Result<ExecutionResult, ShellError> {
        self.inner.execute_argv(argv, cwd, timeout, None)
    }

    /// Like [`ShellSandbox::execute_argv`]; setting `cancel` from another
    /// thread kills the command and its group within 20 ms (exit code 130).
    pub fn execute_argv_cancellable(
        &self,
        argv: &[OsString],
        cwd: Option<&str>,
        timeout: Duration,
        cancel: &AtomicBool,
    ) -> Result<ExecutionResult, ShellError> {
        self.inner.execute_argv(argv, cwd, timeout, Some(cancel))
    }

    /// Under bubblewrap nothing outlives a command, so stopping only releases
    /// the handles; a container of this process is removed.
    pub async fn stop(self) {
        let _ = tokio::task::spawn_blocking(move || {
            if let Ok(inner) = Arc::try_unwrap(self.inner)
                && let Some(c) = inner.container
                && let Err(e) = c.sandbox.stop()
            {
                eprintln!("warden: {e}");
            }
        })
        .await;
    }

    pub fn backend(&self) -> Backend {
        self.inner.backend.lock().unwrap().clone()
    }

    pub fn plan(&self) -> &ExecPlan {
        &self.inner.plan
    }
}

impl Inner {
    fn execute_argv(&self, argv: &[OsString], cwd: Option<&str>, timeout: Duration, cancel: Option<&AtomicBool>) -> Result<ExecutionResult, ShellError> {
        if argv.is_empty() {
            return Err(ShellError::Policy("no command given".into()));
        }
        if let Some(c) = &self.container {
            let cwd = match cwd {
                Some(vpath) => Some(c.layout.inside(&self.host_path(vpath)?)?.to_string_lossy().into_owned()),
                None => None,
            };
            return c.sandbox.execute(argv, cwd.as_deref(), timeout, cancel);
        }
        let cwd = match cwd {
            Some(vpath) => self.host_path(vpath)?,
            None => self.plan.default_cwd.clone(),
        };
        let home = cwd.to_string_lossy().into_owned();
        let mut env = crate::env::build(std::env::vars(), &self.policy_env, &home);
        if let Network::Allow(_) = self.plan.network {
            warden_net::bridge::point_at_proxy(&mut env);
        }
        let backend = self.backend.lock().unwrap().clone();
        match run(&self.job(&backend, argv, &cwd, &env, timeout, cancel))? {
            Outcome::Ran(result) => Ok(result),
            Outcome::SandboxFailed { reason } => {
                // Fall back only when no sandbox works on this machine, never
                // because of what a command made of its own folders.
                if bwrap_works(&backend) {
                    return Err(ShellError::SandboxSetup { reason });
                }
                // bubblewrap cannot start here at all (in a container, say): Landlock, if `auto` allows it.
                let landlock = match self.os_backend {
                    warden_policy::OsBackend::Auto => crate::probe::landlock(),
                    _ => Err(String::new()),
                };
                if let Ok(landlock) = landlock {
                    *self.backend.lock().unwrap() = landlock.clone();
                    return match run(&self.job(&landlock, argv, &cwd, &env, timeout, cancel))? {
                        Outcome::Ran(result) => Ok(result),
                        Outcome::SandboxFailed { reason } => Err(ShellError::SandboxSetup { reason }),
                    };
                }
                let reason = match landlock {
                    Err(why) if !why.is_empty() => format!("{reason}; {why}"),
                    _ => reason,
                };
                if let Some(named) = named_backend(self.os_backend) {
                    return Err(ShellError::BackendUnavailable { backend: named, reason });
                }
                if self.require_os_sandbox {
                    return Err(ShellError::SandboxRequired { reason });
                }
                let fallback = Backend::Unsandboxed { reason };
                *self.backend.lock().unwrap() = fallback.clone();
                match run(&self.job(&fallback, argv, &cwd, &env, timeout, cancel))? {
                    Outcome::Ran(result) => Ok(result),
                    Outcome::SandboxFailed { reason } => Err(ShellError::SandboxRequired { reason }),
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn job<'a>(
        &'a self,
        backend: &'a Backend,
        command: &'a [OsString],
        cwd: &'a Path,
        env: &'a [(String, String)],
        timeout: Duration,
        cancel: Option<&'a AtomicBool>,
    ) -> Job<'a> {
        Job { plan: &self.plan, backend, seccomp: &self.seccomp, cap: &self.cap, command, cwd, env, timeout, cancel }
    }

    /// Where a virtual folder appears to the command: under its mount's host path.
    fn host_path(&self, vpath: &str) -> Result<PathBuf, ShellError> {
        let resolved = self.fs.resolve(vpath).map_err(|e| ShellError::Cwd { path: vpath.into(), reason: e.to_string() })?;
        let bind = self.plan.binds.iter().find(|b| b.vpath == resolved.mount.to_string()).ok_or_else(|| ShellError::Cwd {
            path: vpath.into(),
            reason: "not inside a mount".into(),
        })?;
        let path = if resolved.relative.as_os_str().is_empty() { bind.host.clone() } else { bind.host.join(&resolved.relative) };
        if !path.is_dir() {
            return Err(ShellError::Cwd { path: vpath.into(), reason: "not a folder".into() });
        }
        Ok(path)
    }
}

/// The backend a policy names, if it names one rather than `auto`.
fn named_backend(choice: warden_policy::OsBackend) -> Option<&'static str> {
    match choice {
        warden_policy::OsBackend::Auto => None,
        warden_policy::OsBackend::Bwrap => Some("bubblewrap"),
        warden_policy::OsBackend::Landlock => Some("Landlock"),
    }
}

/// Starts the container of a `backend: container` policy, with the plan's mounts.
fn start_container(
    policy: &Policy,
    settings: &warden_policy::ContainerSettings,
    plan: &ExecPlan,
    name: &ContainerName,
) -> Result<InContainer, ShellError> {
    if let Some(root) = &settings.workspace_root {
        let root = std::fs::canonicalize(root).map_err(|e| ShellError::Policy(format!("workspace_root {}: {e}", root.display())))?;
        if let Some(outside) = plan.binds.iter().find(|b| !b.host.starts_with(&root)) {
            return Err(ShellError::Policy(format!("{} is not inside the container's workspace_root", outside.vpath)));
        }
    }
    let shield = Shield::for_plan(plan)?;
    let root = policy.layout == warden_policy::Layout::Root;
    let layout = Layout::new(plan, &shield, root)?;
    let writable: Vec<String> = plan.binds.iter().filter(|b| b.writable).map(|b| layout.inside(&b.host).map(|p| p.display().to_string())).collect::<Result<_, _>>()?;
    let cwd = layout.inside(&plan.default_cwd).map(|p| p.display().to_string()).unwrap_or_else(|_| "/".into());
    crate::container::refuse_nested_mounts(plan)?;
    let user = container_user(settings, plan)?;
    let mut env = crate::env::build(std::iter::empty(), &policy.env, &cwd);
    if let Network::Allow(_) = plan.network {
        warden_net::bridge::point_at_proxy(&mut env);
    }
    // Made and locked before the container binds them; its runner holds them after.
    let held = crate::placeholders::Held::take(&shield)?;
    let exec = ExecSettings {
        user,
        env,
        cwd,
        timeout: policy.limits.timeout,
        writable: if writable.is_empty() { "(none)".into() } else { writable.join(", ") },
        virtual_root: root,
        placeholders: held.placeholders(),
        covers: shield.covered().into_iter().map(crate::container::Cover::of).collect(),
        plan: plan.clone(),
        rules: policy.shell.rules.clone(),
        runner: false,
    };
    let sandbox = ContainerSandbox::start(StartRequest {
        container: settings,
        layout: &layout,
        exec,
        held,
        name: &name.name,
        owner: name.owner,
        require_limits: policy.require_os_sandbox,
    })?;
    Ok(InContainer { sandbox, layout })
}

/// Who a container's commands run as: the policy's `user`, else the owner of
/// the first writable mount (files written there stay theirs), else of the
/// first mount, else nobody. Never root unless the policy says `root`: on
/// rootful docker that is the host's root.
fn container_user(settings: &warden_policy::ContainerSettings, plan: &ExecPlan) -> Result<String, ShellError> {
    use std::os::unix::fs::MetadataExt;
    match settings.user {
        Some(warden_policy::ContainerUser::Root) => return Ok("0:0".into()),
        Some(warden_policy::ContainerUser::Id { uid, gid }) => return Ok(format!("{uid}:{gid}")),
        None => {}
    }
    let writable = plan.binds.iter().find(|b| b.writable);
    let Some(bind) = writable.or(plan.binds.first()) else { return Ok("65534:65534".into()) };
    match std::fs::metadata(&bind.host) {
        Ok(meta) if meta.uid() != 0 => Ok(format!("{}:{}", meta.uid(), meta.gid())),
        Ok(_) if writable.is_some() => Err(ShellError::Policy(format!(
            "the writable mount {} belongs to root, and a container's commands run as root only when the policy says so \
             (shell.container.user: root); give the folder to another user, or name one there (shell.container.user: UID:GID)",
            bind.vpath
        ))),
        _ => Ok("65534:65534".into()),
    }
}
