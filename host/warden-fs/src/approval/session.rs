//! A session: grants, the approver, the audit log, and the ask-and-retry loop.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use warden_policy::{Dynamic, Policy, VPath};

use super::approver::{Answer, Approver, Scope};
use super::audit::{AuditLog, AuditRecord};
use super::effective::{effective, Grant};
use super::request::{GrantDir, Reason, Request};
use crate::error::{Access, Denial, FsError, Op, Result};
use crate::sandbox::{OpenMount, Sandbox};

/// How many requests one operation may raise before it is left as refused.
const MAX_REQUESTS_PER_OPERATION: usize = 16;

/// How many distinct refusals of one run go to the audit log one by one.
pub const MAX_REFUSALS_LOGGED: usize = 32;

/// Who the session is, for the audit log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    pub id: String,
    pub worker: Option<String>,
}

impl SessionInfo {
    /// A fresh id: the start time in milliseconds and the process id.
    pub fn new(worker: Option<&str>) -> SessionInfo {
        let millis = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or_default();
        SessionInfo { id: format!("{millis}-{}", std::process::id()), worker: worker.map(str::to_owned) }
    }
}

/// An operation's outcome that may end in a sandbox refusal.
pub trait Refusable {
    fn denial(&self) -> Option<&Denial>;
    /// The same outcome with its refusal replaced by `denial`.
    fn with_denial(self, denial: Denial) -> Self;
    /// Every refusal on the way to it, for the audit log (a tool may go on
    /// after some); by default the one it ended with.
    fn refusals(&self) -> Vec<&Denial> {
        self.denial().into_iter().collect()
    }
}

impl<T> Refusable for Result<T> {
    fn denial(&self) -> Option<&Denial> {
        match self {
            Err(FsError::Denied(d)) => Some(d),
            _ => None,
        }
    }

    fn with_denial(self, denial: Denial) -> Self {
        Err(FsError::Denied(denial))
    }
}

/// A sandbox whose refusals a person may lift, one request at a time.
pub struct ApprovalSession {
    base: Sandbox,
    dynamic: Option<Dynamic>,
    info: SessionInfo,
    approver: Box<dyn Approver>,
    audit: Option<AuditLog>,
    session_grants: Vec<Grant>,
    /// How many of `session_grants` a fork was given (the rest are its own).
    inherited: usize,
    once_grants: Vec<Grant>,
    client: Option<String>,
    /// Command rules (as shown, `git push ...`) a person approved for the session.
    command_grants: Vec<String>,
    /// Answers about command lines given before the line is judged (a
    /// 2026-07-28 MCP call answered in its retry): the line, the answer,
    /// whether to log it when used, and where it was given.
    command_answers: Vec<(String, Answer, bool, Option<&'static str>)>,
}

impl ApprovalSession {
    pub fn new(base: Sandbox, dynamic: Option<Dynamic>, approver: Box<dyn Approver>, audit: Option<AuditLog>, info: SessionInfo) -> Self {
        ApprovalSession { base, dynamic, info, approver, audit, session_grants: Vec::new(), inherited: 0, once_grants: Vec::new(), client: None, command_grants: Vec::new(), command_answers: Vec::new() }
    }

    /// The session of `worker` (or the program) under `policy`, with its dynamic ceiling.
    pub fn open(policy: &Policy, worker: Option<&str>, approver: Box<dyn Approver>, audit: Option<AuditLog>) -> Result<Self> {
        let base = Sandbox::open_for(policy, worker)?;
        let dynamic = policy.dynamic_for(worker).cloned();
        Ok(ApprovalSession::new(base, dynamic, approver, audit, SessionInfo::new(worker)))
    }

    pub fn info(&self) -> &SessionInfo {
        &self.info
    }

    /// Who answers from now on; the one before is returned.
    pub fn set_approver(&mut self, approver: Box<dyn Approver>) -> Box<dyn Approver> {
        std::mem::replace(&mut self.approver, approver)
    }

    /// The program requests come through, for the audit log (e.g. an MCP client's name).
    pub fn set_client(&mut self, client: Option<String>) {
        self.client = client;
    }

