//! Why a run or call did not complete, worded for the person or model reading it.

use std::time::Duration;

use wasmtime::Trap;

use crate::limits::MemoryLimitExceeded;
use crate::output::OutputLimitExceeded;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot load {path}: {message}")]
    Load { path: String, message: String },
    #[error("cannot start the component: {0}")]
    Instantiate(String),
    #[error("{0}")]
    Unenforceable(String),
    #[error("the tool ran past its time limit of {}", humantime_ms(*limit))]
    Timeout { limit: Duration },
    #[error("the tool ran out of fuel (limit: {limit})")]
    OutOfFuel { limit: u64 },
    #[error("{0}")]
    MemoryLimit(#[from] MemoryLimitExceeded),
    #[error("{0}")]
    OutputLimit(#[from] OutputLimitExceeded),
    #[error("the tool trapped: {0}")]
    Trap(String),
    #[error("{0}")]
    Usage(String),
    #[error("the call was cancelled")]
    Cancelled,
}

/// What stops a run whose cancel flag was set.
#[derive(Debug, thiserror::Error)]
#[error("cancelled")]
pub(crate) struct Cancelled;

fn humantime_ms(d: Duration) -> String {
    if d.subsec_millis() == 0 { format!("{}s", d.as_secs()) } else { format!("{}ms", d.as_millis()) }
}

/// Limits a classifier needs to name what was hit.
#[derive(Clone, Copy)]
pub(crate) struct HitLimits {
    pub timeout: Option<Duration>,
    pub fuel: Option<u64>,
}

/// Turns an error out of wasmtime into the limit or trap it stands for.
pub(crate) fn classify(err: wasmtime::Error, limits: HitLimits) -> RunError {
    if let Some(e) = err.downcast_ref::<MemoryLimitExceeded>() {
        return RunError::MemoryLimit(MemoryLimitExceeded { limit: e.limit });
    }
    if err.downcast_ref::<Cancelled>().is_some() {
        return RunError::Cancelled;
    }
    if let Some(e) = err.downcast_ref::<OutputLimitExceeded>() {
        return RunError::OutputLimit(OutputLimitExceeded { stream: e.stream, limit: e.limit });
    }
    match err.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => RunError::Timeout { limit: limits.timeout.unwrap_or_default() },
        Some(Trap::OutOfFuel) => RunError::OutOfFuel { limit: limits.fuel.unwrap_or_default() },
        Some(trap) => RunError::Trap(trap.to_string()),
        None => RunError::Trap(format!("{err:#}").lines().next().unwrap_or_default().to_owned()),
    }
}
