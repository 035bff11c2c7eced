//! The Landlock backend (issue 29, work in progress on this branch): what
//! the kernel offers, and the rules a plan becomes. Not yet wired into
//! `sandbox.rs`; see /work/notes/issue29-research.md for the plan.

mod abi;
mod layout;
mod ruleset;

pub use abi::{abi, Abi};
pub use layout::{Access, Entry, EntryKind, Grant, Layout, MountRules};
pub use ruleset::{enter, prepare, Prepared, Tcp, LEAST_ABI};