    /// A session for one operation beside others: the same sandbox, ceiling,
    /// audit log and session grants, and `approver` to ask. What the person
    /// grants it for the session comes back with [`ApprovalSession::adopt`].
    pub fn fork(&self, approver: Box<dyn Approver>) -> Result<ApprovalSession> {
        let audit = match &self.audit {
            Some(log) => Some(log.try_clone().map_err(audit_failed)?),
            None => None,
        };
        let mut fork = ApprovalSession::new(self.base.try_clone()?, self.dynamic.clone(), approver, audit, self.info.clone());
        fork.session_grants = self.session_grants.clone();
        fork.inherited = fork.session_grants.len();
        fork.client = self.client.clone();
        fork.command_grants = self.command_grants.clone();
        Ok(fork)
    }

    /// Takes the session grants `fork` was given since it was made (one it
    /// inherited and this session revoked meanwhile stays revoked).
    pub fn adopt(&mut self, fork: ApprovalSession) {
        for rule in fork.command_grants {
            if !self.command_grants.contains(&rule) {
                self.command_grants.push(rule);
            }
        }
        for grant in fork.session_grants.into_iter().skip(fork.inherited) {
            if !self.session_grants.contains(&grant) {
                self.session_grants.push(grant);
            }
        }
    }

    pub(super) fn client(&self) -> Option<&str> {
        self.client.as_deref()
    }

    pub(super) fn audit_append(&mut self, record: &AuditRecord) -> Result<()> {
        match &mut self.audit {
            Some(audit) => audit.append(record).map_err(audit_failed),
            None => Ok(()),
        }
    }

    /// The approver's answer to `request`, and where it was given.
    pub(super) fn approver_decides_command(&mut self, request: &super::CommandRequest) -> (Answer, Option<&'static str>) {
        let answer = self.approver.decide_command(request);
        (answer, self.approver.answered_via())
    }

    /// Whether every rule `request` would approve for the session already is.
    pub(super) fn approved_for_session(&self, request: &super::CommandRequest) -> bool {
        request.session_rules.iter().all(|r| self.command_grants.contains(r))
    }

    /// Write access to each of `folders` (virtual, inside the base's writable
    /// mounts) until the operation ends; a folder outside them grants nothing.
    pub(super) fn grant_writes_once(&mut self, folders: &[String]) {
        for folder in folders {
            let Ok(path) = self.base.parse(folder) else { continue };
            let inside = self.base.mounts().iter().enumerate().filter(|(_, m)| path.starts_with(&m.path));
            let Some((i, mount)) = inside.max_by_key(|(_, m)| m.path.as_str().len()) else { continue };
            let rel = path.strip_prefix(&mount.path).unwrap_or_default();
            let grant = Grant { access: Access::Write, dir: GrantDir { host: host_of(mount, rel), path }, mount: Some(i) };
            self.once_grants.push(grant);
        }
    }

    pub(super) fn approve_for_session(&mut self, rules: &[String]) {
        for rule in rules {
            if !self.command_grants.contains(rule) {
                self.command_grants.push(rule.clone());
            }
        }
    }

    /// Gives `answer` to the command line `command` when it is judged next in
    /// this session (logged then when `log`, as given `via`).
    pub fn answer_command_ahead(&mut self, command: &str, answer: Answer, log: bool, via: Option<&'static str>) {
        self.command_answers.push((command.to_owned(), answer, log, via));
    }

    /// The answer given ahead for `command`, taken.
    pub(super) fn answered_ahead(&mut self, command: &str) -> Option<(Answer, bool, Option<&'static str>)> {
        let at = self.command_answers.iter().position(|(line, ..)| line == command)?;
        let (_, answer, log, via) = self.command_answers.remove(at);
        Some((answer, log, via))
    }

    /// The command rules approved for the session so far.
    pub fn command_grants(&self) -> &[String] {
        &self.command_grants
    }

    /// Whether an operation under this session can ever ask a person or
    /// write the audit log. When it cannot, running the operation directly on
    /// [`ApprovalSession::sandbox`] does exactly what [`ApprovalSession::attempt`] would.
    pub fn may_ask_or_log(&self) -> bool {
        self.audit.is_some() || self.dynamic.is_some() || self.base.mounts().iter().any(|m| m.rules.read_approval || m.rules.write_approval)
    }

