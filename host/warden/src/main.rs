use std::process::ExitCode;

use warden_cli::{Bridge, NET_BRIDGE};

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == NET_BRIDGE) {
        std::process::exit(warden_net::bridge::main(&args[2..]));
    }
    let bridge = std::env::current_exe().ok().map(|program| Bridge { program, args: vec![NET_BRIDGE.into()] });
    ExitCode::from(warden_cli::run(args, bridge))
}
