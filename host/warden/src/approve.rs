//! The approval flags: who answers, where answers are logged, and the session.

use warden_fs::approval::{ApprovalSession, Approver, AuditLog, DenyAll, ScriptedApprover, ScriptedRule};
use warden_fs::Access;
use warden_policy::Policy;

use crate::cli::ApprovalArgs;
use crate::exit::Failure;
use crate::prompt::TerminalApprover;

/// An approval session, with the folders that answers given in advance name.
pub struct Approvals {
    pub session: ApprovalSession,
    named: Vec<(Access, String)>,
}

impl Approvals {
    /// The approval session of `worker` under `policy`, from the flags: answers
    /// given in advance, else a person at the terminal, else nobody.
    pub fn open(policy: &Policy, worker: Option<&str>, args: &ApprovalArgs) -> Result<Approvals, Failure> {
        let rules = answers(args)?;
        let named = rules.iter().filter_map(|r| r.allow.map(|(access, _)| (access, r.path.to_string()))).collect();
        let approver: Box<dyn Approver> = if !rules.is_empty() {
            Box::new(ScriptedApprover { rules })
        } else if TerminalApprover::available() {
            Box::new(TerminalApprover)
        } else {
            Box::new(DenyAll)
        };
        let audit = match args.audit.as_ref().or(policy.audit.as_ref()) {
            Some(path) => Some(AuditLog::open(path).map_err(|e| Failure::usage(format!("cannot open the audit log {}: {e}", path.display())))?),
            None => None,
        };
        Ok(Approvals { session: ApprovalSession::open(policy, worker, approver, audit)?, named })
    }

    /// For runs that cannot pause for a person: asks before the run (see
    /// [`ApprovalSession::ask_ahead`]), for approval mounts and `--approve` folders.
    pub fn ask_before_running(&mut self, tool: &str) -> Result<(), Failure> {
        Ok(self.session.ask_ahead(Some(tool), &self.named)?)
    }
}

/// The answers of --approve and --answers, in that order.
pub fn answers(args: &ApprovalArgs) -> Result<Vec<ScriptedRule>, Failure> {
    let mut rules = args.approve.iter().map(|a| ScriptedRule::parse(a)).collect::<Result<Vec<_>, _>>().map_err(|m| Failure::usage(format!("--approve: {m}")))?;
    if let Some(file) = &args.answers {
        let text = std::fs::read_to_string(file).map_err(|e| Failure::usage(format!("--answers {}: {e}", file.display())))?;
        rules.extend(ScriptedRule::parse_file(&text).map_err(|m| Failure::usage(format!("--answers {}: {m}", file.display())))?);
    }
    Ok(rules)
}
