//! Judging a command line or a script against a rule set.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::command::Token;
use crate::decision::Decision;
use crate::rule::Rule;
use crate::split::{Layer, Split};

/// A policy's rules, with what happens to commands no rule names and to
/// scripts that cannot be split safely.
#[derive(Clone, Debug)]
pub struct RuleSet {
    rules: Vec<Rule>,
    pub unmatched: Decision,
    pub unparsed: Decision,
    /// The rules by the program they name, in rule order.
    by_program: HashMap<String, Vec<usize>>,
}

/// Kept as its rules and settings; the index is made again when read.
#[derive(Serialize, Deserialize)]
struct Stored {
    rules: Vec<Rule>,
    unmatched: Decision,
    unparsed: Decision,
}

impl Serialize for RuleSet {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Stored { rules: self.rules.clone(), unmatched: self.unmatched, unparsed: self.unparsed }.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RuleSet {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<RuleSet, D::Error> {
        let stored = Stored::deserialize(deserializer)?;
        Ok(RuleSet::new(stored.rules, stored.unmatched, stored.unparsed))
    }
}

impl PartialEq for RuleSet {
    fn eq(&self, other: &RuleSet) -> bool {
        (&self.rules, self.unmatched, self.unparsed) == (&other.rules, other.unmatched, other.unparsed)
    }
}

impl Eq for RuleSet {}

impl Default for RuleSet {
    /// No rules: every command runs, as without a `rules:` section.
    fn default() -> RuleSet {
        RuleSet::new(Vec::new(), Decision::Allow, Decision::Allow)
    }
}

/// What the rules decided, and how.
#[derive(Clone, Debug, Serialize)]
pub struct Judgement {
    pub decision: Decision,
    /// Every command the line was split into, wrappers included.
    pub commands: Vec<JudgedCommand>,
    /// What could not be read safely; any of it makes the decision at least `unparsed`.
    pub unparsed: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct JudgedCommand {
    /// The command as judged, its wrappers taken away.
    pub command: String,
    /// The wrappers it was found in, outermost first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inside: Vec<String>,
    /// A wrapper is judged only by rules that name it; the command inside it stands for it.
    pub wrapper: bool,
    /// Indexes of the rules that apply.
    pub rules: Vec<usize>,
    /// `None` for a wrapper that no rule names.
    pub decision: Option<Decision>,
    /// Why: `rule`, `unmatched`, or `sudo` (never allowed without a person).
    pub by: &'static str,
    /// Its program is the one its name says and every word is known (`Command::is_certain`).
    pub certain: bool,
}

impl RuleSet {
    pub fn new(rules: Vec<Rule>, unmatched: Decision, unparsed: Decision) -> RuleSet {
        let mut by_program: HashMap<String, Vec<usize>> = HashMap::new();
        for (index, rule) in rules.iter().enumerate() {
            for program in rule.prefix.first().into_iter().flatten() {
                by_program.entry(program.clone()).or_default().push(index);
            }
        }
        RuleSet { rules, unmatched, unparsed, by_program }
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The rules that may match a command whose first word is `token`, in order.
    fn candidates(&self, token: Option<&Token>) -> Box<dyn Iterator<Item = usize> + '_> {
        match token {
            Some(Token::Word(program)) => Box::new(self.by_program.get(program).into_iter().flatten().copied()),
            _ => Box::new(0..self.rules.len()),
        }
    }

    /// Judges an argv as given (`warden exec`): `sh -c SCRIPT` and the other
    /// wrappers are seen through.
    pub fn judge_argv<S: AsRef<str>>(&self, argv: &[S]) -> Judgement {
        self.judge(Split::of_argv(argv))
    }

    /// Judges a shell script (`run_command`, `sh -c`).
    pub fn judge_script(&self, script: &str) -> Judgement {
        self.judge(Split::of_script(script))
    }

    fn judge(&self, split: Split) -> Judgement {
        let mut decision = if split.unparsed.is_empty() { Decision::Allow } else { self.unparsed };
        if split.parts.is_empty() && split.unparsed.is_empty() {
            decision = self.unmatched;
        }
        let mut commands = Vec::with_capacity(split.parts.len());
        for part in split.parts {
            let mut applied = Vec::new();
            let mut strictest: Option<Decision> = None;
            for index in self.candidates(part.command.tokens.first()) {
                let rule = &self.rules[index];
                let decided = rule.decides(&part.command);
                if let Some(decided) = decided {
                    applied.push(index);
                    strictest = strictest.max(Some(decided));
                }
            }
            let (mut verdict, mut by) = match (strictest, part.layer) {
                (Some(d), _) => (Some(d), "rule"),
                (None, Layer::Command) => (Some(self.unmatched), "unmatched"),
                (None, Layer::Wrapper) => (None, "unmatched"),
            };
            if part.command.elevated && verdict.is_some_and(|d| d < Decision::Ask) {
                (verdict, by) = (Some(Decision::Ask), "sudo");
            }
            decision = decision.max(verdict.unwrap_or(Decision::Allow));
            commands.push(JudgedCommand {
                certain: part.command.is_certain(),
                command: part.command.shown(),
                inside: part.command.seen_through,
                wrapper: part.layer == Layer::Wrapper,
                rules: applied,
                decision: verdict,
                by,
            });
        }
        Judgement { decision, commands, unparsed: split.unparsed }
    }
}

impl Judgement {
    /// The rules that decided: those of the strictest decision, each once.
    pub fn deciding_rules(&self) -> Vec<usize> {
        let mut rules: Vec<usize> = self
            .commands
            .iter()
            .filter(|c| c.decision == Some(self.decision) && c.by == "rule")
            .flat_map(|c| c.rules.iter().copied())
            .collect();
        rules.sort_unstable();
        rules.dedup();
        rules
    }
}
