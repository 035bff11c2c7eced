//! Running a `wasi:cli/command` component to completion.

use wasmtime_wasi::I32Exit;
use wasmtime_wasi::p2::bindings::sync::CommandPre;

use crate::error::RunError;
use crate::runtime::{ComponentKind, Loaded, Runtime};
use crate::session::{RunConfig, RunReport, Session};

/// A command's exit code and what it left behind.
#[derive(Debug)]
pub struct RunOutcome {
    pub exit_code: i32,
    pub report: RunReport,
}

impl Runtime {
    /// Runs `loaded` as a command: `main` with the configured args and stdio.
    pub fn run(&self, loaded: &Loaded, config: &RunConfig) -> Result<RunOutcome, RunError> {
        if loaded.kind != ComponentKind::Command {
            return Err(RunError::Usage(
                "this component is a tool (it exports `call`), not a command; use `warden call` or `warden tools`".into(),
            ));
        }
        let pre = CommandPre::new(loaded.pre.clone()).map_err(|e| RunError::Instantiate(format!("{e:#}")))?;
        let mut session = Session::new(self, config);
        let command = pre.instantiate(&mut session.store).map_err(|e| session.classify(e))?;
        let exit_code = match command.wasi_cli_run().call_run(&mut session.store) {
            Ok(Ok(())) => 0,
            Ok(Err(())) => 1,
            Err(e) => match e.downcast_ref::<I32Exit>() {
                Some(exit) => exit.0,
                None => return Err(session.classify(e)),
            },
        };
        Ok(RunOutcome { exit_code, report: session.finish() })
    }
}
