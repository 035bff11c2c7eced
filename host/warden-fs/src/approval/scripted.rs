//! Answers given in advance, for automation and tests:
//! `read:/data`, `write:/data/out`, `read-once:/srv/x`, `deny:/data/private`,
//! and for commands a rule asks about `exec:git push`, `exec-once:npm publish`,
//! `deny-exec:git push`.

use std::fmt;

use warden_policy::{Namespace, VPath};

use super::approver::{Answer, Approver, Scope};
use super::commands::CommandRequest;
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
        let bad = || {
            format!(
                "'{}' is not an answer; write VERB:PATH, VERB one of read, write, read-once, write-once, deny, or exec:COMMAND, exec-once:COMMAND, deny-exec:COMMAND",
                text.escape_debug()
            )
        };
        let (verb, path) = text.split_once(':').ok_or_else(bad)?;
        let allow = VERBS.iter().find(|(name, _)| *name == verb).ok_or_else(bad)?.1;
        if !path.starts_with('/') {
            return Err(format!("'{}': the path must be absolute", text.escape_debug()));
        }
        let path = VPath::parse(path, Namespace::Root).map_err(|e| format!("'{}': {e}", text.escape_debug()))?;
        Ok(ScriptedRule { allow, path })
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

/// A prepared answer about commands: every command that asks must start
/// with `prefix`. `scope: None` denies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedCommand {
    pub scope: Option<Scope>,
    pub prefix: Vec<String>,
}

const COMMAND_VERBS: [(&str, Option<Scope>); 3] = [("exec", Some(Scope::Session)), ("exec-once", Some(Scope::Once)), ("deny-exec", None)];

impl ScriptedCommand {
    fn answer(&self, request: &CommandRequest) -> Option<Answer> {
        // Lines Warden could not read are never answered in advance: a person reads them.
        if !request.unparsed.is_empty() || request.asking.is_empty() || request.uncertain {
            return None;
        }
        let starts = |command: &String| {
            let words: Vec<&str> = command.split(' ').collect();
            words.len() >= self.prefix.len() && self.prefix.iter().zip(&words).all(|(p, w)| p == w)
        };
        if !request.asking.iter().all(starts) {
            return None;
        }
        Some(match self.scope {
            Some(scope) => Answer::Allow { scope, choice: 0 },
            None => Answer::Deny,
        })
    }
}

/// One answer given in advance: about a folder, or about commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scripted {
    Path(ScriptedRule),
    Command(ScriptedCommand),
}

impl Scripted {
    /// Parses `VERB:PATH` or `VERB:COMMAND PREFIX` (VERB `exec`, `exec-once`, `deny-exec`).
    pub fn parse(text: &str) -> Result<Scripted, String> {
        let verb = text.split_once(':').map(|(verb, _)| verb);
        match COMMAND_VERBS.iter().find(|(name, _)| Some(*name) == verb) {
            None => ScriptedRule::parse(text).map(Scripted::Path),
            Some((name, scope)) => {
                let prefix: Vec<String> = text[name.len() + 1..].split_whitespace().map(str::to_owned).collect();
                if prefix.is_empty() || text.contains('\0') {
                    return Err(format!("'{}' names no command; write {name}:PROGRAM [WORDS]", text.escape_debug()));
                }
                Ok(Scripted::Command(ScriptedCommand { scope: *scope, prefix }))
            }
        }
    }

    /// Parses an answers file: one answer per line; blank lines and `#` comments are skipped.
    pub fn parse_file(text: &str) -> Result<Vec<Scripted>, String> {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(|(i, l)| Scripted::parse(l.trim()).map_err(|e| format!("line {}: {e}", i + 1)))
            .collect()
    }
}

/// Answers from rules; a request that no rule covers is denied.
#[derive(Clone, Debug, Default)]
pub struct ScriptedApprover {
    pub rules: Vec<ScriptedRule>,
    pub commands: Vec<ScriptedCommand>,
}

impl ScriptedApprover {
    pub fn of(answers: &[Scripted]) -> ScriptedApprover {
        let mut approver = ScriptedApprover::default();
        for answer in answers {
            match answer {
                Scripted::Path(rule) => approver.rules.push(rule.clone()),
                Scripted::Command(command) => approver.commands.push(command.clone()),
            }
        }
        approver
    }
}

impl Approver for ScriptedApprover {
    fn decide(&mut self, request: &Request) -> Answer {
        self.rules.iter().find_map(|r| r.answer(request)).unwrap_or(Answer::Deny)
    }

    fn decide_command(&mut self, request: &CommandRequest) -> Answer {
        self.commands.iter().find_map(|c| c.answer(request)).unwrap_or(Answer::Deny)
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
        ScriptedApprover { rules, commands: Vec::new() }.decide(r)
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
            "'grant:/d' is not an answer; write VERB:PATH, VERB one of read, write, read-once, write-once, deny, or exec:COMMAND, exec-once:COMMAND, deny-exec:COMMAND"
        );
        assert_eq!(ScriptedRule::parse("read:d").unwrap_err(), "'read:d': the path must be absolute");
        assert!(ScriptedRule::parse("read:/d/../..").is_err());
        assert!(ScriptedRule::parse("read:/d\0").is_err());
        assert_eq!(Scripted::parse_file("# x\n\nread:/a\nbogus\n").unwrap_err().split(':').next(), Some("line 4"));
        assert_eq!(Scripted::parse("exec:").unwrap_err(), "'exec:' names no command; write exec:PROGRAM [WORDS]");
    }

    #[test]
    fn rules_print_as_they_are_written() {
        for text in ["read:/a", "write:/a/b", "read-once:/c", "write-once:/d", "deny:/e"] {
            assert_eq!(ScriptedRule::parse(text).unwrap().to_string(), text);
        }
    }
}
