//! Command rules at run time: a command line judged, then refused, run, or
//! put to a person, and every answer audited.

use warden_policy::{shown, CommandRules, Granted, Network};
use warden_rules::{quoted, Decision, Judgement};

use super::approver::{Answer, Scope};
use super::audit::AuditRecord;
use super::session::ApprovalSession;
use crate::error::Result;

/// A command line as a caller gives it.
#[derive(Clone, Copy, Debug)]
pub enum CommandLine<'a> {
    /// Matched as given (`warden exec`): `sh -c SCRIPT` in it is split.
    Argv(&'a [String]),
    /// Split with the shell's grammar (`run_command`).
    Script(&'a str),
}

impl CommandLine<'_> {
    /// The line as a person or a model reads it: a script given as
    /// `sh -c SCRIPT` (how hosts pass one) is shown as the script.
    pub fn shown(&self) -> String {
        match self {
            CommandLine::Argv([shell, c, script]) if matches!(shell.as_str(), "/bin/sh" | "sh") && c == "-c" => script.clone(),
            CommandLine::Argv(argv) => argv.iter().map(|a| quoted(a)).collect::<Vec<_>>().join(" "),
            CommandLine::Script(script) => (*script).to_owned(),
        }
    }

    fn judge(&self, rules: &CommandRules) -> Judgement {
        match self {
            CommandLine::Argv(argv) => rules.set.judge_argv(argv),
            CommandLine::Script(script) => rules.set.judge_script(script),
        }
    }
}

/// A command waiting for a person's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandRequest {
    /// The whole line, as given.
    pub command: String,
    /// The commands in it that ask, their wrappers taken away.
    pub asking: Vec<String>,
    /// The rules that ask (`git push ...`) and their justifications.
    pub rules: Vec<(String, Option<String>)>,
    /// What could not be read safely, when that is why it asks.
    pub unparsed: Vec<String>,
    /// What the line gets beyond the sandbox if allowed, from a rule's grant
    /// (`network access to github.com:443, writes to /project/build`).
    pub grant: Option<String>,
    /// The rules "allow for this session" approves; none: a session answer allows this once.
    pub session_rules: Vec<String>,
    /// A command that asks may not be what its words say (a program by
    /// path, a changed `PATH`, a word only the shell knows): no answer given
    /// in advance or for the session covers it; a person reads it each time.
    pub uncertain: bool,
    pub tool: Option<String>,
    pub worker: Option<String>,
    pub client: Option<String>,
}

impl CommandRequest {
    /// Why it asks, in a few words: the rules' justifications, or what could not be read.
    pub fn reason(&self) -> String {
        let mut reasons: Vec<String> = self
            .rules
            .iter()
            .map(|(rule, why)| match why {
                Some(why) => format!("the rule '{rule}' asks: {why}"),
                None => format!("the rule '{rule}' asks"),
            })
            .collect();
        if !self.unparsed.is_empty() {
            reasons.push(format!("Warden cannot judge all of it: {}", self.unparsed.join("; ")));
        }
        if reasons.is_empty() {
            reasons.push("the policy asks about commands no rule allows".into());
        }
        reasons.join("; ")
    }

    /// The question on one line, as the MCP form and the Python approver show it.
    pub fn question(&self) -> String {
        let grant = self.grant.as_ref().map(|g| format!(" It would get {g}.")).unwrap_or_default();
        format!(
            "{} asks to run {}, because {}.{grant} Allow it?",
            shown(self.tool.as_deref().unwrap_or("a tool")),
            shown(&self.command),
            shown(&self.reason()),
        )
    }
}

/// Judges `line` where nobody can be asked and nothing logged (a kept
/// sandbox run without its policy): what the rules allow runs; what they
/// forbid, or would ask about, is refused in the same words as elsewhere.
pub fn judge_unattended(rules: &CommandRules, line: CommandLine) -> CommandVerdict {
    let judged = line.judge(rules);
    let command = line.shown();
    match judged.decision {
        Decision::Allow => CommandVerdict::Run { granted: None },
        Decision::Forbid => CommandVerdict::Refused(forbidden(rules, &judged, &command)),
        Decision::Ask => CommandVerdict::Refused(needs_approval(&command)),
    }
}

fn needs_approval(command: &str) -> String {
    format!("Cannot run {}: the command needs the user's approval, which may be requested.", single_quoted(command))
}

/// What becomes of a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandVerdict {
    /// It runs; with what the rules that let it run grant it, if any (the
    /// folders granted for writing are granted in the session, for this command).
    Run { granted: Option<Granted> },
    /// Refused before anything ran, in the sandbox's words.
    Refused(String),
}

impl ApprovalSession {
    /// Judges `line` under `rules`; asks a person when a rule (or `unmatched`,
    /// or `unparsed`) says so. `network` is what the sandbox gives commands.
    pub fn judge_command(&mut self, rules: &CommandRules, line: CommandLine, tool: Option<&str>, network: &Network) -> Result<CommandVerdict> {
        let judged = line.judge(rules);
        let command = line.shown();
        let run = |session: &mut ApprovalSession| {
            let granted = rules.granted(&judged, network);
            if let Some(granted) = &granted {
                session.grant_writes_once(&granted.write);
            }
            CommandVerdict::Run { granted }
        };
        match judged.decision {
            Decision::Allow => Ok(run(self)),
            Decision::Forbid => {
                let text = forbidden(rules, &judged, &command);
                let record = AuditRecord::command_refused(self.info(), tool, self.client(), &command, &text);
                self.audit_append(&record)?;
                Ok(CommandVerdict::Refused(text))
            }
            Decision::Ask => {
                let request = self.command_request(rules, &judged, &command, tool);
                if !request.session_rules.is_empty() && self.approved_for_session(&request) {
                    return Ok(run(self));
                }
                let answer = self.ask_command(&request)?;
                match answer {
                    Answer::Allow { .. } => Ok(run(self)),
                    Answer::Deny => Ok(CommandVerdict::Refused(format!("Cannot run {}: the user declined it.", single_quoted(&command)))),
                    Answer::Unanswered | Answer::Deferred => Ok(CommandVerdict::Refused(needs_approval(&command))),
                }
            }
        }
    }

