//! What a person is asked.

use std::fmt;
use std::path::PathBuf;

use warden_policy::{shown, VPath};

use crate::error::Access;

/// A folder that may be granted: where the sandbox shows it, and the host folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantDir {
    pub path: VPath,
    pub host: PathBuf,
}

/// Why an access needs a person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The mount at `mount` has `read_approval` or `write_approval`.
    MountRule { mount: VPath },
    /// The path is outside every mount and the policy has `dynamic`.
    OutsideMounts,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::MountRule { mount } => write!(f, "the policy asks for approval of this access to {mount}"),
            Reason::OutsideMounts => f.write_str("the path is outside every mount"),
        }
    }
}

/// One access waiting for an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub access: Access,
    /// The file or folder the access was for.
    pub path: VPath,
    /// Its host path, for the person and the audit log; never shown to a model.
    pub host_path: PathBuf,
    pub reason: Reason,
    /// What may be granted, narrowest first: the folder of `path`, then its
    /// ancestors up to the mount or the policy's ceiling. Never empty.
    pub choices: Vec<GrantDir>,
    /// The tool or command that asked, when known.
    pub tool: Option<String>,
    pub worker: Option<String>,
    /// The program the request came through, e.g. an MCP client's name.
    pub client: Option<String>,
}

impl Request {
    /// The question as a person reads it, on one line: what asks, for which
    /// access, where, and why. The MCP form and the Python approver show it.
    pub fn question(&self) -> String {
        format!(
            "{} asks to {} {} (host path {}), because {}. Allow it?",
            shown(self.tool.as_deref().unwrap_or("a tool")),
            self.access.as_str(),
            shown(self.path.as_str()),
            shown(&self.host_path.to_string_lossy()),
            self.reason
        )
    }
}
