//! `warden exec`: one native command in the OS sandbox.

use std::io::Write;
use std::time::Duration;

use warden_shell::container::{ContainerSandbox, Owner};
use warden_shell::{ContainerName, ExecutionResult, ShellError, ShellSandbox};

use crate::cli::ExecArgs;
use crate::exit::Failure;

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

pub fn run(args: ExecArgs) -> Result<(), Failure> {
    let given_timeout = args.timeout.as_deref().map(warden_policy::parse_duration).transpose().map_err(|m| Failure::usage(format!("--timeout: {m}")))?;
    let result = match (&args.sandbox, &args.policy) {
        (Some(name), _) => {
            crate::sandbox_cmd::check_name(name)?;
            let sandbox = ContainerSandbox::attach(name, true).map_err(shell_failure)?;
            let timeout = given_timeout.or(sandbox.settings().timeout).unwrap_or(DEFAULT_TIMEOUT);
            sandbox.run(&args.command, args.cwd.as_deref(), timeout).map_err(shell_failure)?
        }
        (None, Some(policy)) => in_new_sandbox(&args, policy, given_timeout)?,
        (None, None) => return Err(Failure::usage("warden exec needs --policy or --sandbox")),
    };
    report(result)
}

fn in_new_sandbox(args: &ExecArgs, policy: &std::path::Path, given_timeout: Option<Duration>) -> Result<ExecutionResult, Failure> {
    // Its cgroup is made on a thread of its own while the policy loads.
    let cap = warden_shell::ProcessCap::start()?;
    let policy = warden_policy::load(policy)?.with_network_of(args.worker.as_deref());
    let timeout = given_timeout.or(policy.limits.timeout).unwrap_or(DEFAULT_TIMEOUT);
    let mut approvals = crate::approve::Approvals::open(&policy, args.worker.as_deref(), &args.approvals)?;
    approvals.ask_before_running(&args.command[0].to_string_lossy())?;
    let container = ContainerName { name: "exec".into(), owner: Owner::ThisProcess };
    let sandbox = ShellSandbox::with_options(&policy, approvals.session.sandbox()?, cap, container).map_err(shell_failure)?;
    sandbox.execute_argv(&args.command, args.cwd.as_deref(), timeout).map_err(shell_failure)
}

fn report(result: ExecutionResult) -> Result<(), Failure> {
    std::io::stdout().write_all(result.stdout.as_bytes())?;
    std::io::stderr().write_all(result.stderr.as_bytes())?;
    match result.exit_code {
        0 => Ok(()),
        code => Err(Failure::exit_code(code)),
    }
}

pub fn shell_failure(e: ShellError) -> Failure {
    let status = match e {
        ShellError::Spawn(_) | ShellError::Engine(_) => Failure::FAILED,
        _ => Failure::USAGE,
    };
    Failure { status, message: format!("warden: {e}") }
}
