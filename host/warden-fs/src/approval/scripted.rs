//! Answers given in advance, for automation and tests:
//! `read:/data`, `write:/data/out`, `read-once:/srv/x`, `deny:/data/private`.

use std::fmt;

use warden_policy::{Namespace, VPath};

use super::approver::{Answer, Approver, Scope};
use super::request::Request;
use crate::error::Access;

/// The verbs of a rule and what each allows; `deny` allows nothing.
const VERBS: [(&str, Option<(Access, Scope)>); 5] = [
    ("read", Some((Access::Read, Scope::Session))),
    ("write", Some((Access::Write, Scope::Session))),
    ("read-once", Some((Access::Read, Scope::Once))),
    ("write-once", Some((Access::Write, Scope::Once))),
    ("deny", None),
];

/// One prepared answer: the first rule whose folder holds the requested path decides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedRule {
    /// `None` denies.
    pub allow: Option<(Access, Scope)>,
    /// A folder, as the sandbox shows it: a mount path or, for dynamic grants, a host path.
    pub path: VPath,
}

impl ScriptedRule {
    /// Parses `VERB:PATH`, VERB one of read, write, read-once, write-once, deny.
    pub fn parse(text: &str) -> Result<ScriptedRule, String> {
        let bad = || format!("'{}' is not an answer; write VERB:PATH, VERB one of read, write, read-once, write-once, deny", text.escape_debug());
        let (verb, path) = text.split_once(':').ok_or_else(bad)?;
        let allow = VERBS.iter().find(|(name, _)| *name == verb).ok_or_else(bad)?.1;
        if !path.starts_with('/') {
            return Err(format!("'{}': the path must be absolute", text.escape_debug()));
        }
        let path = VPath::parse(path, Namespace::Root).map_err(|e| format!("'{}': {e}", text.escape_debug()))?;
        Ok(ScriptedRule { allow, path })
    }

    /// Parses an answers file: one rule per line; blank lines and `#` comments are skipped.
    pub fn parse_file(text: &str) -> Result<Vec<ScriptedRule>, String> {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(|(i, l)| ScriptedRule::parse(l.trim()).map_err(|e| format!("line {}: {e}", i + 1)))
            .collect()
    }

    fn answer(&self, request: &Request) -> Option<Answer> {
        if !request.path.starts_with(&self.path) {
            return None;
        }
        let Some((access, scope)) = self.allow else {
            return Some(Answer::Deny);
        };
        // Write covers read. A read rule says nothing about writes.
        if access < request.access {
            return None;
        }
        // The widest folder the rule covers; a rule narrower than every
        // choice cannot be honoured without granting more than it says.
        let choice = request.choices.iter().rposition(|c| c.path.starts_with(&self.path));
        Some(choice.map_or(Answer::Deny, |choice| Answer::Allow { scope, choice }))
    }
}

impl fmt::Display for ScriptedRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = VERBS.iter().find(|(_, allow)| *allow == self.allow).map_or("deny", |(name, _)| name);
        write!(f, "{verb}:{}", self.path)
    }
}

/// Answers from rules; a request that no rule covers is denied.
#[derive(Clone, Debug, Default)]
pub struct ScriptedApprover {
    pub rules: Vec<ScriptedRule>,
}

impl Approver for ScriptedApprover {
    fn decide(&mut self, request: &Request) -> Answer {
        self.rules.iter().find_map(|r| r.answer(request)).unwrap_or(Answer::Deny)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::approval::{GrantDir, Reason};

    fn request(access: Access, path: &str, choices: &[&str]) -> Request {
        let v = |p: &str| VPath::parse(p, Namespace::Root).unwrap();
        Request {
            access,
            path: v(path),
            host_path: PathBuf::from(path),
            reason: Reason::OutsideMounts,
            choices: choices.iter().map(|c| GrantDir { path: v(c), host: PathBuf::from(c) }).collect(),
            tool: None,
            worker: None,
            client: None,
        }
    }

    fn decide(rules: &[&str], r: &Request) -> Answer {
        let rules = rules.iter().map(|r| ScriptedRule::parse(r).unwrap()).collect();
        ScriptedApprover { rules }.decide(r)
    }

    #[test]
    fn a_rule_grants_the_widest_choice_it_covers() {
        let r = request(Access::Read, "/srv/data/a/x.md", &["/srv/data/a", "/srv/data", "/srv"]);
        assert_eq!(decide(&["read:/srv/data"], &r), Answer::Allow { scope: Scope::Session, choice: 1 });
        assert_eq!(decide(&["read-once:/srv/data/a"], &r), Answer::Allow { scope: Scope::Once, choice: 0 });
    }

    #[test]
    fn a_rule_narrower_than_every_choice_denies() {
        let r = request(Access::Read, "/srv/data/a/x.md", &["/srv/data/a"]);
        assert_eq!(decide(&["read:/srv/data/a/x.md"], &r), Answer::Deny);
    }

    #[test]
    fn write_covers_read_but_read_does_not_cover_write() {
        let read = request(Access::Read, "/d/x", &["/d"]);
        let write = request(Access::Write, "/d/x", &["/d"]);
        assert_eq!(decide(&["write:/d"], &read), Answer::Allow { scope: Scope::Session, choice: 0 });
        assert_eq!(decide(&["read:/d"], &write), Answer::Deny);
    }

    #[test]
    fn the_first_matching_rule_decides_and_nothing_matching_denies() {
        let r = request(Access::Read, "/d/private/x", &["/d/private", "/d"]);
        assert_eq!(decide(&["deny:/d/private", "read:/d"], &r), Answer::Deny);
        assert_eq!(decide(&["read:/elsewhere"], &r), Answer::Deny);
        assert_eq!(decide(&["read:/d/privateer"], &r), Answer::Deny);
    }

    #[test]
    fn bad_rules_are_refused_with_the_reason() {
        assert_eq!(
            ScriptedRule::parse("grant:/d").unwrap_err(),
            "'grant:/d' is not an answer; write VERB:PATH, VERB one of read, write, read-once, write-once, deny"
        );
        assert_eq!(ScriptedRule::parse("read:d").unwrap_err(), "'read:d': the path must be absolute");
        assert!(ScriptedRule::parse("read:/d/../..").is_err());
        assert!(ScriptedRule::parse("read:/d\0").is_err());
        assert_eq!(ScriptedRule::parse_file("# x\n\nread:/a\nbogus\n").unwrap_err().split(':').next(), Some("line 4"));
    }

    #[test]
    fn rules_print_as_they_are_written() {
        for text in ["read:/a", "write:/a/b", "read-once:/c", "write-once:/d", "deny:/e"] {
            assert_eq!(ScriptedRule::parse(text).unwrap().to_string(), text);
        }
    }
}
