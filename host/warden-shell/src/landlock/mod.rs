//! The Landlock backend (issue 29, work in progress on this branch): what
//! the kernel offers, and the rules a plan becomes. Not yet wired into
//! `sandbox.rs`; see /work/notes/issue29-research.md for the plan.

mod abi;
mod layout;

pub use abi::{abi, Abi};
pub use layout::{Access, Entry, EntryKind, Grant, Layout};
