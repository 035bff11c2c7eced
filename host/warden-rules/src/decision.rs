//! What a rule decides, ordered so that the strictest is the greatest.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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

    /// `allow`, `ask` or `forbid`; Codex's `prompt` and `forbidden` are read too.
    pub fn parse(text: &str) -> Option<Decision> {
        match text {
            "allow" => Some(Decision::Allow),
            "ask" | "prompt" => Some(Decision::Ask),
            "forbid" | "forbidden" | "deny" => Some(Decision::Forbid),
            _ => None,
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
