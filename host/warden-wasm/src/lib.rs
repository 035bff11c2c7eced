//! Warden's WebAssembly runtime: tools as WASI components on wasmtime.
//!
//! One [`Runtime`] holds the engine, the linker and the compile cache. A tool
//! file becomes a [`Loaded`] component once; every run or call then gets a
//! fresh store with its own limits, stdio and preopens. The guest's
//! filesystem is the sandbox's handles, seen through [`fs_guard`], which adds
//! Warden's suffix and size rules to wasmtime-wasi's own checks.

mod approved;
mod cache;
mod command;
mod component;
mod deterministic;
mod error;
pub mod fs_guard;
mod limits;
mod log;
mod mounts;
mod net_guard;
mod output;
mod runtime;
mod session;
mod state;
mod tool;

pub use approved::{call_approved, give_sandbox};
pub use cache::CacheOutcome;
pub use command::RunOutcome;
pub use component::PREVIEW1_REACTOR_ADAPTER;
pub use error::RunError;
pub use limits::{RunLimits, DEFAULT_DETERMINISTIC_FUEL, DEFAULT_MEMORY_BYTES, DEFAULT_OUTPUT_BYTES, DEFAULT_TIMEOUT};
pub use log::LogLine;
pub use mounts::preopens_for;
pub use output::Sink;
pub use runtime::{default_cache_dir, ComponentKind, Loaded, Runtime, RuntimeOptions};
pub use session::{RunConfig, RunReport, Stdin};
pub use tool::{CallOutcome, ToolError, ToolInfo};
