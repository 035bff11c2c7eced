//! `shell.rules`: command rules, checked when the policy loads (every
//! example is run against its rule) and narrowed per worker.

use serde_saphyr::{Location, Spanned};
use warden_rules::{Decision, Rule, RuleSet, Split};

use crate::derive::SandboxPermissionEscalationError;
use crate::document::{DecisionSpec, Example, PrefixWord, RuleEntry, RuleSpec};
use crate::error::PolicyError;
use crate::model::Policy;
use crate::network::Network;
use crate::vpath::VPath;

/// The command rules of the program or of a worker.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommandRules {
    pub set: RuleSet,
    /// Per rule, in order: what a command it lets run gets besides the sandbox's.
    pub grants: Vec<Option<CommandGrant>>,
    /// Per rule: where it is written, 1-based line and column.
    pub places: Vec<Option<(u64, u64)>>,
    /// Per rule: the worker that added it; `None` for the program's.
    pub owners: Vec<Option<String>>,
    /// How many `match` and `not_match` examples were checked.
    pub examples: usize,
}

/// What a rule gives the command it lets run, for that command alone.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct CommandGrant {
    /// Added to the sandbox's network (its own proxy).
    pub network: Option<Network>,
    /// Virtual folders made writable, each inside an `rw` mount.
    pub write: Vec<String>,
}

/// What a line gets from the grants of the rules that let it run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    /// The sandbox's network with the grants' added; the sandbox's own when none grants any.
    pub network: Network,
    /// The folders granted for writing.
    pub write: Vec<String>,
}

impl From<DecisionSpec> for Decision {
    fn from(spec: DecisionSpec) -> Decision {
        match spec {
            DecisionSpec::Allow => Decision::Allow,
            DecisionSpec::Ask => Decision::Ask,
            DecisionSpec::Forbid => Decision::Forbid,
        }
    }
}

impl CommandRules {
    /// What a line judged so gets beyond `sandbox` (the network commands get):
    /// the grants of the rules that let it run, when every command of the line
    /// is granted (`cd` and the like aside); `None` when no grant applies.
    pub fn granted(&self, judged: &warden_rules::Judgement, sandbox: &Network) -> Option<Granted> {
        if !judged.unparsed.is_empty() || judged.decision == Decision::Forbid {
            return None;
        }
        let mut granted = Granted { network: sandbox.clone(), write: Vec::new() };
        let mut any = false;
        for command in judged.commands.iter().filter(|c| !c.wrapper) {
            // A program that may not be the one its name says, or a word only the shell knows: no grant.
            if !command.certain {
                return None;
            }
            let grants: Vec<&CommandGrant> = command.rules.iter().filter_map(|&i| self.grants[i].as_ref()).collect();
            if grants.is_empty() {
                if !is_inert(&command.command) {
                    return None;
                }
                continue;
            }
            for grant in grants {
                if let Some(network) = &grant.network {
                    granted.network = granted.network.widened_by(network);
                }
                for folder in &grant.write {
                    if !granted.write.contains(folder) {
                        granted.write.push(folder.clone());
                    }
                }
            }
            any = true;
        }
        any.then_some(granted)
    }
}

/// Builtins that run nothing and reach nothing: they may share a granted
/// line (the caller has checked that the command is certain: no `./echo`).
fn is_inert(command: &str) -> bool {
    let program = command.split(' ').next().unwrap_or("");
    matches!(program, "cd" | "pwd" | "true" | "false" | ":" | "echo")
}

/// The rules a `shell:` section (or a worker's) writes, with its place for errors.
pub(crate) struct Written<'a> {
    pub rules: Option<&'a [Spanned<RuleEntry>]>,
    pub unmatched: Option<&'a Spanned<DecisionSpec>>,
    pub unparsed: Option<&'a Spanned<DecisionSpec>>,
    /// `sandbox.shell` or `workers.NAME.shell`.
    pub field: String,
}

impl Written<'_> {
    fn any(&self) -> bool {
        self.rules.is_some() || self.unmatched.is_some() || self.unparsed.is_some()
    }
}

