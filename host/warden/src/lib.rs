//! The `warden` command as a library: the `main` of its two programs (`warden`
//! runs `warden exec` alone, `warden-full` everything), and the Python
//! package's `warden` command (one program, so one copy of wasmtime in a wheel).

mod approve;
mod check;
mod cli;
mod console_cmd;
mod exit;
mod exec_cmd;
mod fs_cmd;
mod mcp_cmd;
mod new_cmd;
mod oci_cmd;
mod prompt;
mod rules_cmd;
mod sandbox_cmd;
mod suggest_cmd;
mod wasm_cmd;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

use cli::{Cli, Command};

/// The hidden first argument that makes the `warden` binary the network
/// bridge inside a sandbox (see `warden_net::bridge`).
pub const NET_BRIDGE: &str = "__net-bridge";

/// The program beside `warden` that runs every command but `warden exec`.
pub const FULL_PROGRAM: &str = "warden-full";

/// The program (and its first arguments) that a sandbox with a network
/// allowlist starts as its bridge.
pub struct Bridge {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

impl Bridge {
    /// What each program's `main` does first: inside a sandbox, `program
    /// __net-bridge ...` is the bridge, which runs and ends the process here;
    /// any other command line gets this program (`here`) as its sandboxes' bridge.
    pub fn serve_or_offer(args: &[OsString], here: Option<&std::path::Path>) -> Option<Bridge> {
        if args.get(1).is_some_and(|a| a == NET_BRIDGE) {
            std::process::exit(warden_net::bridge::main(&args[2..]));
        }
        here.map(|program| Bridge { program: program.to_path_buf(), args: vec![NET_BRIDGE.into()] })
    }
}

/// The command line, as clap defines it (the user guide's CLI reference is
/// generated from it).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// Runs `args` if they are a clean `warden exec` command line, and returns
/// its exit status; `None`, having run nothing, for any other (another
/// command, help, a usage error), which [`run`] then parses whole.
pub fn run_exec_only(args: &[OsString], bridge: Option<Bridge>) -> Option<u8> {
    let exec = parse_exec_only(args)?;
    // Nothing this program was started with reaches the command (only here:
    // `warden-full`, started for any other command, is handed them as they are).
    warden_shell::close_inherited_descriptors_on_exec();
    if let Some(bridge) = bridge {
        warden_shell::set_net_bridge(bridge.program, bridge.args);
    }
    Some(match exec_cmd::run(exec) {
        Ok(()) => 0,
        Err(failure) => failure.report(),
    })
}

/// `warden exec`'s arguments, parsed by its own definition alone: building
/// clap's whole command tree takes a third of a millisecond, which the
/// shell's path does not spend.
fn parse_exec_only(args: &[OsString]) -> Option<cli::ExecArgs> {
    use clap::{Args, FromArgMatches};
    if args.get(1).is_none_or(|a| a != "exec") {
        return None;
    }
    let only = clap::Command::new("warden").subcommand(cli::ExecArgs::augment_args(clap::Command::new("exec")));
    let matches = only.try_get_matches_from(args).ok()?;
    cli::ExecArgs::from_arg_matches(matches.subcommand_matches("exec")?).ok()
}

static ENDS_AFTER_ONE_COMMAND: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For a program that exits once [`run`] returns (not a host that runs
/// commands in its own process, as the Python package does): a one-shot
/// command then leaves what it made to the process's end.
pub fn ends_after_one_command() {
    ENDS_AFTER_ONE_COMMAND.store(true, std::sync::atomic::Ordering::Relaxed);
}

pub(crate) fn process_ends_after_this_command() -> bool {
    ENDS_AFTER_ONE_COMMAND.load(std::sync::atomic::Ordering::Relaxed)
}

/// Runs the command line `args` (the program's name first) and returns the
/// exit status. Help and usage errors print and end the process, as clap does.
pub fn run(args: Vec<OsString>, bridge: Option<Bridge>) -> u8 {
    if let Some(bridge) = bridge {
        warden_shell::set_net_bridge(bridge.program, bridge.args);
    }
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        Command::Check { policy, registry } => check::run(&policy, &registry).map(|report| print!("{report}")),
        Command::Pull(args) => oci_cmd::pull(&args),
        Command::Lock { policy, registry } => oci_cmd::lock(&policy, &registry),
        Command::Schema => {
            println!("{}", warden_policy::json_schema());
            Ok(())
        }
        Command::Fs(args) => fs_cmd::run(args),
        Command::Run(args) => wasm_cmd::run(args),
        Command::Exec(args) => exec_cmd::run(args),
        Command::Sandbox(command) => sandbox_cmd::run(command),
        Command::Mcp(args) => mcp_cmd::run(args),
        Command::Console(args) => console_cmd::run(args),
        Command::Call(args) => wasm_cmd::call(args),
        Command::Tools { component, cache, oci } => wasm_cmd::tools(&component, &cache, &oci),
        Command::Suggest { audit, session } => suggest_cmd::run(&audit, session.as_deref()),
        Command::Rules(cli::RulesCommand::Check(args)) => rules_cmd::check(&args),
        Command::Compile { component, cache, oci } => wasm_cmd::compile(&component, &cache, &oci),
        Command::New { lang, path } => new_cmd::run(lang, &path),
    };
    match result {
        Ok(()) => 0,
        Err(failure) => failure.report(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn exec_parsed_alone_is_exec_parsed_whole() {
        for words in [
            &["warden", "exec", "--policy", "p.yaml", "--", "ls", "-l", "--policy"][..],
            &["warden", "exec", "--policy=p.yaml", "--timeout", "5s", "--cwd", "/portfolio", "--worker", "w", "--", "sh", "-c", "x"],
            &["warden", "exec", "--sandbox", "dev", "--", "true"],
            &["warden", "exec", "--sandbox", "dev", "--policy", "p.yaml", "--approve", "read:/a", "--approve", "exec:git push", "--answers", "f", "--audit", "a.jsonl", "--ask-via", "console", "--", "true"],
        ] {
            let args = line(words);
            let Command::Exec(whole) = Cli::try_parse_from(&args).unwrap().command else { panic!("{words:?} is not exec") };
            assert_eq!(format!("{:?}", parse_exec_only(&args).unwrap()), format!("{whole:?}"), "{words:?}");
        }
    }

    #[test]
    fn help_usage_errors_and_other_commands_are_left_to_the_whole_command_line() {
        for words in [
            &["warden", "exec", "--help"][..],
            &["warden", "exec", "-h"],
            &["warden", "exec", "--version"],
            &["warden", "exec"],
            &["warden", "exec", "--policy", "p.yaml"],
            &["warden", "exec", "--bogus", "--", "true"],
            &["warden", "exec", "--timeout"],
            &["warden", "run", "--policy", "p.yaml", "x.wasm"],
            &["warden", "--version"],
            &["warden"],
            &["warden", "--policy", "p.yaml", "exec", "--", "true"],
        ] {
            assert!(parse_exec_only(&line(words)).is_none(), "{words:?}");
        }
    }
}
