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

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<sandbox::Sandbox>()?;
    m.add_class::<approver::ApprovalRequest>()?;
    m.add_class::<values::Written>()?;
    m.add_class::<values::Entry>()?;
    m.add_class::<values::Stat>()?;
    m.add_class::<values::ExecResult>()?;
    m.add_class::<values::ToolResult>()?;
    m.add_function(wrap_pyfunction!(cli::main, m)?)?;
    m.add_function(wrap_pyfunction!(cli::use_net_bridge, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