    fn command_request(&self, rules: &CommandRules, judged: &Judgement, command: &str, tool: Option<&str>) -> CommandRequest {
        let asking: Vec<_> = judged.commands.iter().filter(|c| c.decision == Some(Decision::Ask)).collect();
        let mut request_rules: Vec<(String, Option<String>)> = Vec::new();
        let mut session_rules = Vec::new();
        // A session answer covers the line only when every command that asks is asked by an `ask` rule.
        let mut by_rules_alone = judged.unparsed.is_empty() || rules.set.unparsed != Decision::Ask;
        for c in &asking {
            let asked_by: Vec<_> = c.rules.iter().map(|&i| &rules.set.rules()[i]).filter(|r| r.decision == Decision::Ask).collect();
            by_rules_alone &= c.certain && c.by == "rule" && !asked_by.is_empty() && c.rules.iter().all(|&i| rules.set.rules()[i].decision != Decision::Forbid);
            for rule in asked_by {
                let entry = (rule.shown(), rule.justification.clone());
                if !request_rules.contains(&entry) {
                    session_rules.push(entry.0.clone());
                    request_rules.push(entry);
                }
            }
        }
        if !by_rules_alone {
            session_rules.clear();
        }
        let unparsed = if rules.set.unparsed == Decision::Ask { judged.unparsed.clone() } else { Vec::new() };
        let grant = rules.granted(judged, &Network::Off).map(|g| granted_shown(&g));
        CommandRequest {
            command: command.to_owned(),
            asking: asking.iter().map(|c| c.command.clone()).collect(),
            rules: request_rules,
            unparsed,
            grant,
            session_rules,
            uncertain: asking.iter().any(|c| !c.certain),
            tool: tool.map(str::to_owned),
            worker: self.info().worker.clone(),
            client: self.client().map(str::to_owned),
        }
    }

    fn ask_command(&mut self, request: &CommandRequest) -> Result<Answer> {
        let (answer, via, log) = match self.answered_ahead(&request.command) {
            Some((answer, log, via)) => (answer, via, log),
            None => {
                let (answer, via) = self.approver_decides_command(request);
                (answer, via, answer != Answer::Deferred)
            }
        };
        let answer = match answer {
            Answer::Allow { scope, .. } => Answer::Allow { scope, choice: 0 },
            other => other,
        };
        if log {
            let record = AuditRecord { via: via.map(str::to_owned), ..AuditRecord::command(&self.info().id, request, answer) };
            self.audit_append(&record)?;
        }
        if let Answer::Allow { scope: Scope::Session, .. } = answer {
            self.approve_for_session(&request.session_rules);
        }
        Ok(answer)
    }
}

/// The refusal of a forbidden line: which rule forbids it and why, or which
/// setting; and, when only rules allow commands, the commands they allow.
fn forbidden(rules: &CommandRules, judged: &Judgement, command: &str) -> String {
    let mut why: Vec<String> = Vec::new();
    for c in judged.commands.iter().filter(|c| c.decision == Some(Decision::Forbid)) {
        let reason = match c.by {
            "rule" => c
                .rules
                .iter()
                .map(|&i| &rules.set.rules()[i])
                .filter(|r| r.decision == Decision::Forbid)
                .map(|r| match &r.justification {
                    Some(j) => format!("the policy forbids '{}': {j}", r.shown()),
                    None => format!("the policy forbids '{}'", r.shown()),
                })
                .collect::<Vec<_>>()
                .join("; "),
            _ => format!("the policy forbids commands no rule allows ({})", c.command),
        };
        if !why.contains(&reason) {
            why.push(reason);
        }
    }
    if why.is_empty() && !judged.unparsed.is_empty() {
        why.push(format!("the policy forbids commands Warden cannot judge ({})", judged.unparsed.join("; ")));
    }
    let mut text = format!("Cannot run {}: {}.", single_quoted(command), why.join("; "));
    if rules.set.unmatched != Decision::Allow {
        let allowed: Vec<String> = rules.set.rules().iter().filter(|r| r.decision == Decision::Allow).map(|r| r.shown()).collect();
        let allowed = if allowed.is_empty() { "none".to_owned() } else { allowed.join(", ") };
        text.push_str(&format!("\nCommands allowed: {allowed}"));
    }
    text
}

/// A grant as a person reads it: `network access to github.com:443, writes to /project/build`.
pub fn granted_shown(granted: &Granted) -> String {
    let mut parts = Vec::new();
    if granted.network != Network::Off {
        parts.push(format!("network access to {}", granted.network.allowed_hosts()));
    }
    if !granted.write.is_empty() {
        parts.push(format!("writes to {}", granted.write.join(", ")));
    }
    parts.join(", ")
}

fn single_quoted(command: &str) -> String {
    format!("'{}'", shown(command))
}
