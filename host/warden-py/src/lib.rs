//! `warden._native`: Warden's sandbox for Python, in process. The `warden`
//! package wraps it (docstrings, asyncio, the pydantic-ai adapters); every
//! file operation, component call and command runs here with the GIL released.

mod approver;
mod cli;
mod errors;
mod sandbox;
mod shell;
mod tools;
mod values;

use std::path::PathBuf;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<sandbox::Sandbox>()?;
    m.add_class::<approver::ApprovalRequest>()?;
    m.add_class::<approver::CommandApprovalRequest>()?;
    m.add_class::<values::Written>()?;
    m.add_class::<values::Entry>()?;
    m.add_class::<values::Stat>()?;
    m.add_class::<values::ExecResult>()?;
    m.add_class::<values::ToolResult>()?;
    m.add_class::<shell::CancelToken>()?;
    m.add_function(wrap_pyfunction!(cli::main, m)?)?;
    m.add_function(wrap_pyfunction!(cli::use_net_bridge, m)?)?;
    m.add_function(wrap_pyfunction!(stop_container, m)?)?;
    m.add_function(wrap_pyfunction!(check_root, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// Removes the kept container sandbox `name` and everything running in it
/// (`warden sandbox stop`).
#[pyfunction]
fn stop_container(py: Python<'_>, name: String) -> PyResult<()> {
    Ok(shell::stop_container(py, name)?)
}

/// Checks a mount's host folder as written, before it is made: not `~`, not
/// a system folder, not one that exposes the host. Returns it absolute.
#[pyfunction]
pub fn check_root(base: PathBuf, root: String) -> PyResult<PathBuf> {
    let refused = |m: String| errors::Failure::Named("PolicyError", m);
    Ok(warden_policy::check_root_as_written(&base, &root).map_err(refused)?)
}