    /// The sandbox in effect now: approval rules applied, grants added.
    pub fn sandbox(&self) -> Result<Sandbox> {
        let grants: Vec<&Grant> = self.session_grants.iter().chain(&self.once_grants).collect();
        effective(&self.base, &grants)
    }

    /// Ends the session's grant of `access` to the folder `path`, logged
    /// with where it was revoked (`via`); false when there is none. The next
    /// access there asks again. The grant ends even when the log cannot be
    /// written; that failure is the error.
    pub fn revoke(&mut self, access: Access, path: &str, via: Option<&str>) -> Result<bool> {
        let (ended, kept) = std::mem::take(&mut self.session_grants).into_iter().partition(|g| g.access == access && g.dir.path.as_str() == path);
        let ended: Vec<Grant> = ended;
        self.session_grants = kept;
        if let (Some(audit), Some(grant)) = (&mut self.audit, ended.first()) {
            let record = AuditRecord::revoked(&self.info, self.client.as_deref(), access, &grant.dir, via);
            audit.append(&record).map_err(audit_failed)?;
        }
        Ok(!ended.is_empty())
    }

    /// The folders granted for the session so far, with their access.
    pub fn session_grants(&self) -> Vec<(Access, GrantDir)> {
        self.session_grants.iter().map(|g| (g.access, g.dir.clone())).collect()
    }

    /// Runs `op` on the sandbox in effect; while it is refused in a way a
    /// person may lift, asks and runs it again. Grants given `once` end with it.
    /// The outer error is the session's own failure (e.g. the audit log cannot
    /// be written, in which case nothing is granted).
    pub fn attempt<O: Refusable>(&mut self, tool: Option<&str>, mut op: impl FnMut(&Sandbox) -> O) -> Result<O> {
        let result = self.attempt_until_settled(tool, &mut op);
        self.once_grants.clear();
        result
    }

    fn attempt_until_settled<O: Refusable>(&mut self, tool: Option<&str>, op: &mut impl FnMut(&Sandbox) -> O) -> Result<O> {
        let mut asked: Vec<(Access, VPath)> = Vec::new();
        loop {
            let sandbox = self.sandbox()?;
            let outcome = op(&sandbox);
            // Each run's own: a run again after a grant makes its attempts again.
            self.log_refusals(tool, &outcome)?;
            let Some(request) = outcome.denial().and_then(|d| self.request_for(d, tool)) else {
                return Ok(outcome);
            };
            let key = (request.access, request.path.clone());
            if asked.contains(&key) || asked.len() == MAX_REQUESTS_PER_OPERATION {
                return Ok(outcome);
            }
            asked.push(key);
            let (access, path) = (request.access, request.path.to_string());
            let allowed = match access {
                Access::Read => sandbox.readable_list(),
                Access::Write => sandbox.writable_list(),
            };
            match self.ask(request)? {
                Answer::Allow { .. } => {}
                Answer::Deny => return Ok(outcome.with_denial(Denial::Declined { access, path, allowed })),
                Answer::Unanswered | Answer::Deferred => return Ok(outcome.with_denial(Denial::NeedsApproval { access, path, allowed })),
            }
        }
    }

    /// For runs that cannot pause for a person (native commands, component
    /// commands): asks up front for each mount whose rules need approval, then
    /// for each of `paths` (e.g. folders named in answers given in advance).
    pub fn ask_ahead(&mut self, tool: Option<&str>, paths: &[(Access, String)]) -> Result<()> {
        let mut wanted: Vec<(Access, String)> = Vec::new();
        for mount in self.base.mounts() {
            if mount.rules.readable && mount.rules.read_approval {
                wanted.push((Access::Read, mount.path.to_string()));
            }
            if mount.rules.writable && mount.rules.write_approval {
                wanted.push((Access::Write, mount.path.to_string()));
            }
        }
        wanted.extend(paths.iter().cloned());
        for (access, path) in wanted {
            if let Some(request) = self.request_ahead(tool, access, &path) {
                self.ask(request)?;
            }
        }
        Ok(())
    }

