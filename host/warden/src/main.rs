mod approve;
mod check;
mod cli;
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

fn main() -> ExitCode {
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
