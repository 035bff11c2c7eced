//! The audit log: one JSON line per answered request, and one per refusal
//! nobody was asked about, appended and synced.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::approver::{Answer, Scope};
use super::commands::CommandRequest;
use super::request::{Reason, Request};
use super::session::SessionInfo;
use crate::Denial;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Deny,
    /// No person could be asked.
    Unanswered,
    /// Refused by the sandbox's rules; nobody was asked.
    Refused,
    /// A grant for the session was ended by a person.
    Revoked,
}

/// One line of the log. Host paths are fine here: it is for the person, not the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// RFC 3339, UTC, milliseconds.
    pub time: String,
    pub session: String,
    pub worker: Option<String>,
    pub tool: Option<String>,
    /// The program the request came through (an MCP client's name), when not Warden's own CLI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// `read` or `write`; for a refusal also `access` (either) or `connect`.
    pub operation: String,
    /// The virtual path that was accessed (`host:port` for a connection), and its host path where known.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<PathBuf>,
    /// `read_approval`, `write_approval` or `dynamic`; for a refusal, its kind
    /// (`outside_sandbox`, `read_only`, `network`, ...).
    pub reason: String,
    /// The folder granted (virtual and host), when allowed.
    pub grant: Option<String>,
    pub grant_host: Option<PathBuf>,
    pub scope: Option<String>,
    pub decision: Decision,
    /// For a refusal: the text the tool or agent was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// Where the person answered: `client` (the MCP client's form),
    /// `terminal` (the CLI's) or `console` (Warden's own page); absent where
    /// there is one way only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// For a command: the rules that asked or forbade it (`git push ...`), `; `-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// For a command: why the rules ask or forbid, or what could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
}

impl AuditRecord {
    pub fn new(session: &str, request: &Request, answer: Answer) -> AuditRecord {
        let (decision, scope, granted) = match answer {
            Answer::Allow { scope, choice } => (Decision::Allow, Some(scope), request.choices.get(choice)),
            Answer::Deny => (Decision::Deny, None, None),
            Answer::Unanswered | Answer::Deferred => (Decision::Unanswered, None, None),
        };
        let reason = match (&request.reason, request.access) {
            (Reason::OutsideMounts, _) => "dynamic",
            (Reason::MountRule { .. }, crate::Access::Read) => "read_approval",
            (Reason::MountRule { .. }, crate::Access::Write) => "write_approval",
        };
        AuditRecord {
            time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            session: session.to_owned(),
            worker: request.worker.clone(),
            tool: request.tool.clone(),
            client: request.client.clone(),
            operation: request.access.as_str().to_owned(),
            path: request.path.to_string(),
            host_path: Some(request.host_path.clone()),
            reason: reason.to_owned(),
            grant: granted.map(|g| g.path.to_string()),
            grant_host: granted.map(|g| g.host.clone()),
            scope: scope.map(|s: Scope| s.as_str().to_owned()),
            decision,
            refusal: None,
            via: None,
            rule: None,
            justification: None,
        }
    }

    /// A person's answer about a command (`operation: run`). `grant` is the
    /// network the command gets from a rule; `scope: session` approves the rules asked.
    pub fn command(session: &str, request: &CommandRequest, answer: Answer) -> AuditRecord {
        let (decision, scope) = match answer {
            Answer::Allow { scope, .. } => (Decision::Allow, Some(scope)),
            Answer::Deny => (Decision::Deny, None),
            Answer::Unanswered | Answer::Deferred => (Decision::Unanswered, None),
        };
        let rules: Vec<&str> = request.rules.iter().map(|(r, _)| r.as_str()).collect();
        AuditRecord {
            time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            session: session.to_owned(),
            worker: request.worker.clone(),
            tool: request.tool.clone(),
            client: request.client.clone(),
            operation: "run".to_owned(),
            path: request.command.clone(),
            host_path: None,
            reason: if rules.is_empty() { "unparsed_or_unmatched" } else { "rule" }.to_owned(),
            grant: if decision == Decision::Allow { request.grant.clone() } else { None },
            grant_host: None,
            scope: scope.map(|s| s.as_str().to_owned()),
            decision,
            refusal: None,
            via: None,
            rule: (!rules.is_empty()).then(|| rules.join("; ")),
            justification: Some(request.reason()),
        }
    }

    /// A command refused by a `forbid` (rule or setting); nobody was asked.
    pub fn command_refused(info: &SessionInfo, tool: Option<&str>, client: Option<&str>, command: &str, text: &str) -> AuditRecord {
        AuditRecord::refusal(info, tool, client, ("run", command.to_owned(), "forbid"), text.to_owned())
    }