    /// Logs the refusals of `outcome` that nobody could be asked to lift:
    /// each once, at most [`MAX_REFUSALS_LOGGED`] and a line saying how many
    /// more, in one synced write (a tool that is refused a million times in
    /// its time limit must not hold its call slot writing them).
    fn log_refusals(&mut self, tool: Option<&str>, outcome: &impl Refusable) -> Result<()> {
        if self.audit.is_none() {
            return Ok(());
        }
        // By the text the agent saw: linear, however many times a tool was refused.
        let mut seen = std::collections::HashSet::new();
        let mut unique: Vec<&Denial> = Vec::new();
        for denial in outcome.refusals() {
            if seen.insert(denial.to_string()) && self.request_for(denial, tool).is_none() {
                unique.push(denial);
            }
        }
        let client = self.client.as_deref();
        let mut records: Vec<AuditRecord> =
            unique.iter().take(MAX_REFUSALS_LOGGED).filter_map(|d| AuditRecord::refused(&self.info, tool, client, d)).collect();
        if unique.len() > MAX_REFUSALS_LOGGED {
            records.push(AuditRecord::more_refusals(&self.info, tool, client, unique.len() - MAX_REFUSALS_LOGGED));
        }
        let log = self.audit.as_mut().expect("checked above");
        log.append_all(&records).map_err(audit_failed)
    }

    /// Whether a grant already allows `access` to `path`.
    fn covers(&self, access: Access, path: &VPath) -> bool {
        self.session_grants.iter().chain(&self.once_grants).any(|g| g.access >= access && path.starts_with(&g.dir.path))
    }

    /// Puts `request` to the approver, logs the answer, then applies it.
    pub fn ask(&mut self, request: Request) -> Result<Answer> {
        let answer = self.approver.decide(&request);
        let log = answer != Answer::Deferred;
        let via = self.approver.answered_via();
        self.settle_via(request, answer, log, via)
    }

    /// Applies `answer` to `request` as if the approver had given it, and
    /// logs it when `log` (an answer given in an earlier round of the same
    /// call was logged then). Returns the answer applied: a choice that is not
    /// one of the request's counts as a denial.
    pub fn settle(&mut self, request: Request, answer: Answer, log: bool) -> Result<Answer> {
        self.settle_via(request, answer, log, None)
    }

    /// [`ApprovalSession::settle`], with where the person answered (`via`
    /// in the audit log).
    pub fn settle_via(&mut self, request: Request, answer: Answer, log: bool, via: Option<&str>) -> Result<Answer> {
        let answer = match answer {
            Answer::Allow { choice, .. } if choice >= request.choices.len() => Answer::Deny,
            answer => answer,
        };
        if let (Some(audit), true) = (&mut self.audit, log) {
            let record = AuditRecord { via: via.map(str::to_owned), ..AuditRecord::new(&self.info.id, &request, answer) };
            audit.append(&record).map_err(audit_failed)?;
        }
        if let Answer::Allow { scope, choice } = answer {
            let mount = match &request.reason {
                Reason::MountRule { mount } => self.base.mounts().iter().position(|m| &m.path == mount),
                Reason::OutsideMounts => None,
            };
            let grant = Grant { access: request.access, dir: request.choices[choice].clone(), mount };
            match scope {
                Scope::Once => self.once_grants.push(grant),
                Scope::Session => self.session_grants.push(grant),
            }
        }
        Ok(answer)
    }

    /// The request an `access` to `path` would raise now, unless nobody may
    /// be asked about it or a grant covers it already.
    pub fn request_ahead(&self, tool: Option<&str>, access: Access, path: &str) -> Option<Request> {
        let denial = match access {
            Access::Read => Denial::OutsideSandbox { path: path.to_owned(), readable: String::new() },
            Access::Write => Denial::ReadOnly { path: path.to_owned(), writable: String::new() },
        };
        self.request_for(&denial, tool).filter(|request| !self.covers(request.access, &request.path))
    }

