//! Warden's capability filesystem.
//!
//! A [`Sandbox`] holds one open [`cap_std::fs::Dir`] per mount and the mount's
//! rules. Every operation resolves a *virtual* path to one of those handles and
//! a path relative to it; `..` and symlinks can never leave a handle, by
//! construction of cap-std rather than by string checks on host paths.
//! Messages name virtual paths only. This crate knows nothing of wasmtime.

pub mod approval;
mod error;
mod links;
mod list;
mod read;
mod sandbox;
mod stat;
mod tree;
mod write;

pub use error::{Access, Denial, FsError, Op, Result};
pub use links::{follow_final, Followed};
pub use list::{DirEntry, Entry, EntryKind};
pub use read::{ReadOptions, TextRead};
pub use sandbox::{OpenMount, Resolved, Sandbox};
pub use stat::Stat;
pub use warden_policy::{DeriveRequest, SandboxPermissionEscalationError};
pub use write::Written;
