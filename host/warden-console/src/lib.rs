//! The person's own approval console: a page served on loopback by Warden
//! itself, where the person who owns the machine answers the questions the
//! sandbox asks (whatever the agent's client can show), sees and cancels the
//! calls running, revokes grants and reads the audit log.
//!
//! Nothing an agent or a sandboxed process can reach answers a question: the
//! page takes a login by a one-time URL (in a file of Warden's private folder, never
//! inside a mount, an environment or a tool's output), then a cookie that is
//! `HttpOnly` and `SameSite=Strict`; every request must name the console's
//! own address as its `Host` (DNS rebinding); every API request must carry
//! the session's CSRF token, which only the page has (given once in the
//! login redirect's fragment: a page on another port of 127.0.0.1 is sent
//! the cookie, never the token), and every change a same-origin `Origin`. What tools,
//! clients and paths are called reaches the page as JSON and is shown as
//! text, never as HTML.
//!
//! - `hub.rs`: what the console shows and what waits on it: questions (each
//!   with the channel its answer goes back on), calls (each with its
//!   cancel), the sources of grants, and a counter the page listens to.
//! - `auth.rs`: the login, sessions, CSRF tokens, and the `Host` and `Origin` checks.
//! - `audit_view.rs`: the audit log, newest first and filtered, with the policy lines for what was approved.
//! - `routes.rs`: the HTTP side: the page, its JSON, server-sent events, the answers.
//! - `listener.rs`: the TCP listener, bounded in connections and idle time.
//! - `local/`: the Unix socket where Warden's CLI commands list themselves and ask.
//! - `standalone.rs`: `warden console`: the page and the socket, until interrupted.

mod audit_view;
mod auth;
mod hub;
mod listener;
mod local;
mod routes;
mod standalone;

pub use hub::{Asked, CallGuard, Console, Decision, GrantSource, GrantView, NewCall, NewQuestion, MAX_PENDING, MAX_PENDING_PER_CLIENT};
pub use local::{socket_of, ConsoleApprover, Heard, LocalConsole};
pub use routes::{serve, serve_in_background, Served};
pub use standalone::{run_standalone, Standalone};
