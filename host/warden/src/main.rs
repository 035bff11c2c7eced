mod approve;
mod check;
mod cli;
mod console_cmd;
mod exit;
mod exec_cmd;
mod fs_cmd;
mod mcp_cmd;
mod new_cmd;
mod prompt;
mod sandbox_cmd;
mod suggest_cmd;
mod wasm_cmd;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};
use exit::Failure;

/// The hidden first argument that makes this binary the network bridge
/// inside a sandbox (see `warden_net::bridge`).
const NET_BRIDGE: &str = "__net-bridge";

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == NET_BRIDGE) {
        std::process::exit(warden_net::bridge::main(&args[2..]));
    }
    if let Ok(me) = std::env::current_exe() {
        warden_shell::set_net_bridge(me, vec![NET_BRIDGE.into()]);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { policy } => check::run(&policy).map(|report| print!("{report}")),
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
        Command::Tools { component, cache } => wasm_cmd::tools(&component, &cache),
        Command::Suggest { audit, session } => suggest_cmd::run(&audit, session.as_deref()),
        Command::Compile { component, cache } => wasm_cmd::compile(&component, &cache),
        Command::New { lang, path } => new_cmd::run(lang, &path),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure @ Failure { .. }) => failure.exit(),
    }
}
