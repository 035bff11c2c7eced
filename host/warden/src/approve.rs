//! The approval flags: who answers, where answers are logged, and the session.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use warden_console::{ConsoleApprover, LocalConsole};
use warden_fs::approval::{ApprovalSession, Approver, AuditLog, DenyAll, Scripted, ScriptedApprover};
use warden_fs::Access;
use warden_policy::{AskVia, Policy};

use crate::cli::ApprovalArgs;
use crate::exit::Failure;
use crate::prompt::TerminalApprover;

/// A command as the policy's console lists it among the live calls.
pub struct Listed {
    pub tool: String,
    /// What it does, in a few words (a path, a command line).
    pub detail: String,
}

/// An approval session, with the folders that answers given in advance name.
pub struct Approvals {
    pub session: ApprovalSession,
    named: Vec<(Access, String)>,
    /// The command's listing at the policy's console, while it runs.
    console: Option<LocalConsole>,
}

impl Approvals {
    /// The approval session of `worker` under `policy`, from the flags: answers
    /// given in advance, else a person at the terminal and at the policy's
    /// console (as `approvals.via` or --ask-via allow), else nobody. The
    /// command is `listed` at the console while the session lasts.
    pub fn open(policy: &Policy, worker: Option<&str>, args: &ApprovalArgs, listed: &Listed) -> Result<Approvals, Failure> {
        let rules = answers(args)?;
        let named = rules
            .iter()
            .filter_map(|r| match r {
                Scripted::Path(r) => r.allow.map(|(access, _)| (access, r.path.to_string())),
                Scripted::Command(_) => None,
            })
            .collect();
        let via = args.ask_via.unwrap_or(policy.ask_via);
        let console = if via.console() { LocalConsole::connect(&policy.file, &listed.tool, &listed.detail) } else { None };
        let terminal = via.client() && TerminalApprover::available();
        let approver: Box<dyn Approver> = match (&console, terminal) {
            _ if !rules.is_empty() => Box::new(ScriptedApprover::of(&rules)),
            (console, true) => Box::new(TerminalApprover { console: console.clone(), via: None }),
            (Some(console), false) => Box::new(ConsoleApprover { console: console.clone(), via: None }),
            (None, false) => {
                if via == AskVia::Console && needs_a_person(policy) {
                    eprintln!(
                        "warden: approvals go to Warden's console alone, and none runs for {}: every request is denied (start one with `warden console --policy {}`)",
                        policy.file.display(),
                        policy.file.display()
                    );
                }
                Box::new(DenyAll)
            }
        };
        let audit = match args.audit.as_ref().or(policy.audit.as_ref()) {
            Some(path) => Some(AuditLog::open(path).map_err(|e| Failure::usage(format!("cannot open the audit log {}: {e}", path.display())))?),
            None => None,
        };
        Ok(Approvals { session: ApprovalSession::open(policy, worker, approver, audit)?, named, console })
    }

    /// Set when the person cancels the command at the policy's console;
    /// `None` when no console lists it (nothing can cancel it there).
    pub fn cancelled(&self) -> Option<Arc<AtomicBool>> {
        self.console.as_ref().map(LocalConsole::cancelled)
    }

    /// A failure (exit 130) when the person cancelled the command at the console.
    pub fn not_cancelled(&self) -> Result<(), Failure> {
        match self.cancelled().is_some_and(|flag| flag.load(std::sync::atomic::Ordering::SeqCst)) {
            true => Err(Failure { status: Failure::CANCELLED, message: "warden: cancelled at Warden's console".into() }),
            false => Ok(()),
        }
    }

    /// For runs that cannot pause for a person: asks before the run (see
    /// [`ApprovalSession::ask_ahead`]), for approval mounts and `--approve` folders.
    pub fn ask_before_running(&mut self, tool: &str) -> Result<(), Failure> {
        Ok(self.session.ask_ahead(Some(tool), &self.named)?)
    }
}

/// Whether anything under `policy` may ask a person.
fn needs_a_person(policy: &Policy) -> bool {
    policy.dynamic.is_some() || policy.mounts.iter().any(|m| m.rules.read_approval || m.rules.write_approval)
}

/// The answers of --approve and --answers, in that order.
pub fn answers(args: &ApprovalArgs) -> Result<Vec<Scripted>, Failure> {
    let mut rules = args.approve.iter().map(|a| Scripted::parse(a)).collect::<Result<Vec<_>, _>>().map_err(|m| Failure::usage(format!("--approve: {m}")))?;
    if let Some(file) = &args.answers {
        let text = std::fs::read_to_string(file).map_err(|e| Failure::usage(format!("--answers {}: {e}", file.display())))?;
        rules.extend(Scripted::parse_file(&text).map_err(|m| Failure::usage(format!("--answers {}: {m}", file.display())))?);
    }
    Ok(rules)
}