    /// The request that would lift `denial`, if a person may lift it.
    pub fn request_for(&self, denial: &Denial, tool: Option<&str>) -> Option<Request> {
        let (access, shown) = match denial {
            Denial::OutsideSandbox { path, .. } => (Access::Read, path),
            Denial::ReadOnly { path, .. } => (Access::Write, path),
            _ => return None,
        };
        let path = self.base.parse(shown).ok()?;
        let mount = self.base.mount_for(&path, access).or_else(|| self.base.mount_for(&path, Access::Read));
        let mut request = match mount {
            Some(mount) => {
                let needs = match access {
                    Access::Read => mount.rules.read_approval,
                    Access::Write => mount.rules.writable && mount.rules.write_approval,
                };
                needs.then(|| mount_request(access, path, mount))?
            }
            None => self.dynamic_request(access, path)?,
        };
        request.tool = tool.map(str::to_owned);
        request.worker = self.info.worker.clone();
        request.client = self.client.clone();
        Some(request)
    }

    /// A request for a folder outside every mount, within the policy's ceiling.
    fn dynamic_request(&self, access: Access, path: VPath) -> Option<Request> {
        let dynamic = self.dynamic.as_ref()?;
        let host_path = PathBuf::from(path.as_str());
        let folder = existing_folder_of(&host_path)?;
        let canonical = folder.canonicalize().ok()?;
        let candidates = if canonical == folder { dynamic.grantable(&canonical) } else { dynamic.grantable(&canonical).into_iter().take(1).collect() };
        // Narrowest first: once a folder overlaps a mount, every wider one does too.
        let mut choices = Vec::new();
        for host in candidates {
            let shown = if canonical == folder { &host } else { &folder };
            let Ok(virtual_path) = VPath::parse(&shown.to_string_lossy(), warden_policy::Namespace::Root) else { break };
            if self.overlaps_a_mount(&host) || self.shadows_a_mount(&virtual_path) {
                break;
            }
            choices.push(GrantDir { path: virtual_path, host });
        }
        (!choices.is_empty()).then_some(Request { access, path, host_path, reason: Reason::OutsideMounts, choices, tool: None, worker: None, client: None })
    }

    /// A host folder holding or inside a mount would reach its files past its rules.
    fn overlaps_a_mount(&self, host: &Path) -> bool {
        self.base.mounts().iter().any(|m| host.starts_with(&m.host_root) || m.host_root.starts_with(host))
    }

    /// A virtual folder that is, holds or lies in a mount, or is named like one.
    fn shadows_a_mount(&self, path: &VPath) -> bool {
        let first = path.components().next().unwrap_or_default();
        self.base.mount_names().iter().any(|n| n == first)
            || self.base.mounts().iter().any(|m| path.starts_with(&m.path) || m.path.starts_with(path))
    }
}

/// A failure to write the audit log: nothing is granted past it.
fn audit_failed(source: std::io::Error) -> FsError {
    FsError::Io { op: Op::Write, path: "the audit log".into(), source }
}

/// A request inside a mount whose rules ask for approval: the folder of
/// `path`, widenable up to the mount.
fn mount_request(access: Access, path: VPath, mount: &OpenMount) -> Request {
    let rel = path.strip_prefix(&mount.path).unwrap_or_default();
    let is_folder = rel.is_empty() || mount.dir().metadata(rel).is_ok_and(|m| m.is_dir());
    let folder = if is_folder { path.clone() } else { path.parent() };
    let mut choices = Vec::new();
    let mut current = folder;
    loop {
        let rel = current.strip_prefix(&mount.path).unwrap_or_default();
        choices.push(GrantDir { path: current.clone(), host: host_of(mount, rel) });
        if current == mount.path {
            break;
        }
        current = current.parent();
    }
    Request {
        access,
        host_path: host_of(mount, rel),
        path,
        reason: Reason::MountRule { mount: mount.path.clone() },
        choices,
        tool: None,
        worker: None,
        client: None,
    }
}

/// The host path of `rel` in `mount`, without a trailing `/` for the mount itself.
fn host_of(mount: &OpenMount, rel: &str) -> PathBuf {
    if rel.is_empty() { mount.host_root.clone() } else { mount.host_root.join(rel) }
}

/// The path itself when it is a folder, else its nearest existing ancestor.
fn existing_folder_of(path: &Path) -> Option<PathBuf> {
    if path.is_dir() {
        return Some(path.to_owned());
    }
    path.ancestors().skip(1).find(|a| a.is_dir()).map(Path::to_owned)
}
