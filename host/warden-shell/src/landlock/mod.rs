//! The Landlock backend: what the kernel offers, the rules a plan becomes,
//! and a command confined by them, for hosts where bubblewrap cannot start.

mod abi;
mod command;
mod layout;
mod netns;
mod reaper;
mod remove_tree;
mod ruleset;
mod scratch;

pub use abi::{abi, errata_fixed, Abi, ERRATUM_DISCONNECTED_DIRECTORIES};
pub use layout::{Access, Entry, EntryKind, Grant, Layout, MountRules};
pub use command::{command, layout, Confinement, Step};
pub use reaper::{announce, Reaper};
pub use scratch::Scratch;
pub use ruleset::{confine, enter, prepare, Prepared, Tcp, LEAST_ABI};
