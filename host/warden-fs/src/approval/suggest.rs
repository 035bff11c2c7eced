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
    let (approved_rules, new_rules) = command_rules(records);
    let mut out = format!("# Grants of session {session}, made permanent. Review before adding to a policy.\n");
    if !lifted.is_empty() {
        out.push_str("# Inside mounts with approval rules:\n");
        for line in &lifted {
            let _ = writeln!(out, "{line}");
        }
    }
    if mounts.is_empty() {
        out.push_str("# No folders outside the mounts were granted for the session.\n");
    }
    if !approved_rules.is_empty() {
        out.push_str("# Command rules approved for the session; `decision: allow` in the rule stops the asking:\n");
        for rule in &approved_rules {
            let _ = writeln!(out, "#   {rule}");
        }
    }
    if mounts.is_empty() && new_rules.is_empty() {
        return out;
    }
    out.push_str("sandbox:\n");
    if !mounts.is_empty() {
        out.push_str("  paths:\n");
    }
    for (name, host, write) in &mounts {
        let mode = if *write { "rw" } else { "ro" };
        let root = serde_json::to_string(&host.display().to_string()).expect("strings serialize");
        let _ = writeln!(out, "    {name}: {{ root: {root}, mode: {mode} }}");
    }
    if !new_rules.is_empty() {
        out.push_str("  shell:\n    rules:\n");
        for (prefix, approved) in &new_rules {
            let words: Vec<String> = prefix.iter().map(|w| serde_json::to_string(w).expect("strings serialize")).collect();
            let approved = serde_json::to_string(approved).expect("strings serialize");
            let _ = writeln!(out, "      - {{ prefix: [{}], decision: allow, match: [{approved}] }}", words.join(", "));
        }
    }
    out
}

/// From the commands a person allowed: the asking rules approved for the
/// session, and, for a single command no rule named, an allow rule of its
/// program and subcommand (with the command as its example).
fn command_rules(records: &[&AuditRecord]) -> (Vec<String>, Vec<(Vec<String>, String)>) {
    let mut approved = Vec::new();
    let mut new: Vec<(Vec<String>, String)> = Vec::new();
    for r in records.iter().filter(|r| r.operation == "run" && r.decision == Decision::Allow) {
        match &r.rule {
            Some(rules) if r.scope.as_deref() == Some("session") => {
                for rule in rules.split("; ") {
                    if !approved.iter().any(|a| a == rule) {
                        approved.push(rule.to_owned());
                    }
                }
            }
            Some(_) => {}
            None => {
                let split = warden_rules::Split::of_script(&r.path);
                let [part] = split.parts.as_slice() else { continue };
                if !split.unparsed.is_empty() || part.command.program_uncertain {
                    continue;
                }
                let words: Vec<&str> = part.command.tokens.iter().map_while(|t| t.word()).collect();
                let take = if words.get(1).is_some_and(|w| !w.starts_with('-')) { 2 } else { 1 };
                let prefix: Vec<String> = words.iter().take(take).map(|w| w.to_string()).collect();
                if !prefix.is_empty() && !new.iter().any(|(p, _)| *p == prefix) {
                    new.push((prefix, r.path.clone()));
                }
            }
        }
    }
    (approved, new)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn record(json: &str) -> AuditRecord {
        let base = r#""time":"t","session":"s","worker":null,"tool":"run_command","host_path":null,"grant":null,"grant_host":null"#;
        serde_json::from_str(&format!("{{{base},{json}}}")).unwrap()
    }

    #[test]
    fn approved_commands_become_rules_and_approved_rules_a_note() {
        let records = [
            record(r#""operation":"run","path":"git push origin main","reason":"rule","scope":"session","decision":"allow","rule":"git push ...""#),
            record(r#""operation":"run","path":"make test -j2","reason":"unparsed_or_unmatched","scope":"once","decision":"allow""#),
            record(r#""operation":"run","path":"make test","reason":"unparsed_or_unmatched","scope":"once","decision":"allow""#),
            record(r#""operation":"run","path":"ls -la","reason":"unparsed_or_unmatched","scope":"once","decision":"allow""#),
            // Denied, unparsed, several commands or an uncertain program: nothing to suggest.
            record(r#""operation":"run","path":"curl x","reason":"unparsed_or_unmatched","scope":null,"decision":"deny""#),
            record(r#""operation":"run","path":"echo $(id)","reason":"unparsed_or_unmatched","scope":"once","decision":"allow""#),
            record(r#""operation":"run","path":"make && make install","reason":"unparsed_or_unmatched","scope":"once","decision":"allow""#),
            record(r#""operation":"run","path":"./build.sh","reason":"unparsed_or_unmatched","scope":"once","decision":"allow""#),
        ];
        let refs: Vec<&AuditRecord> = records.iter().collect();
        assert_eq!(
            suggestion("s", &refs),
            "# Grants of session s, made permanent. Review before adding to a policy.\n\
             # No folders outside the mounts were granted for the session.\n\
             # Command rules approved for the session; `decision: allow` in the rule stops the asking:\n\
             #   git push ...\n\
             sandbox:\n  shell:\n    rules:\n\
             \x20     - { prefix: [\"make\", \"test\"], decision: allow, match: [\"make test -j2\"] }\n\
             \x20     - { prefix: [\"ls\"], decision: allow, match: [\"ls -la\"] }\n"
        );
    }
}
