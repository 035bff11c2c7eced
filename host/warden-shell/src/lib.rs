//! Warden's OS-sandbox runner for native commands: bubblewrap on Linux,
//! Seatbelt on macOS, configured from the same policy as the capability
//! filesystem. Mounts appear at their host paths (build tools expect real
//! paths); the rest of the host is hidden, except the system's runtime
//! folders, read-only. This crate knows nothing of wasmtime.

mod bwrap;
pub mod landlock;
pub mod container;
mod egress;
mod env;
mod error;
mod notes;
mod output;
mod pids;
mod placeholders;
mod plan;
mod probe;
mod repos;
mod run;
mod sandbox;
mod sandbox_init;
pub mod seatbelt;
mod seccomp;
mod shield;
mod watch;

pub use bwrap::args as bwrap_args;
pub use egress::{set_net_bridge, BRIDGE_IN_SANDBOX};
pub use error::ShellError;
pub use pids::{close_inherited_descriptors_on_exec, without_inherited_descriptors, ProcessCap, MAX_PIDS};
pub use plan::{Bind, ExecPlan, PROTECTED, SYSTEM_READ};
pub use probe::{bwrap_path, explain as explain_os_backend, probe};
pub use run::{Backend, ExecutionResult, TIMED_OUT};
pub use sandbox::{ContainerName, ShellSandbox};
pub use shield::Shield;
