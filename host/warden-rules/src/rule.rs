//! A rule: a command prefix, and what to do with a command that starts so.

use serde::{Deserialize, Serialize};

use crate::command::{Command, Token};
use crate::decision::Decision;
use crate::split::Split;

/// One rule, checked against every command of a script.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// Each position lists the words it accepts: `[git, [status, diff]]`.
    pub prefix: Vec<Vec<String>>,
    /// The command must be the prefix and nothing more (`Bash(npm test)`).
    pub exact: bool,
    pub decision: Decision,
    pub justification: Option<String>,
}

/// How surely a command starts with a rule's prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    No,
    /// A word known only when the command runs could make it match.
    Possibly,
    Surely,
}

impl Rule {
    /// Reads Claude Code's `Bash(PREFIX:*)` (a prefix) or `Bash(COMMAND)` (that
    /// command exactly), as an `allow` rule.
    pub fn from_claude(text: &str) -> Result<Rule, String> {
        let inner = text
            .strip_prefix("Bash(")
            .and_then(|t| t.strip_suffix(')'))
            .ok_or_else(|| format!("'{text}' is not a rule: write Bash(PREFIX:*) or Bash(COMMAND), or a mapping with `prefix`"))?;
        let (command, exact) = match inner.strip_suffix(":*") {
            Some(prefix) => (prefix, false),
            None => (inner, true),
        };
        if command.contains(['*', '?', '$', '`', '"', '\'', '\\', '(', ')', ';', '&', '|', '<', '>']) {
            return Err(format!("'{text}': only plain words and a trailing :* are understood"));
        }
        let prefix: Vec<Vec<String>> = command.split_whitespace().map(|w| vec![w.to_owned()]).collect();
        if prefix.is_empty() {
            return Err(format!("'{text}' names no command"));
        }
        Ok(Rule { prefix, exact, decision: Decision::Allow, justification: None })
    }

    /// The prefix as written in a question or a message: `git push`, `git [status|diff]`.
    pub fn shown(&self) -> String {
        let words: Vec<String> = self
            .prefix
            .iter()
            .map(|alternatives| match alternatives.as_slice() {
                [one] => one.clone(),
                many => format!("[{}]", many.join("|")),
            })
            .collect();
        words.join(" ") + if self.exact { "" } else { " ..." }
    }

    /// What this rule decides for `command`, if it applies: a command that
    /// only possibly starts with the prefix (a word known only when it runs)
    /// is never allowed by the rule, and one it may forbid goes to a person,
    /// who sees the command as written.
    pub fn decides(&self, command: &Command) -> Option<Decision> {
        match (self.matches(command), self.decision) {
            // By name alone: a program that may not be the one its name says is never allowed by it.
            (Match::Surely, Decision::Allow) if command.program_uncertain => None,
            (Match::Surely, decision) => Some(decision),
            (Match::Possibly, Decision::Ask | Decision::Forbid) => Some(Decision::Ask),
            (Match::Possibly | Match::No, _) => None,
        }
    }

    /// Whether this rule applies to any command of `split`.
    pub fn applies_to(&self, split: &Split) -> bool {
        split.parts.iter().any(|part| self.decides(&part.command).is_some())
    }

    /// Whether `command`'s words start with this rule's prefix.
    pub fn matches(&self, command: &Command) -> Match {
        let mut sure = true;
        for (at, accepted) in self.prefix.iter().enumerate() {
            match command.tokens.get(at) {
                None => return Match::No,
                Some(Token::Unknown(_)) => return Match::Possibly,
                Some(Token::Word(word)) if accepted.iter().any(|a| a == word) => {}
                Some(Token::Word(_)) => return Match::No,
            }
        }
        if self.exact && command.tokens.len() != self.prefix.len() {
            let unknown_after = command.tokens[self.prefix.len().min(command.tokens.len())..].iter().all(|t| matches!(t, Token::Unknown(_)));
            if !(unknown_after && command.tokens.len() > self.prefix.len()) {
                return Match::No;
            }
            sure = false;
        }
        if sure { Match::Surely } else { Match::Possibly }
    }
}
