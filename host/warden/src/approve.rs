//! The approval flags: who answers, where answers are logged, and the session.

use warden_fs::approval::{ApprovalSession, Approver, AuditLog, DenyAll, ScriptedApprover, ScriptedRule};
use warden_fs::Access;
use warden_policy::Policy;

use crate::cli::ApprovalArgs;
use crate::exit::Failure;
use crate::prompt::TerminalApprover;

/// Answers given in advance, else a person at the terminal, else nobody.
fn approver(args: &ApprovalArgs) -> Result<(Box<dyn Approver>, Vec<ScriptedRule>), Failure> {
    let mut rules = args.approve.iter().map(|a| ScriptedRule::parse(a)).collect::<Result<Vec<_>, _>>().map_err(|m| Failure::usage(format!("--approve: {m}")))?;
    if let Some(file) = &args.answers {
        let text = std::fs::read_to_string(file).map_err(|e| Failure::usage(format!("--answers {}: {e}", file.display())))?;
        rules.extend(ScriptedRule::parse_file(&text).map_err(|m| Failure::usage(format!("--answers {}: {m}", file.display())))?);
    }
    let approver: Box<dyn Approver> = if !rules.is_empty() {
        Box::new(ScriptedApprover { rules: rules.clone() })
    } else if TerminalApprover::available() {
        Box::new(TerminalApprover)
    } else {
        Box::new(DenyAll)
    };
    Ok((approver, rules))
}

/// The approval session of `worker` under `policy`, from the flags.
pub fn session(policy: &Policy, worker: Option<&str>, args: &ApprovalArgs) -> Result<ApprovalSession, Failure> {
    let (approver, _) = approver(args)?;
    let audit = match args.audit.as_ref().or(policy.audit.as_ref()) {
        Some(path) => Some(AuditLog::open(path).map_err(|e| Failure::usage(format!("cannot open the audit log {}: {e}", path.display())))?),
        None => None,
    };
    Ok(ApprovalSession::open(policy, worker, approver, audit)?)
}

/// For runs that cannot pause for a person: asks before the run (see
/// [`ApprovalSession::ask_ahead`]), for approval mounts and `--approve` folders.
pub fn ask_before_running(session: &mut ApprovalSession, args: &ApprovalArgs, tool: &str) -> Result<(), Failure> {
    let (_, rules) = approver(args)?;
    let named: Vec<(Access, String)> = rules.iter().filter_map(|r| r.allow.map(|(access, _)| (access, r.path.to_string()))).collect();
    Ok(session.ask_ahead(Some(tool), &named)?)
}
