//! `warden-full`: every command of the CLI. `warden` hands it every command
//! but `warden exec` (see `main.rs`); run directly, it does all of them too.

use std::process::ExitCode;

use warden_cli::Bridge;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let bridge = Bridge::serve_or_offer(&args, std::env::current_exe().ok().as_deref());
    // Nothing this program was started with reaches a command it runs.
    warden_shell::close_inherited_descriptors_on_exec();
    warden_cli::ends_after_one_command();
    ExitCode::from(warden_cli::run(args, bridge))
}
