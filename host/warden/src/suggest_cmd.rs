//! `warden suggest`: the policy snippet that would keep a session's grants.

use std::path::Path;

use warden_fs::approval::{suggestion, AuditLog, AuditRecord, Decision};

use crate::exit::Failure;

pub fn run(audit: &Path, session: Option<&str>) -> Result<(), Failure> {
    let records = AuditLog::read(audit).map_err(|e| Failure::usage(format!("cannot read the audit log {}: {e}", audit.display())))?;
    // By default the last session a person was asked in: refusals alone grant nothing.
    let asked = records.iter().rev().find(|r| r.decision != Decision::Refused);
    let Some(session) = session.map(str::to_owned).or_else(|| asked.map(|r| r.session.clone())) else {
        return Err(Failure::usage(format!("the audit log {} has no requests", audit.display())));
    };
    let mine: Vec<&AuditRecord> = records.iter().filter(|r| r.session == session).collect();
    if mine.is_empty() {
        return Err(Failure::usage(format!("the audit log {} has no session '{session}'", audit.display())));
    }
    print!("{}", suggestion(&session, &mine));
    Ok(())
}