    /// A grant for the session, ended by a person (at `via`).
    pub fn revoked(info: &SessionInfo, client: Option<&str>, access: crate::Access, grant: &super::GrantDir, via: Option<&str>) -> AuditRecord {
        AuditRecord {
            time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            session: info.id.clone(),
            worker: info.worker.clone(),
            tool: None,
            client: client.map(str::to_owned),
            operation: access.as_str().to_owned(),
            path: grant.path.to_string(),
            host_path: Some(grant.host.clone()),
            reason: "revoked".to_owned(),
            grant: Some(grant.path.to_string()),
            grant_host: Some(grant.host.clone()),
            scope: Some(Scope::Session.as_str().to_owned()),
            decision: Decision::Revoked,
            refusal: None,
            via: via.map(str::to_owned),
            rule: None,
            justification: None,
        }
    }

    /// Stands for `count` refusals of one run past those logged one by one.
    pub fn more_refusals(info: &SessionInfo, tool: Option<&str>, client: Option<&str>, count: usize) -> AuditRecord {
        let text = format!("{count} more refusals in this run, not logged one by one");
        AuditRecord::refusal(info, tool, client, ("access", String::new(), "more_refusals"), text)
    }

    /// A refusal by the sandbox's rules that nobody was asked about; `None`
    /// for the refusals that come from asking (needs approval, declined),
    /// whose answers are logged as they are given.
    pub fn refused(info: &SessionInfo, tool: Option<&str>, client: Option<&str>, denial: &Denial) -> Option<AuditRecord> {
        let what = match denial {
            Denial::OutsideSandbox { path, .. } => ("access", path.clone(), "outside_sandbox"),
            Denial::ReadOnly { path, .. } => ("write", path.clone(), "read_only"),
            Denial::WriteOnly { path, .. } => ("read", path.clone(), "write_only"),
            Denial::InvalidPath { path, .. } => ("access", path.clone(), "invalid_path"),
            Denial::SuffixNotAllowed { path, .. } => ("access", path.clone(), "suffix_not_allowed"),
            Denial::FileTooLarge { path, .. } => ("read", path.clone(), "file_too_large"),
            Denial::ContentTooLarge { path, .. } => ("write", path.clone(), "content_too_large"),
            Denial::Network(refusal) => ("connect", refusal.target.clone(), "network"),
            Denial::NeedsApproval { .. } | Denial::Declined { .. } => return None,
        };
        Some(AuditRecord::refusal(info, tool, client, what, denial.to_string()))
    }

    /// A `refused` line: (operation, path, reason) and the text the agent saw.
    fn refusal(info: &SessionInfo, tool: Option<&str>, client: Option<&str>, what: (&str, String, &str), text: String) -> AuditRecord {
        let (operation, path, reason) = what;
        AuditRecord {
            time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            session: info.id.clone(),
            worker: info.worker.clone(),
            tool: tool.map(str::to_owned),
            client: client.map(str::to_owned),
            operation: operation.to_owned(),
            path,
            host_path: None,
            reason: reason.to_owned(),
            grant: None,
            grant_host: None,
            scope: None,
            decision: Decision::Refused,
            refusal: Some(text),
            via: None,
            rule: None,
            justification: None,
        }
    }
}

/// An append-only log file. Each line goes out in one `write` on an
/// `O_APPEND` file and is synced before the answer takes effect, so a crash
/// never loses a line that was written, nor leaves half of one from this writer.
#[derive(Debug)]
pub struct AuditLog {
    file: File,
    path: PathBuf,
}

impl AuditLog {
    /// Opens (creating it and its folder when missing) the log at `path`.
    pub fn open(path: &Path) -> io::Result<AuditLog> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new().append(true).create(true).open(path)?;
        Ok(AuditLog { file, path: path.to_owned() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The same log for another writer: one open file, appended to a whole line at a time.
    pub fn try_clone(&self) -> io::Result<AuditLog> {
        Ok(AuditLog { file: self.file.try_clone()?, path: self.path.clone() })
    }

    pub fn append(&mut self, record: &AuditRecord) -> io::Result<()> {
        self.append_all(std::slice::from_ref(record))
    }

    /// Appends `records` in one write, synced once; nothing for none.
    pub fn append_all(&mut self, records: &[AuditRecord]) -> io::Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let mut lines = Vec::new();
        for record in records {
            serde_json::to_writer(&mut lines, record).map_err(io::Error::other)?;
            lines.push(b'\n');
        }
        self.file.write_all(&lines)?;
        self.file.sync_data()
    }

    /// Reads every record of a log; a line that is not a record is an error naming its number.
    pub fn read(path: &Path) -> io::Result<Vec<AuditRecord>> {
        let text = std::fs::read_to_string(path)?;
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("line {}: {e}", i + 1)))
            })
            .collect()
    }
}
