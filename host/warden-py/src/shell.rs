//! `Sandbox.exec`: one command in the OS sandbox, as `warden exec` runs it.

use std::ffi::OsString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use warden_shell::container::Owner;
use warden_shell::{ContainerName, ProcessCap, ShellSandbox};

use crate::errors::Failure;
use crate::sandbox::{lock, Sandbox};
use crate::values::ExecResult;

/// A command's time limit when neither the call nor the policy names one (as `warden exec`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The OS sandbox of the last command, kept while the mounts it was made
/// for stay the same (a container lives as long as it).
#[derive(Default)]
pub struct Cached(Mutex<Option<(Vec<String>, Arc<ShellSandbox>)>>);

impl Cached {
    /// Ends the kept sandbox (a container of its own is removed).
    pub fn clear(&self) {
        let kept = lock(&self.0).take();
        drop(kept);
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

pub fn exec(sandbox: &Sandbox, py: Python<'_>, argv: Vec<OsString>, timeout: Option<f64>, cwd: Option<String>) -> Result<ExecResult, Failure> {
    let Some(program) = argv.first().map(|a| a.to_string_lossy().into_owned()) else {
        return Err(Failure::Named("CommandPolicyError", "no command given".into()));
    };
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
        let mut fork = sandbox.session().fork(sandbox.approver())?;
        fork.ask_ahead(Some(&program), &[])?;
        let fs = fork.sandbox()?;
        {
            let mut session = sandbox.session();
            session.adopt(fork);
            sandbox.refresh(&session)?;
        }
        let shell = shell_for(sandbox, fs)?;
        let ran = shell.execute_argv(&argv, cwd.as_deref(), timeout)?;
        Ok(ExecResult {
            stdout: ran.stdout,
            stderr: ran.stderr,
            exit_code: ran.exit_code,
            timed_out: ran.timed_out,
            truncated: ran.truncated,
            sandboxed: ran.sandboxed,
        })
    })
}

/// The kept OS sandbox when `fs` has its mounts, else a new one (kept from now on).
fn shell_for(sandbox: &Sandbox, fs: warden_fs::Sandbox) -> Result<Arc<ShellSandbox>, Failure> {
    let wanted = shape(&fs);
    let mut kept = lock(&sandbox.shell.0);
    if let Some((shape, shell)) = kept.as_ref()
        && *shape == wanted
    {
        return Ok(shell.clone());
    }
    let policy = (*sandbox.policy).clone().with_network_of(sandbox.worker.as_deref());
    let shell = Arc::new(ShellSandbox::with_options(&policy, fs, ProcessCap::start()?, container_name())?);
    *kept = Some((wanted, shell.clone()));
    Ok(shell)
}
