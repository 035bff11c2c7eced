//! The audit log as the page shows it: newest first, filtered, with the
//! policy lines that would keep what each session was granted.

use std::path::Path;

use serde::Deserialize;
use warden_fs::approval::{suggestion, AuditRecord, Decision};

/// The most lines one view shows.
const SHOWN: usize = 500;
/// The most lines kept in memory: the newest.
const KEPT: usize = 200_000;

/// The page's filters: each, when given, must be contained in the field
/// (the decision must be equal).
#[derive(Debug, Default, Deserialize)]
pub struct Filter {
    pub client: Option<String>,
    pub tool: Option<String>,
    pub decision: Option<String>,
    pub path: Option<String>,
}

impl Filter {
    fn keeps(&self, record: &AuditRecord) -> bool {
        let has = |field: Option<&str>, wanted: &Option<String>| match wanted.as_deref().filter(|w| !w.is_empty()) {
            None => true,
            Some(wanted) => field.is_some_and(|f| f.contains(wanted)),
        };
        let decision = serde_json::to_value(record.decision).ok().and_then(|v| v.as_str().map(str::to_owned));
        has(record.client.as_deref(), &self.client)
            && has(record.tool.as_deref(), &self.tool)
            && self.decision.as_deref().filter(|d| !d.is_empty()).is_none_or(|d| decision.as_deref() == Some(d))
            && has(Some(&record.path), &self.path)
    }
}

/// The log's lines read so far: the log is only ever appended to, so a view
/// reads only what was added since the last (the page asks after every change).
#[derive(Default)]
pub struct Cache {
    read: u64,
    records: Vec<AuditRecord>,
    /// Lines that are not records (written by hand, or by another program): skipped.
    unreadable: usize,
}

impl Cache {
    /// The records of the log at `path`, the new lines parsed.
    fn refresh(&mut self, path: &Path) -> std::io::Result<&[AuditRecord]> {
        use std::io::{Read, Seek};
        let mut file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                *self = Cache::default();
                return Ok(&self.records);
            }
            Err(e) => return Err(e),
        };
        let len = file.metadata()?.len();
        if len < self.read {
            // Not the log read before (replaced, or cut): from the start.
            *self = Cache::default();
        }
        file.seek(std::io::SeekFrom::Start(self.read))?;
        let mut added = Vec::new();
        file.take(len - self.read).read_to_end(&mut added)?;
        // Only whole lines: a line being appended is read next time.
        let whole = added.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        for line in added[..whole].split(|&b| b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)) {
            match serde_json::from_slice(line) {
                Ok(record) => self.records.push(record),
                Err(_) => self.unreadable += 1,
            }
        }
        if self.records.len() > KEPT {
            self.records.drain(..self.records.len() - KEPT);
        }
        self.read += whole as u64;
        Ok(&self.records)
    }
}

/// The view of the log at `path` under `filter`, as JSON: `records` (newest
/// first, at most [`SHOWN`]), `total` (the lines that passed), and
/// `suggestions` (per session that was granted something for the session).
pub fn view(path: Option<&Path>, cache: &mut Cache, filter: &Filter) -> serde_json::Value {
    let Some(path) = path else {
        return serde_json::json!({ "records": [], "total": 0, "suggestions": [], "note": "this policy keeps no audit log (audit: in the policy)" });
    };
    let unreadable = match cache.refresh(path) {
        Ok(_) => cache.unreadable,
        Err(e) => return serde_json::json!({ "records": [], "total": 0, "suggestions": [], "note": format!("cannot read {}: {e}", path.display()) }),
    };
    let records = &cache.records;
    let kept: Vec<&AuditRecord> = records.iter().rev().filter(|r| filter.keeps(r)).collect();
    let mut sessions: Vec<&str> = Vec::new();
    for record in &kept {
        if record.decision == Decision::Allow && record.scope.as_deref() == Some("session") && !sessions.contains(&record.session.as_str()) {
            sessions.push(&record.session);
        }
    }
    let suggestions: Vec<serde_json::Value> = sessions
        .iter()
        .map(|session| {
            let mine: Vec<&AuditRecord> = records.iter().filter(|r| r.session == *session).collect();
            serde_json::json!({ "session": session, "policy": suggestion(session, &mine) })
        })
        .collect();
    let mut view = serde_json::json!({ "records": kept.iter().take(SHOWN).collect::<Vec<_>>(), "total": kept.len(), "suggestions": suggestions });
    if unreadable > 0 {
        view["note"] = serde_json::json!(format!("{unreadable} lines of {} are not audit records: skipped", path.display()));
    }
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_is_no_record_is_skipped_and_the_rest_still_shown() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("audit.jsonl");
        let line = |path: &str| {
            format!(
                "{{\"time\":\"t\",\"session\":\"s\",\"worker\":null,\"tool\":\"write_file\",\"operation\":\"write\",\"path\":\"{path}\",\
                 \"reason\":\"write_approval\",\"grant\":null,\"grant_host\":null,\"scope\":null,\"decision\":\"deny\"}}\n"
            )
        };
        std::fs::write(&log, format!("{}not json\n{}", line("/p/a.md"), line("/p/b.md"))).unwrap();
        let mut cache = Cache::default();
        let shown = view(Some(&log), &mut cache, &Filter::default());
        let paths: Vec<&str> = shown["records"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
        assert_eq!(paths, ["/p/b.md", "/p/a.md"]);
        assert_eq!(shown["note"], format!("1 lines of {} are not audit records: skipped", log.display()));
        // Lines added later are read, past the bad one.
        std::fs::write(&log, format!("{}not json\n{}{}", line("/p/a.md"), line("/p/b.md"), line("/p/c.md"))).unwrap();
        assert_eq!(view(Some(&log), &mut cache, &Filter::default())["total"], 3);
    }
}
