//! The `warden` command of the Python package: the same CLI as the binary,
//! run in this process (one copy of the runtime in the wheel).

use std::ffi::OsString;
use std::path::PathBuf;

use pyo3::prelude::*;

/// Runs the `warden` command line `argv` (the program's name first) and
/// returns its exit status. `bridge`: the package's network bridge program.
#[pyfunction]
#[pyo3(signature = (argv, bridge=None))]
pub fn main(py: Python<'_>, argv: Vec<OsString>, bridge: Option<PathBuf>) -> u8 {
    let bridge = bridge.map(|program| warden_cli::Bridge { program, args: Vec::new() });
    py.detach(|| warden_cli::run(argv, bridge))
}

/// Names the program that a command under a network allowlist starts as its
/// bridge inside the sandbox (the package's own `warden-net-bridge`).
#[pyfunction]
pub fn use_net_bridge(program: PathBuf) {
    warden_shell::set_net_bridge(program, Vec::new());
}
