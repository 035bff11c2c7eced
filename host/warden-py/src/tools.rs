//! `Sandbox.call_tool`: a component's tool on wasmtime, as `warden call` runs it.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use warden_policy::LimitsSpec;
use warden_wasm::{call_approved, Loaded, RunConfig, RunError, RunLimits, Runtime, RuntimeOptions};

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

/// One engine for the process, made at the first call (never before a fork).
fn runtime() -> Result<&'static Runtime, Failure> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| Runtime::new(RuntimeOptions { cache_dir: warden_wasm::default_cache_dir(), max_concurrent: 64 }).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Failure::Named("ToolLoadError", e.clone()))
}

/// What tells one version of a component file from another.
type FileKey = (u64, u64, u64, i64, i64);

/// Components compiled and linked, by path, while their files stay the same.
#[derive(Default)]
pub struct Components(Mutex<HashMap<PathBuf, (FileKey, Arc<Loaded>)>>);

impl Components {
    fn load(&self, runtime: &Runtime, path: &Path) -> Result<Arc<Loaded>, Failure> {
        let meta = std::fs::metadata(path).map_err(|e| RunError::Load { path: path.display().to_string(), message: e.to_string() })?;
        let key = (meta.dev(), meta.ino(), meta.len(), meta.mtime(), meta.mtime_nsec());
        if let Some((known, loaded)) = lock(&self.0).get(path)
            && *known == key
        {
            return Ok(loaded.clone());
        }
        let loaded = Arc::new(runtime.load_file(path)?);
        lock(&self.0).insert(path.to_owned(), (key, loaded.clone()));
        Ok(loaded)
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
    let label = format!("{} {tool}", component.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
    py.detach(|| {
        let runtime = runtime()?;
        let loaded = sandbox.components.load(runtime, component)?;
        // Beside other calls: a fork of the session, whose session grants come back after.
        let mut fork = sandbox.session().fork(sandbox.approver())?;
        let outcome = call_approved(runtime, &loaded, &mut config, &mut fork, &label, tool, input);
        {
            let mut session = sandbox.session();
            session.adopt(fork);
            sandbox.refresh(&session)?;
        }
        let outcome = outcome??;
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
