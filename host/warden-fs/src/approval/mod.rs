//! Approvals and dynamic expansion: a person decides at the moment of access.
//!
//! An [`ApprovalSession`] wraps a sandbox. It hands out the sandbox *in effect*
//! (mounts whose reads need approval left out, mounts whose writes need it
//! read-only, granted folders added), turns a refusal into a [`Request`] when a
//! person could lift it, asks the [`Approver`], records the answer in the audit
//! log and runs the operation again. Nothing is granted without an answer, and
//! no grant outlives the session.

mod approver;
mod audit;
mod commands;
mod effective;
mod request;
mod scripted;
mod session;
mod suggest;

pub use approver::{Answer, Approver, DenyAll, Scope};
pub use audit::{AuditLog, AuditRecord, Decision};
pub use commands::{granted_shown, judge_unattended, CommandLine, CommandRequest, CommandVerdict};
pub use request::{GrantDir, Reason, Request};
pub use scripted::{Scripted, ScriptedApprover, ScriptedCommand, ScriptedRule};
pub use session::{ApprovalSession, Refusable, SessionInfo};
pub use suggest::suggestion;
