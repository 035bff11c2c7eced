//! `warden exec`: one native command in the OS sandbox.

use std::io::Write;
use std::time::Duration;

use warden_fs::approval::{judge_unattended, CommandLine, CommandVerdict};
use warden_shell::container::{ContainerSandbox, Owner};
use warden_shell::{ContainerName, ExecutionResult, ShellError, ShellSandbox};

use crate::cli::ExecArgs;
use crate::exit::Failure;

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

pub fn run(args: ExecArgs) -> Result<(), Failure> {
    let given_timeout = args.timeout.as_deref().map(warden_policy::parse_duration).transpose().map_err(|m| Failure::usage(format!("--timeout: {m}")))?;
    let result = match (&args.sandbox, &args.policy) {
        (Some(name), None) => {
            crate::sandbox_cmd::check_name(name)?;
            if args.worker.is_some() {
                return Err(Failure::usage("--worker needs --policy: a kept sandbox runs the worker it was started with"));
            }
            let sandbox = ContainerSandbox::attach(name, true).map_err(shell_failure)?;
            // The rules it was started under, with nobody to ask: what they would ask about is refused.
            if let Some(rules) = &sandbox.settings().rules {
                let argv: Vec<String> = args.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
                if let CommandVerdict::Refused(text) = judge_unattended(rules, CommandLine::Argv(&argv)) {
                    return Err(Failure { status: Failure::NOT_RUN, message: text });
                }
            }
            let timeout = given_timeout.or(sandbox.settings().timeout).unwrap_or(DEFAULT_TIMEOUT);
            sandbox.run(&args.command, args.cwd.as_deref(), timeout).map_err(shell_failure)?
        }
        (Some(name), Some(policy)) => {
            crate::sandbox_cmd::check_name(name)?;
            in_sandbox(&args, policy, given_timeout, ContainerName { name: name.clone(), owner: Owner::Kept })?
        }
        (None, Some(policy)) => in_sandbox(&args, policy, given_timeout, ContainerName { name: "exec".into(), owner: Owner::ThisProcess })?,
        (None, None) => return Err(Failure::usage("warden exec needs --policy or --sandbox")),
    };
    report(result)
}

/// Runs the command under `policy`, in a sandbox of its own, or in the kept
/// sandbox `container` names when that runs with the policy's settings.
fn in_sandbox(args: &ExecArgs, policy: &std::path::Path, given_timeout: Option<Duration>, mut container: ContainerName) -> Result<ExecutionResult, Failure> {
    // Its cgroup is made on a thread of its own while the policy loads.
    let cap = warden_shell::ProcessCap::start()?;
    let mut policy = warden_policy::load(policy)?.with_network_of(args.worker.as_deref());
    let timeout = given_timeout.or(policy.limits.timeout).unwrap_or(DEFAULT_TIMEOUT);
    let command_line: Vec<String> = args.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let listed = crate::approve::Listed { tool: "warden exec".into(), detail: command_line.join(" ") };
    let mut approvals = crate::approve::Approvals::open(&policy, args.worker.as_deref(), &args.approvals, &listed)?;
    if let Some(rules) = policy.command_rules_for(args.worker.as_deref()) {
        let line = CommandLine::Argv(&command_line);
        match approvals.session.judge_command(rules, line, Some("warden exec"), &policy.network)? {
            CommandVerdict::Refused(text) => return Err(Failure { status: Failure::NOT_RUN, message: text }),
            CommandVerdict::Run { granted: Some(granted) } => {
                policy.network = granted.network;
                // A grant is this command's alone: never given to a kept container, which outlives it.
                if container.owner == Owner::Kept {
                    eprintln!("warden: the rule's grant runs this command in a container of its own, not in the kept sandbox {}", container.name);
                    container = ContainerName { name: "exec".into(), owner: Owner::ThisProcess };
                }
            }
            CommandVerdict::Run { granted: None } => {}
        }
    }
    approvals.ask_before_running(&command_line[0])?;
    approvals.not_cancelled()?;
    let sandbox = ShellSandbox::with_options(&policy, approvals.session.sandbox()?, cap, container).map_err(shell_failure)?;
    let ran = match approvals.cancelled() {
        // Cancelled at the policy's console, the command is killed as on a timeout.
        Some(cancelled) => sandbox.execute_argv_cancellable(&args.command, args.cwd.as_deref(), timeout, &cancelled),
        None => sandbox.execute_argv(&args.command, args.cwd.as_deref(), timeout),
    };
    ran.map_err(shell_failure)
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
