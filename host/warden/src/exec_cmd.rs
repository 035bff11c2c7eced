//! `warden exec`: one native command in the OS sandbox.

use std::io::Write;
use std::time::Duration;

use warden_shell::{ShellError, ShellSandbox};

use crate::cli::ExecArgs;
use crate::exit::Failure;

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

pub fn run(args: ExecArgs) -> Result<(), Failure> {
    // Its cgroup is made on a thread of its own while the policy loads.
    let cap = warden_shell::ProcessCap::start()?;
    let policy = warden_policy::load(&args.policy)?;
    let timeout = match &args.timeout {
        Some(t) => warden_policy::parse_duration(t).map_err(|m| Failure::usage(format!("--timeout: {m}")))?,
        None => policy.limits.timeout.unwrap_or(DEFAULT_TIMEOUT),
    };
    let mut approvals = crate::approve::Approvals::open(&policy, args.worker.as_deref(), &args.approvals)?;
    approvals.ask_before_running(&args.command[0].to_string_lossy())?;
    let sandbox = ShellSandbox::with_cap(&policy, approvals.session.sandbox()?, cap).map_err(shell_failure)?;
    let result = sandbox.execute_argv(&args.command, args.cwd.as_deref(), timeout).map_err(shell_failure)?;
    std::io::stdout().write_all(result.stdout.as_bytes())?;
    std::io::stderr().write_all(result.stderr.as_bytes())?;
    match result.exit_code {
        0 => Ok(()),
        code => Err(Failure::exit_code(code)),
    }
}

fn shell_failure(e: ShellError) -> Failure {
    let status = match e {
        ShellError::Spawn(_) => Failure::FAILED,
        _ => Failure::USAGE,
    };
    Failure { status, message: format!("warden: {e}") }
}
