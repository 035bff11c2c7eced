//! The console's local channel, for Warden's own CLI commands: a Unix socket
//! in Warden's private folder, one per policy file, where each command lists
//! itself among the live calls and puts its questions to the person.
//!
//! Only this user reaches it (the folder is theirs alone, and every peer's
//! uid is checked); no mount, sandboxed command or component does. A command
//! asks and hears its own answers; nothing said on the socket answers a
//! question, and no command sees another's.
//!
//! - `wire.rs`: where the socket is, and what is said on it (JSON lines).
//! - `server.rs`: the console's side.
//! - `client.rs`: a command's side, blocking.

mod client;
mod server;
mod wire;

pub use client::{ConsoleApprover, Heard, LocalConsole};
pub use server::serve_local;
pub use wire::socket_of;
