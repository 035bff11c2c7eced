//! The `warden:tool/tool` world: `describe` and `call`.

use std::sync::Arc;

use warden_fs::Denial;

use crate::error::RunError;
use crate::fs_guard::SandboxLists;
use crate::runtime::{ComponentKind, Loaded, Runtime};
use crate::session::{RunConfig, RunReport, Session};

pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "warden:tool/tool",
        with: { "wasi": wasmtime_wasi::p2::bindings },
        require_store_data_send: true,
        additional_derives: [PartialEq, Eq],
    });
}

pub use bindings::{ToolError, ToolInfo};

/// The tool's own answer, and what the call left behind.
#[derive(Debug)]
pub struct CallOutcome {
    /// A `denied` error carries the sandbox's message, not the tool's.
    pub result: Result<String, ToolError>,
    /// The refusal behind a `denied` result, for an approval session to act on.
    pub denial: Option<Denial>,
    pub report: RunReport,
}

/// A tool reports a refusal in its own words, at best the path it was
/// refused; the sandbox's words say what is allowed instead.
///
/// A tool that failed after a refusal is reported as refused: the guest's
/// libc may have turned the refusal into a bare `EIO` (wasip2 libcs do so
/// for every stream error). A `denied` with no refusal on record was refused
/// by the guest's own libc: the path lies under no mount.
fn in_sandbox_words(result: Result<String, ToolError>, report: &RunReport, lists: &SandboxLists) -> (Result<String, ToolError>, Option<Denial>) {
    let denial = match (&result, report.denials.last()) {
        (Err(ToolError::Denied(_) | ToolError::Failed(_)), Some(denial)) => denial.clone(),
        (Err(ToolError::Denied(said)), None) if said.starts_with('/') && !said.contains('\n') => {
            Denial::OutsideSandbox { path: said.clone(), readable: lists.readable.clone() }
        }
        _ => return (result, None),
    };
    (Err(ToolError::Denied(denial.to_string())), Some(denial))
}

impl Runtime {
    fn tool_pre(&self, loaded: &Loaded) -> Result<bindings::ToolPre<crate::state::ToolState>, RunError> {
        if loaded.kind != ComponentKind::Tool {
            return Err(RunError::Usage(
                "this component is a command (it exports `wasi:cli/run`), not a tool; use `warden run`".into(),
            ));
        }
        match &loaded.tool {
            Some(pre) => Ok(pre.clone()),
            None => bindings::ToolPre::new(loaded.pre.clone()).map_err(|e| RunError::Instantiate(format!("{e:#}"))),
        }
    }

    /// The tools a component offers: name, description and input schema.
    pub fn describe(&self, loaded: &Loaded, config: &RunConfig) -> Result<Vec<ToolInfo>, RunError> {
        let pre = self.tool_pre(loaded)?;
        let mut session = Session::new(self, config);
        let tool = pre.instantiate(&mut session.store).map_err(|e| session.classify(e))?;
        tool.call_describe(&mut session.store).map_err(|e| session.classify(e))
    }

    /// Calls tool `name` with `input` (JSON text) in a fresh instance.
    pub fn call(&self, loaded: &Loaded, config: &RunConfig, name: &str, input: &str) -> Result<CallOutcome, RunError> {
        self.call_keeping_denials(loaded, config, name, input).map_err(|(e, _)| e)
    }

    /// [`Runtime::call`], where a call that ended in an error (a trap, a
    /// limit) still gives the refusals it met, for the audit log: a tool cannot
    /// keep its refused attempts out of it by trapping after them. (A call
    /// that ends keeps them in its report.)
    pub fn call_keeping_denials(&self, loaded: &Loaded, config: &RunConfig, name: &str, input: &str) -> Result<CallOutcome, (RunError, Vec<Denial>)> {
        let pre = self.tool_pre(loaded).map_err(|e| (e, Vec::new()))?;
        let mut session = Session::new(self, config);
        match pre.instantiate(&mut session.store).and_then(|tool| tool.call_call(&mut session.store, name, input)) {
            Ok(result) => {
                let report = session.finish();
                let (result, denial) = in_sandbox_words(result, &report, &config.lists);
                Ok(CallOutcome { result, denial, report })
            }
            Err(e) => {
                let met = session.denials();
                Err((session.classify(e), met))
            }
        }
    }

    /// [`Runtime::call`] from async code: the call runs on tokio's blocking
    /// pool, in its own store, so many can run at once.
    pub async fn call_async(
        self: &Arc<Self>,
        loaded: Arc<Loaded>,
        config: RunConfig,
        name: String,
        input: String,
    ) -> Result<CallOutcome, RunError> {
        let runtime = Arc::clone(self);
        tokio::task::spawn_blocking(move || runtime.call(&loaded, &config, &name, &input))
            .await
            .map_err(|e| RunError::Trap(format!("the call's thread failed: {e}")))?
    }
}
