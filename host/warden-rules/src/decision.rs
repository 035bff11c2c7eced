//! What a rule decides, ordered so that the strictest is the greatest.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Runs.
    Allow,
    /// Runs once a person approves.
    Ask,
    /// Refused before anything runs.
    Forbid,
}

impl Decision {
    pub const NAMES: &'static str = "allow, ask, forbid";

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Forbid => "forbid",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