/// The program's rules; `None` when the policy writes none.
pub(crate) fn program_rules(policy: &Policy, written: &Written) -> Result<Option<CommandRules>, PolicyError> {
    if !written.any() {
        return Ok(None);
    }
    let empty = CommandRules { set: RuleSet::default(), grants: Vec::new(), places: Vec::new(), owners: Vec::new(), examples: 0 };
    let defaults = (Decision::Allow, Decision::Ask);
    combine(policy, &empty, defaults, written, None, None).map(Some)
}

/// A worker's rules: the program's, with its own on top, never looser.
/// `ceiling`: the most network a grant of the worker's may give.
pub(crate) fn worker_rules(
    policy: &Policy,
    program: Option<&CommandRules>,
    written: &Written,
    worker: &str,
    ceiling: &Network,
) -> Result<Option<CommandRules>, PolicyError> {
    if !written.any() {
        return Ok(program.cloned());
    }
    let empty = CommandRules { set: RuleSet::default(), grants: Vec::new(), places: Vec::new(), owners: Vec::new(), examples: 0 };
    let base = program.unwrap_or(&empty);
    let floor = match program {
        Some(p) => (p.set.unmatched, p.set.unparsed),
        None => (Decision::Allow, Decision::Ask),
    };
    combine(policy, base, floor, written, Some(worker), Some(ceiling)).map(Some)
}

fn combine(
    policy: &Policy,
    base: &CommandRules,
    floor: (Decision, Decision),
    written: &Written,
    worker: Option<&str>,
    ceiling: Option<&Network>,
) -> Result<CommandRules, PolicyError> {
    let fail = |field: String, place: &Location, message: String| PolicyError::new(&policy.file, message).field(field).at(place);
    let mut rules = base.set.rules().to_vec();
    let mut out = CommandRules { set: RuleSet::default(), ..base.clone() };
    for (i, entry) in written.rules.unwrap_or_default().iter().enumerate() {
        let field = format!("{}.rules[{i}]", written.field);
        let (rule, grant, examples) = rule(policy, entry, ceiling).map_err(|(sub, m)| fail(format!("{field}{sub}"), &entry.referenced, m))?;
        out.examples += examples;
        rules.push(rule);
        out.grants.push(grant);
        out.places.push((entry.referenced.line() > 0).then(|| (entry.referenced.line(), entry.referenced.column())));
        out.owners.push(worker.map(str::to_owned));
    }
    let setting = |given: Option<&Spanned<DecisionSpec>>, floor: Decision, name: &str| match given {
        None => Ok(floor),
        Some(given) if worker.is_some() && Decision::from(given.value) < floor => Err(fail(
            format!("{}.{name}", written.field),
            &given.referenced,
            format!("'{}' is looser than the program's '{floor}'; a worker's rules may only be stricter", Decision::from(given.value)),
        )),
        Some(given) => Ok(given.value.into()),
    };
    let unmatched = setting(written.unmatched, floor.0, "unmatched")?;
    let unparsed = setting(written.unparsed, floor.1, "unparsed")?;
    out.set = RuleSet::new(rules, unmatched, unparsed);
    Ok(out)
}

type RuleError = (String, String);

/// A folder a grant makes writable: a virtual path inside a mount that is `rw` in the program.
fn writable_folder(policy: &Policy, folder: &str) -> Result<String, String> {
    let path = policy.with_namespace(|ns| VPath::parse(folder, ns)).map_err(|e| format!("'{}': {e}", folder.escape_debug()))?;
    match policy.mounts.iter().filter(|m| path.starts_with(&m.path)).max_by_key(|m| m.path.as_str().len()) {
        Some(m) if m.rules.writable => Ok(path.to_string()),
        Some(m) => Err(format!("{path} lies in {}, which is read-only: a grant gives no more than the policy could", m.path)),
        None => Err(format!("{path} lies in no mount: a grant gives no more than the policy could")),
    }
}

