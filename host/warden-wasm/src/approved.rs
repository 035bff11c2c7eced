//! A tool call under an approval session: a refusal a person may lift is
//! asked about, then the call runs again from the start with the grant among
//! its preopens (a component never waits on a person mid-call, so its time
//! limits stay exact).

use warden_fs::approval::{ApprovalSession, Refusable};
use warden_fs::{Denial, Sandbox};

use crate::mounts::preopens_for;
use crate::runtime::{Loaded, Runtime};
use crate::session::RunConfig;
use crate::tool::{CallOutcome, ToolError};
use crate::error::RunError;

/// Calls `tool` with the sandbox in effect of `session`, asking and running
/// again while it is refused in a way a person may lift. `label` names the
/// call in requests and the audit log. The outer error is the session's own
/// (e.g. its audit log cannot be written).
pub fn call_approved(
    runtime: &Runtime,
    loaded: &Loaded,
    config: &mut RunConfig,
    session: &mut ApprovalSession,
    label: &str,
    tool: &str,
    input: &str,
) -> Result<Result<CallOutcome, RunError>, warden_fs::FsError> {
    let attempt = session.attempt(Some(label), |sandbox| {
        CallAttempt(give_sandbox(config, sandbox).map_err(|e| (e, Vec::new())).and_then(|()| runtime.call_keeping_denials(loaded, config, tool, input)))
    })?;
    Ok(attempt.0.map_err(|(e, _)| e))
}

/// The component's preopens: the mounts of `sandbox`.
pub fn give_sandbox(config: &mut RunConfig, sandbox: &Sandbox) -> Result<(), RunError> {
    let (preopens, lists) = preopens_for(sandbox)?;
    config.preopens = preopens;
    config.lists = lists;
    Ok(())
}

/// One call under an approval session; an error keeps the refusals met before it.
struct CallAttempt(Result<CallOutcome, (RunError, Vec<Denial>)>);

impl Refusable for CallAttempt {
    fn denial(&self) -> Option<&Denial> {
        self.0.as_ref().ok()?.denial.as_ref()
    }

    /// Every refusal the component met (also before a trap or a limit), and
    /// the one it was reported with.
    fn refusals(&self) -> Vec<&Denial> {
        let met = match &self.0 {
            Ok(outcome) => &outcome.report.denials,
            Err((_, met)) => met,
        };
        let mut all: Vec<&Denial> = met.iter().collect();
        if let Some(last) = self.denial().filter(|d| !all.contains(d)) {
            all.push(last);
        }
        all
    }

    fn with_denial(mut self, denial: Denial) -> Self {
        if let Ok(outcome) = &mut self.0 {
            outcome.result = Err(ToolError::Denied(denial.to_string()));
            outcome.denial = Some(denial);
        }
        self
    }
}
