//! `Sandbox.exec`: one command in the OS sandbox, as `warden exec` runs it.

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use warden_fs::approval::{CommandLine, CommandVerdict};
use warden_policy::Policy;
use warden_shell::container::{ContainerSandbox, Owner};
use warden_shell::{ContainerName, ProcessCap, ShellSandbox};

use crate::errors::Failure;
use crate::sandbox::{lock, Sandbox};
use crate::values::ExecResult;

/// A command's time limit when neither the call nor the policy names one (as `warden exec`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The OS sandbox of the last command, kept while the mounts it was made
/// for stay the same (a container lives as long as it), and the kept
/// container (`warden sandbox start --name`) commands run in, if one is named.
#[derive(Default)]
pub struct Cached {
    shell: Mutex<Option<Made>>,
    kept: Mutex<Option<String>>,
}

impl Cached {
    /// Ends the sandbox of this process (a container of its own is removed;
    /// a kept one stays).
    pub fn clear(&self) {
        let kept = lock(&self.shell).take();
        drop(kept);
    }
}

/// An OS sandbox, with the mounts it was made for and the process that made
/// it (a child after a fork has not its spawner thread).
struct Made {
    shape: Vec<String>,
    pid: u32,
    shell: Arc<ShellSandbox>,
}

/// Set from another thread, it ends the command it was given to (exit code 130).
#[pyclass(frozen, module = "warden._native")]
#[derive(Default)]
pub struct CancelToken {
    flag: Arc<AtomicBool>,
}

#[pymethods]
impl CancelToken {
    #[new]
    fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Ends the command (and every process it started) within 20 ms.
    fn cancel(&self) {
        self.flag.store(true, Ordering::SeqCst);
    }
}

/// Runs this sandbox's commands in the kept container `name`, started with
/// the policy's settings if it is not running; with `attach`, it must exist
/// already (a kept sandbox that is gone is an error, never replaced).
pub fn keep_container(sandbox: &Sandbox, py: Python<'_>, name: String, attach: bool) -> Result<(), Failure> {
    if sandbox.policy.shell.container.is_none() {
        return Err(Failure::Named("CommandPolicyError", format!("{} has no `shell: {{ backend: container }}`: only container sandboxes are kept", sandbox.policy.file.display())));
    }
    py.detach(|| {
        if attach {
            ContainerSandbox::attach(&name, true).map_err(|e| Failure::Named("SandboxGoneError", format!("the kept sandbox {name} is not running: {e}")))?;
        }
        *lock(&sandbox.shell.kept) = Some(name);
        sandbox.shell.clear();
        Ok(())
    })
}

/// Removes the kept container `name` and everything running in it.
pub fn stop_container(py: Python<'_>, name: String) -> Result<(), Failure> {
    py.detach(|| Ok(ContainerSandbox::attach(&name, false).and_then(ContainerSandbox::stop)?))
}

/// The command as a person reads it in a question: its whole line, shortened past 300 characters.
fn command_line(argv: &[OsString]) -> String {
    let line = argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// What the mounts of `fs` are, to tell whether a kept OS sandbox still fits.
fn shape(fs: &warden_fs::Sandbox) -> Vec<String> {
    fs.mounts().iter().map(|m| format!("{} {} {} {}", m.path, m.rules.readable, m.rules.writable, m.host_root.display())).collect()
}

/// Containers of this process are `warden-py<N>-<pid>`: one per sandbox made.
fn container_name() -> ContainerName {
    static MADE: AtomicU64 = AtomicU64::new(0);
    ContainerName { name: format!("py{}", MADE.fetch_add(1, Ordering::Relaxed)), owner: Owner::ThisProcess }
}

pub fn exec(sandbox: &Sandbox, py: Python<'_>, argv: Vec<OsString>, timeout: Option<f64>, cwd: Option<String>, cancel: Option<&CancelToken>) -> Result<ExecResult, Failure> {
    if argv.is_empty() {
        return Err(Failure::Named("CommandPolicyError", "no command given".into()));
    }
    let program = command_line(&argv);
    let timeout = match timeout {
        Some(seconds) => Duration::try_from_secs_f64(seconds)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| Failure::Named("CommandPolicyError", format!("timeout: {seconds} is not a positive number of seconds")))?,
        None => sandbox.policy.limits.timeout.unwrap_or(DEFAULT_TIMEOUT),
    };
    py.detach(|| {
        // A command cannot pause to ask: the questions come first, on a fork of
        // the session whose grants for this command alone end with it.
        let mut fork = sandbox.fork()?;
        let granted = match sandbox.policy.command_rules_for(sandbox.worker.as_deref()) {
            None => None,
            Some(rules) => {
                let words: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
                let network = &sandbox.policy.network_for(sandbox.worker.as_deref()).clone();
                match fork.judge_command(rules, CommandLine::Argv(&words), Some("sandbox.exec"), network) {
                    Err(e) => {
                        sandbox.adopt(fork)?;
                        return Err(e.into());
                    }
                    Ok(CommandVerdict::Refused(text)) => {
                        sandbox.adopt(fork)?;
                        return Err(Failure::Named("CommandRefusedError", text));
                    }
                    Ok(CommandVerdict::Run { granted }) => granted,
                }
            }
        };
        fork.ask_ahead(Some(&program), &[])?;
        let fs = fork.sandbox()?;
        sandbox.adopt(fork)?;
        let shell = match granted {
            // A grant is this command's alone: a sandbox (a container) of its own, never kept.
            Some(granted) => {
                let policy = Policy { network: granted.network, ..(*sandbox.policy).clone().with_network_of(sandbox.worker.as_deref()) };
                Arc::new(ShellSandbox::with_options(&policy, fs, ProcessCap::start()?, container_name())?)
            }
            None => shell_for(sandbox, fs)?,
        };
        let ran = match cancel {
            Some(token) => shell.execute_argv_cancellable(&argv, cwd.as_deref(), timeout, &token.flag)?,
            None => shell.execute_argv(&argv, cwd.as_deref(), timeout)?,
        };
        Ok(ExecResult {
            stdout: ran.stdout,
            stderr: ran.stderr,
            exit_code: ran.exit_code,
            timed_out: ran.timed_out,
            truncated: ran.truncated,
            sandboxed: ran.sandboxed,
            sandbox: ran.sandbox,
        })
    })
}

/// The kept OS sandbox when `fs` has its mounts, else a new one (kept from now on).
fn shell_for(sandbox: &Sandbox, fs: warden_fs::Sandbox) -> Result<Arc<ShellSandbox>, Failure> {
    let wanted = shape(&fs);
    let mut cached = lock(&sandbox.shell.shell);
    if let Some(made) = cached.as_ref()
        && made.shape == wanted
        && made.pid == std::process::id()
    {
        return Ok(made.shell.clone());
    }
    let container = match lock(&sandbox.shell.kept).clone() {
        Some(name) => ContainerName { name, owner: Owner::Kept },
        None => container_name(),
    };
    let policy = (*sandbox.policy).clone().with_network_of(sandbox.worker.as_deref());
    let shell = Arc::new(ShellSandbox::with_options(&policy, fs, ProcessCap::start()?, container)?);
    *cached = Some(Made { shape: wanted, pid: std::process::id(), shell: shell.clone() });
    Ok(shell)
}
