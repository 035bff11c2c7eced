//! Prints, one per line, the bubblewrap arguments `warden exec --policy POLICY`
//! gives bwrap for `/bin/true` (without its seccomp and status pipes), so that
//! benchmarks can run raw bwrap with exactly Warden's mounts and flags.
//! Usage: cargo run --release -p warden-shell --example bwrap_args -- POLICY

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::io::Write;

fn main() {
    let policy = std::env::args_os().nth(1).expect("usage: bwrap_args POLICY");
    let policy = warden_policy::load(policy.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    let sandbox = warden_shell::ShellSandbox::new(&policy, None).unwrap_or_else(|e| panic!("{e}"));
    let plan = sandbox.plan();
    let shield = warden_shell::Shield::for_plan(plan).unwrap_or_else(|e| panic!("{e}"));
    let args = warden_shell::bwrap_args(plan, &shield, &plan.default_cwd, None, None, None, &[OsString::from("/bin/true")]);
    let mut out = std::io::stdout().lock();
    for arg in args {
        out.write_all(arg.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
    }
}
