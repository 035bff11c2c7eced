//! `warden mcp`: the policy's sandbox served to an agent over MCP.

use warden_fs::approval::{ApprovalSession, Approver, AuditLog, DenyAll, ScriptedApprover};
use warden_mcp::{Offer, SessionFactory, WardenMcp};

use crate::cli::McpArgs;
use crate::exit::Failure;

pub fn run(args: McpArgs) -> Result<(), Failure> {
    let policy = warden_policy::load(&args.policy)?;
    let rules = crate::approve::answers(&args.approvals)?;
    // An unusable worker is an unusable policy before anything is served.
    warden_fs::Sandbox::open_for(&policy, args.worker.as_deref())?;
    let audit = args.approvals.audit.clone().or_else(|| policy.audit.clone());
    let file_tools = policy.mcp.file_tools;
    let worker = args.worker.clone();
    // Each client connection gets its own session: its own grants.
    let new_session: SessionFactory = Box::new(move || {
        let approver: Box<dyn Approver> =
            if rules.is_empty() { Box::new(DenyAll) } else { Box::new(ScriptedApprover { rules: rules.clone() }) };
        let audit = audit
            .as_deref()
            .map(AuditLog::open)
            .transpose()
            .map_err(|e| format!("cannot open the audit log: {e}"))?;
        ApprovalSession::open(&policy, worker.as_deref(), approver, audit).map_err(|e| e.to_string())
    });
    let server = WardenMcp::new(Offer { file_tools, new_session }).map_err(Failure::usage)?;
    warden_mcp::log_to_stderr();
    warden_mcp::run_stdio(server).map_err(|e| Failure { status: Failure::FAILED, message: format!("warden: {e}") })
}
