//! The `warden` command as a library: the binary's `main`, and the Python
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

/// The program (and its first arguments) that a sandbox with a network
/// allowlist starts as its bridge.
pub struct Bridge {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

/// The command line, as clap defines it (the user guide's CLI reference is
/// generated from it).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
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
