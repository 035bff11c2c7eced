//! Command rules: allow, ask or forbid shell commands by prefix.
//!
//! A command line (`warden exec`'s argv) is matched as given; a script
//! (`run_command`, `sh -c`) is split with bash's own grammar into its simple
//! commands, and each is judged. Wrappers (`env`, `timeout`, `sudo`, `xargs`,
//! `bash -c`, git's `-C`...) are seen through; whatever cannot be read safely
//! (substitutions, control flow, code given to an interpreter) is *unparsed*,
//! which a policy never allows silently. The strictest decision wins.
//!
//! Rules are the approval layer over the OS sandbox, not a boundary: a
//! program may run others by its own logic (`make`, `npm run`, a git alias
//! in the repository's config), and the sandbox confines what they do.

mod command;
mod decision;
mod judge;
mod rule;
mod script;
mod split;
mod unwrap;

pub use command::{quoted, Command, Token};
pub use decision::Decision;
pub use judge::{JudgedCommand, Judgement, RuleSet};
pub use rule::{Match, Rule};
pub use script::MAX_SCRIPT_BYTES;
pub use split::{Layer, Part, Split, MAX_DEPTH};
