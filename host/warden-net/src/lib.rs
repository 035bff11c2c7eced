//! Network egress under a policy's allowlist, for every runtime. Knows nothing
//! of wasmtime.
//!
//! - [`dial`]: resolve, check every address against the [`Network`], connect
//!   to an admitted one (blocking and async).
//! - [`proxy`]: the filtering proxy for shell commands (HTTP `CONNECT`,
//!   absolute-form HTTP and SOCKS5 on one port), with a log of its refusals.
//! - [`bridge`]: how the proxy reaches a sandbox without a network: a
//!   listening socket made inside it and handed out over an inherited socket.
//!
//! [`Network`]: warden_policy::Network

pub mod bridge;
pub mod dial;
pub mod proxy;

pub use dial::{connect, connect_async, DialError};
pub use proxy::Proxy;
