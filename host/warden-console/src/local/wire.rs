//! Where a policy's console listens, and what is said there: one JSON line
//! per message, each way.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::hub::{Decision, NewQuestion};

/// The longest line either side reads; a longer one ends the connection.
pub const MAX_LINE: usize = 64 * 1024;

/// The socket of the console for `policy_file`, in Warden's private folder:
/// named by the file's device and inode, so that every spelling of its path
/// (relative, through a symlink) finds the same console.
pub fn socket_of(policy_file: &Path) -> Result<PathBuf, String> {
    let meta = std::fs::metadata(policy_file).map_err(|e| format!("{}: {e}", policy_file.display()))?;
    let folder = warden_policy::private_folder()?;
    Ok(folder.join(format!("console-{:x}-{:x}.sock", meta.dev(), meta.ino())))
}

/// What a command says to the console.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum FromCommand {
    /// Said first: the command that runs, listed among the live calls while
    /// the connection lasts, and its policy file (canonical), which must be
    /// the console's own (not another that took the inode of a deleted one).
    Call { tool: String, detail: String, policy: PathBuf },
    /// A question for the person, numbered by the command; one at a time.
    Ask { id: u64, question: NewQuestion },
    /// Question `id` was answered elsewhere (at the terminal): off the page.
    Withdraw { id: u64 },
}

/// What the console says to a command.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ToCommand {
    /// The answer to question `id`; `None`: the console will give none.
    Answer { id: u64, decision: Option<Decision> },
    /// The person cancelled the command.
    Cancel,
}
