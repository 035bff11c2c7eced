//! The network bridge as a program of its own, for hosts that are not the
//! `warden` binary (the Python package): started inside a sandbox with the
//! arguments `warden_net::bridge::arguments` gives.

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    std::process::exit(warden_net::bridge::main(&args));
}
