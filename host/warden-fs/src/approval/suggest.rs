//! The policy lines that would keep a session's grants (`warden suggest`,
//! and the console's audit view).

use std::fmt::Write as _;
use std::path::Path;

use super::audit::{AuditRecord, Decision};

/// One mount per folder granted for the session outside the mounts (write
/// wins over read), and one comment per approval rule a grant lifted; a
/// grant revoked later in the session is none.
pub fn suggestion(session: &str, records: &[&AuditRecord]) -> String {
    let mut kept: Vec<&AuditRecord> = Vec::new();
    for r in records {
        match r.decision {
            Decision::Allow if r.scope.as_deref() == Some("session") => kept.push(r),
            Decision::Revoked => kept.retain(|k| !(k.operation == r.operation && k.grant == r.grant)),
            _ => {}
        }
    }
    let mut mounts: Vec<(String, &Path, bool)> = Vec::new();
    let mut lifted: Vec<String> = Vec::new();
    for r in kept {
        let (Some(grant), Some(host)) = (&r.grant, &r.grant_host) else { continue };
        let write = r.operation == "write";
        if r.reason == "dynamic" {
            match mounts.iter_mut().find(|(_, h, _)| *h == host.as_path()) {
                Some(m) => m.2 |= write,
                None => mounts.push((mount_name(host, &mounts), host, write)),
            }
        } else {
            let line = format!("#   {grant}: {} was granted; drop `{}` from its mount to keep it", r.operation, r.reason);
            if !lifted.contains(&line) {
                lifted.push(line);
            }
        }
    }
    let mut out = format!("# Grants of session {session}, made permanent. Review before adding to a policy.\n");
    if !lifted.is_empty() {
        out.push_str("# Inside mounts with approval rules:\n");
        for line in &lifted {
            let _ = writeln!(out, "{line}");
        }
    }
    if mounts.is_empty() {
        out.push_str("# No folders outside the mounts were granted for the session.\n");
        return out;
    }
    out.push_str("sandbox:\n  paths:\n");
    for (name, host, write) in &mounts {
        let mode = if *write { "rw" } else { "ro" };
        let root = serde_json::to_string(&host.display().to_string()).expect("strings serialize");
        let _ = writeln!(out, "    {name}: {{ root: {root}, mode: {mode} }}");
    }
    out
}

/// The folder's name as a mount name (letters, digits, `.`, `_`, `-`), unique among `taken`.
fn mount_name(host: &Path, taken: &[(String, &Path, bool)]) -> String {
    let raw = host.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut base: String = raw.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    if base.is_empty() || base.chars().all(|c| c == '.') {
        base = "granted".into();
    }
    let mut name = base.clone();
    let mut n = 2;
    while taken.iter().any(|(t, _, _)| *t == name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}
