//! `Sandbox.call_tool`: a component's tool on wasmtime, as `warden call` runs it.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use warden_policy::LimitsSpec;
use warden_wasm::fs_guard::{GuardedPreopen, SandboxLists};
use warden_wasm::{call_approved, preopens_for, Loaded, RunConfig, RunError, RunLimits, Runtime, RuntimeOptions};

use crate::errors::Failure;
use crate::sandbox::{lock, Sandbox};
use crate::values::ToolResult;

/// Limits for one call, over the policy's (the keys of a policy's `limits:`).
#[derive(Default)]
pub struct LimitArgs {
    pub memory: Option<String>,
    pub timeout: Option<String>,
    pub fuel: Option<u64>,
    pub output: Option<String>,
}

/// One engine for the process, made at the first call, and made again in a
/// child after a fork (whose copy has no epoch thread: its time limits would never fire).
fn runtime() -> Result<Arc<Runtime>, Failure> {
    static RUNTIME: Mutex<Option<(u32, Arc<Runtime>)>> = Mutex::new(None);
    let mut made = lock(&RUNTIME);
    let pid = std::process::id();
    if let Some((of, runtime)) = made.as_ref()
        && *of == pid
    {
        return Ok(runtime.clone());
    }
    let runtime = Arc::new(
        Runtime::new(RuntimeOptions { cache_dir: warden_wasm::default_cache_dir(), max_concurrent: 64, pooled: true })
            .map_err(|e| Failure::Named("ToolLoadError", e.to_string()))?,
    );
    *made = Some((pid, runtime.clone()));
    Ok(runtime)
}

/// What tells one version of a component file from another, and the process
/// whose engine compiled it.
type FileKey = (u64, u64, u64, i64, i64, u32);

/// Components compiled and linked, by path, while their files stay the same;
/// and the preopens of the sandbox in effect they were last given.
#[derive(Default)]
pub struct Components {
    loaded: Mutex<HashMap<PathBuf, (FileKey, Arc<Loaded>)>>,
    preopens: Mutex<Option<Preopens>>,
}

/// A sandbox in effect, and its mounts as preopens (whose handles are shared, not duplicated, per call).
struct Preopens {
    of: Arc<warden_fs::Sandbox>,
    preopens: Vec<GuardedPreopen>,
    lists: SandboxLists,
}

impl Components {
    fn load(&self, runtime: &Runtime, path: &Path) -> Result<Arc<Loaded>, Failure> {
        let meta = std::fs::metadata(path).map_err(|e| RunError::Load { path: path.display().to_string(), message: e.to_string() })?;
        let key = (meta.dev(), meta.ino(), meta.len(), meta.mtime(), meta.mtime_nsec(), std::process::id());
        if let Some((known, loaded)) = lock(&self.loaded).get(path)
            && *known == key
        {
            return Ok(loaded.clone());
        }
        let loaded = Arc::new(runtime.load_file(path)?);
        lock(&self.loaded).insert(path.to_owned(), (key, loaded.clone()));
        Ok(loaded)
    }

    /// Gives `config` the mounts of `current` as preopens, made once per sandbox in effect.
    fn give(&self, config: &mut RunConfig, current: Arc<warden_fs::Sandbox>) -> Result<(), Failure> {
        let mut cached = lock(&self.preopens);
        if !cached.as_ref().is_some_and(|c| Arc::ptr_eq(&c.of, &current)) {
            let (preopens, lists) = preopens_for(&current)?;
            *cached = Some(Preopens { of: current, preopens, lists });
        }
        let made = cached.as_ref().expect("made above");
        config.preopens = made.preopens.clone();
        config.lists = made.lists.clone();
        Ok(())
    }
}

pub fn call(sandbox: &Sandbox, py: Python<'_>, component: &Path, tool: &str, input: &str, limits: LimitArgs) -> Result<ToolResult, Failure> {
    if let Err(e) = serde_json::from_str::<serde_json::Value>(input) {
        return Err(Failure::Named("ToolInputError", format!("the input is not JSON: {e}")));
    }
    let spec = LimitsSpec { memory: limits.memory, timeout: limits.timeout, fuel: limits.fuel, output: limits.output };
    let given = spec.validate().map_err(|(field, message)| Failure::Named("ToolUsageError", format!("limits: {field}: {message}")))?;
    let policy = &sandbox.policy;
    let mut config = RunConfig {
        network: policy.network_for(sandbox.worker.as_deref()).clone(),
        env: policy.env.clone(),
        limits: RunLimits::resolve(policy.limits.overridden_by(given), false),
        ..RunConfig::default()
    };
    py.detach(|| {
        let runtime = runtime()?;
        let loaded = sandbox.components.load(&runtime, component)?;
        let outcome = if sandbox.quiet {
            // Nobody to ask, nothing to log: the call on the sandbox in effect is the whole of it.
            sandbox.components.give(&mut config, sandbox.current())?;
            runtime.call(&loaded, &config, tool, input)?
        } else {
            // Beside other calls: a fork of the session, whose session grants come back after.
            let label = format!("{} {tool}", component.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
            let mut fork = sandbox.fork()?;
            let outcome = call_approved(&runtime, &loaded, &mut config, &mut fork, &label, tool, input);
            sandbox.adopt(fork)?;
            outcome??
        };
        let report = outcome.report;
        match outcome.result {
            Ok(output) => Ok(ToolResult {
                output,
                stderr: report.stderr,
                logs: report.logs.into_iter().map(|l| (l.level.to_owned(), l.message)).collect(),
                fuel_consumed: report.fuel_consumed,
            }),
            Err(e) => Err(Failure::Tool(e)),
        }
    })
}