/// One rule, its grant and how many examples it passed.
fn rule(policy: &Policy, entry: &Spanned<RuleEntry>, ceiling: Option<&Network>) -> Result<(Rule, Option<CommandGrant>, usize), RuleError> {
    let spec = match &entry.value {
        RuleEntry::Claude(text) => return Rule::from_claude(text).map(|r| (r, None, 0)).map_err(|m| (String::new(), m)),
        RuleEntry::Rule(spec) => spec,
    };
    let prefix = prefix(spec)?;
    if spec.justification.as_deref().is_some_and(|j| j.trim().is_empty()) {
        return Err((".justification".into(), "an empty justification explains nothing; leave it out or say why".into()));
    }
    let rule = Rule { prefix, exact: false, decision: spec.decision.into(), justification: spec.justification.clone() };
    let network = match spec.grant.as_ref().and_then(|g| g.network.as_ref()) {
        None => None,
        Some(_) if rule.decision == Decision::Forbid => return Err((".grant".into(), "a forbid rule runs nothing, so it grants nothing".into())),
        Some(network) => {
            let granted = crate::validate::network(&network.value).map_err(|(m, _)| (".grant.network".to_owned(), m))?;
            if let Some(ceiling) = ceiling {
                ceiling.narrows_to(&granted).map_err(|what| {
                    let escalation = SandboxPermissionEscalationError {
                        request: what,
                        parent_boundary: format!("the program's network and rules give only: {}", ceiling.allowed_hosts()),
                        alternative: "Grant pairs within those, or leave the grant to the program's rule.".into(),
                    };
                    (".grant.network".to_owned(), escalation.to_string())
                })?;
            }
            Some(granted)
        }
    };
    let write = spec.grant.as_ref().map(|g| g.write.as_slice()).unwrap_or_default();
    if !write.is_empty() && rule.decision == Decision::Forbid {
        return Err((".grant".into(), "a forbid rule runs nothing, so it grants nothing".into()));
    }
    let write = write.iter().enumerate().map(|(j, folder)| writable_folder(policy, folder).map_err(|m| (format!(".grant.write[{j}]"), m))).collect::<Result<Vec<_>, _>>()?;
    let grant = (network.is_some() || !write.is_empty()).then_some(CommandGrant { network, write });
    for (j, example) in spec.examples.iter().enumerate() {
        if !applies(&rule, example) {
            return Err((format!(".match[{j}]"), format!("the example {} is not matched by this rule ({})", shown(example), rule.shown())));
        }
    }
    for (j, example) in spec.not_match.iter().enumerate() {
        if applies(&rule, example) {
            return Err((format!(".not_match[{j}]"), format!("the example {} is matched by this rule ({})", shown(example), rule.shown())));
        }
    }
    Ok((rule, grant, spec.examples.len() + spec.not_match.len()))
}

fn prefix(spec: &RuleSpec) -> Result<Vec<Vec<String>>, RuleError> {
    if spec.prefix.is_empty() {
        return Err((".prefix".into(), "an empty prefix would match every command; name at least the program".into()));
    }
    let mut words = Vec::new();
    for (at, word) in spec.prefix.iter().enumerate() {
        let alternatives = match word {
            PrefixWord::One(w) => vec![w.clone()],
            PrefixWord::Any(list) => list.clone(),
        };
        if alternatives.is_empty() || alternatives.iter().any(|w| w.is_empty() || w.contains('\0')) {
            return Err((format!(".prefix[{at}]"), "every position needs at least one word, and no word may be empty or hold NUL".into()));
        }
        if at == 0 && alternatives.iter().any(|w| w.contains('/')) {
            return Err((".prefix[0]".into(), "name the program, not a path: /usr/bin/git is judged as git".into()));
        }
        words.push(alternatives);
    }
    Ok(words)
}

/// Whether `rule` applies to some command of `example`.
fn applies(rule: &Rule, example: &Example) -> bool {
    rule.applies_to(&match example {
        Example::Script(script) => Split::of_script(script),
        Example::Argv(argv) => Split::of_argv(argv),
    })
}

fn shown(example: &Example) -> String {
    match example {
        Example::Script(script) => format!("'{}'", script.escape_debug()),
        Example::Argv(argv) => format!("{argv:?}"),
    }
}
