//! Warden over the Model Context Protocol: an agent (Claude Code, pydantic-ai,
//! any MCP client) gets Warden's sandboxed file tools, with refusals in the
//! sandbox's own words (`isError: true`) and approvals kept by Warden.
//!
//! Depends on the runtimes (warden-fs, warden-wasm, warden-shell) and on
//! `rmcp`, the official Rust SDK; the CLI only parses flags and calls in here.

mod args;
mod calls;
mod catalogue;
mod component_tools;
mod elicit;
mod file_tools;
mod http;
mod parked;
mod reload;
mod server;
mod sessions;
mod shell_tool;
mod stdio;
mod token;

pub use component_tools::{is_valid_tool_name, Components, FetchComponent};
pub use http::{run_http, serve_http, HttpOptions, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE};
pub use catalogue::{check_tools, Offer, SessionFactory};
pub use reload::{Rebuild, Reloader};
pub use server::{refused, WardenMcp};
pub use shell_tool::{Granted, PerClient, ShellTool};
pub use stdio::{run_stdio, serve_stdio};
pub use token::Token;

/// Logs (this crate's, rmcp's) to stderr, never stdout, which may be the
/// protocol's channel. `WARDEN_LOG` sets the filter (default `warn`).
pub fn log_to_stderr() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WARDEN_LOG").unwrap_or_else(|_| "warn".into());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).try_init();
}
