//! `Sandbox`: a policy's capability filesystem, its components and its OS
//! sandbox, for Python. Each operation runs with the GIL released; one that
//! the sandbox refuses goes through the approval session, which may ask.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::UNIX_EPOCH;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use warden_fs::approval::{ApprovalSession, Approver, AuditLog, DenyAll, SessionInfo};
use warden_fs::{DeriveRequest, FsError, ReadOptions};
use warden_policy::Policy;

use crate::approver::PyApprover;
use crate::errors::Failure;
use crate::values::{Entry, ExecResult, Stat, ToolResult, Written};

/// A policy's sandbox (or one of its workers', or one derived from it).
#[pyclass(frozen, module = "warden._native")]
pub struct Sandbox {
    pub(crate) policy: Arc<Policy>,
    pub(crate) worker: Option<String>,
    approver: Option<PyApprover>,
    audit: Option<PathBuf>,
    /// The sandbox as the policy (or the derivation) made it, approval rules and all.
    base: Arc<warden_fs::Sandbox>,
    /// The sandbox in effect: the base with its session grants. Operations it
    /// allows run here, side by side, without the session's lock.
    current: RwLock<Arc<warden_fs::Sandbox>>,
    session: Mutex<ApprovalSession>,
    /// Nothing under this sandbox can ask a person or write the audit log:
    /// operations may run on the sandbox in effect directly.
    pub(crate) quiet: bool,
    pub(crate) shell: crate::shell::Cached,
    pub(crate) components: crate::tools::Components,
}

/// Locks `mutex`, also after a panic elsewhere: the session's grants for one
/// operation live on a fork, so a panic midway leaves none behind in it.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Sandbox {
    fn assemble(policy: Arc<Policy>, worker: Option<String>, approver: Option<PyApprover>, audit: Option<PathBuf>, base: warden_fs::Sandbox, dynamic: bool) -> Result<Sandbox, Failure> {
        let log = match &audit {
            Some(path) => Some(AuditLog::open(path).map_err(|e| Failure::Named("AuditLogError", format!("cannot open the audit log {}: {e}", path.display())))?),
            None => None,
        };
        let asks = approver_of(&approver);
        let dynamic = if dynamic { policy.dynamic_for(worker.as_deref()).cloned() } else { None };
        let session = ApprovalSession::new(base.try_clone()?, dynamic, asks, log, SessionInfo::new(worker.as_deref()));
        let current = Arc::new(session.sandbox()?);
        let quiet = !session.may_ask_or_log();
        Ok(Sandbox {
            quiet,
            policy,
            worker,
            approver,
            audit,
            base: Arc::new(base),
            current: RwLock::new(current),
            session: Mutex::new(session),
            shell: Default::default(),
            components: Default::default(),
        })
    }

    /// The sandbox in effect now.
    pub(crate) fn current(&self) -> Arc<warden_fs::Sandbox> {
        self.current.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn session(&self) -> MutexGuard<'_, ApprovalSession> {
        lock(&self.session)
    }

    /// After the session changed: what it now allows, for the operations that follow.
    pub(crate) fn refresh(&self, session: &ApprovalSession) -> Result<(), Failure> {
        let now = Arc::new(session.sandbox()?);
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = now;
        Ok(())
    }

    /// A fork of the session, for one operation beside others.
    pub(crate) fn fork(&self) -> Result<ApprovalSession, Failure> {
        Ok(self.session().fork(self.approver())?)
    }

    /// Takes back what the person granted `fork` for the session, if anything.
    pub(crate) fn adopt(&self, fork: ApprovalSession) -> Result<(), Failure> {
        let mut session = self.session();
        let before = session.session_grants().len();
        session.adopt(fork);
        if session.session_grants().len() != before {
            self.refresh(&session)?;
        }
        Ok(())
    }

    /// Runs `op` on the sandbox in effect; refused, runs it through the
    /// approval session (which logs the refusal, and may ask and run it again).
    fn run<T: Send>(&self, py: Python<'_>, tool: &str, op: impl Fn(&warden_fs::Sandbox) -> warden_fs::Result<T> + Send + Sync) -> Result<T, Failure> {
        py.detach(|| match op(&self.current()) {
            Err(FsError::Denied(_)) => {
                // On a fork: the person is asked without the session's lock held, so other
                // operations (and an approver that uses this sandbox) go on meanwhile.
                let mut fork = self.fork()?;
                // As the person reads it: "sandbox.write asks to write /portfolio/x.md ...".
                let label = format!("sandbox.{tool}");
                let outcome = fork.attempt(Some(&label), |sandbox| op(sandbox));
                self.adopt(fork)?;
                Ok(outcome??)
            }
            other => Ok(other?),
        })
    }

    fn mount_rules(&self, path: &str) -> Option<warden_policy::Rules> {
        let resolved = self.base.resolve(path).ok()?;
        self.base.mounts().iter().find(|m| m.path == resolved.mount).map(|m| m.rules.clone())
    }

    pub(crate) fn approver(&self) -> Box<dyn Approver> {
        approver_of(&self.approver)
    }
}

/// Who answers: the Python approver, or nobody.
fn approver_of(approver: &Option<PyApprover>) -> Box<dyn Approver> {
    match approver {
        Some(approver) => Box::new(approver.clone()),
        None => Box::new(DenyAll),
    }
}

/// A mount as the Python side gives it: `(mount point, host folder, writable,
/// suffixes, max_file_bytes, read_approval, write_approval)`.
type MountArgs = (String, PathBuf, bool, Option<Vec<String>>, Option<u64>, bool, bool);

fn mount_points(mounts: Vec<MountArgs>) -> Vec<warden_policy::MountPoint> {
    mounts
        .into_iter()
        .map(|(at, root, writable, suffixes, max_file_bytes, read_approval, write_approval)| warden_policy::MountPoint {
            at,
            root,
            rules: warden_policy::Rules { readable: true, writable, suffixes, max_file_bytes, read_approval, write_approval },
        })
        .collect()
}

/// One entry of `list_dir`: `(name, kind, leads_to_dir, size)`.
type DirEntryTuple = (String, &'static str, bool, Option<u64>);

/// Content to write: text (UTF-8) or bytes.
#[derive(FromPyObject)]
pub enum Content {
    Text(String),
    Bytes(Vec<u8>),
}

#[pymethods]
impl Sandbox {
    /// Opens the sandbox of `policy` (a policy file), or of `text` (policy
    /// YAML or JSON, relative roots against `base`), for `worker` if given.
    /// Or of `mounts`: `(mount point, host folder, writable, suffixes,
    /// max_file_bytes, read_approval, write_approval)` each, mount points nesting.
    #[new]
    #[pyo3(signature = (policy=None, *, text=None, mounts=None, base=None, worker=None, approver=None, audit=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        policy: Option<PathBuf>,
        text: Option<String>,
        mounts: Option<Vec<MountArgs>>,
        base: Option<PathBuf>,
        worker: Option<String>,
        approver: Option<Py<PyAny>>,
        audit: Option<PathBuf>,
    ) -> PyResult<Sandbox> {
        let approver = approver.map(|callback| PyApprover { callback: Arc::new(callback) });
        let opened = py.detach(|| {
            let config_file = || -> Result<PathBuf, Failure> {
                let base = match base {
                    Some(base) => base,
                    None => std::env::current_dir().map_err(|e| Failure::Named("PolicyError", format!("cannot find the current folder: {e}")))?,
                };
                Ok(std::path::absolute(&base).unwrap_or(base).join("<config>"))
            };
            let policy = match (policy, text, mounts) {
                (Some(file), None, None) => warden_policy::load(&file)?,
                (None, Some(text), None) => warden_policy::parse(&text, &config_file()?)?,
                (None, None, Some(mounts)) => warden_policy::policy_of_mounts(&mount_points(mounts), &config_file()?)?,
                _ => return Err(Failure::Named("PolicyError", "give one of a policy file, a policy's text or mounts".into())),
            };
            let audit = audit.or_else(|| policy.audit.clone());
            let fs = warden_fs::Sandbox::open_for(&policy, worker.as_deref())?;
            Sandbox::assemble(Arc::new(policy), worker, approver, audit, fs, true)
        });
        Ok(opened?)
    }

    /// A child sandbox with narrower handles: the folders of `allow_read` and
    /// `allow_write` only (or, with `inherit`, all of this one's), read-only
    /// with `readonly`. Asking for more than this sandbox has raises
    /// `SandboxPermissionEscalationError`. The child asks the same approver.
    #[pyo3(signature = (*, allow_read=None, allow_write=None, readonly=None, inherit=false))]
    fn derive(&self, py: Python<'_>, allow_read: Option<Vec<String>>, allow_write: Option<Vec<String>>, readonly: Option<bool>, inherit: bool) -> PyResult<Sandbox> {
        let request = DeriveRequest { allow_read, allow_write, readonly, inherit };
        let derived = py.detach(|| {
            let child = self.base.derive(&request)?;
            Sandbox::assemble(self.policy.clone(), self.worker.clone(), self.approver.clone(), self.audit.clone(), child, false)
        });
        Ok(derived?)
    }

    /// The worker this sandbox is, if any.
    #[getter]
    fn worker(&self) -> Option<String> {
        self.worker.clone()
    }

    /// Whether commands run in a container (`shell: { backend: container }`).
    #[getter]
    fn uses_container(&self) -> bool {
        self.policy.shell.container.is_some()
    }

    /// `root` (one folder at `/`) or `named` (mounts at `/NAME`, or at their mount points).
    #[getter]
    fn layout(&self) -> &'static str {
        match self.policy.layout {
            warden_policy::Layout::Root => "root",
            warden_policy::Layout::Named => "named",
        }
    }

    /// The policy's time limit, in seconds, if it sets one.
    #[getter]
    fn default_timeout(&self) -> Option<f64> {
        self.policy.limits.timeout.map(|t| t.as_secs_f64())
    }

    /// The policy file (or `<config>` in the base folder of a policy's text).
    #[getter]
    fn policy_file(&self) -> PathBuf {
        self.policy.file.clone()
    }

    /// Reads a UTF-8 file; `offset` and `max_chars` count characters.
    #[pyo3(signature = (path, *, offset=0, max_chars=None))]
    fn read(&self, py: Python<'_>, path: &str, offset: usize, max_chars: Option<usize>) -> PyResult<String> {
        let read = self.run(py, "read", |s| s.read(path, ReadOptions { offset, max_chars }))?;
        Ok(read.text)
    }

    /// Reads a window of a UTF-8 file: the text from character `offset`, at
    /// most `max_chars` of it, and how many characters the whole file has.
    #[pyo3(signature = (path, offset=0, max_chars=None))]
    fn read_window(&self, py: Python<'_>, path: &str, offset: usize, max_chars: Option<usize>) -> PyResult<(String, usize)> {
        let read = self.run(py, "read", |s| s.read(path, ReadOptions { offset, max_chars }))?;
        Ok((read.text, read.total_chars))
    }

    /// Reads a file's bytes.
    fn read_bytes<'py>(&self, py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.run(py, "read", |s| s.read_bytes(path))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Writes a whole file (text as UTF-8), atomically: a reader sees the old
    /// file or the new one, never a part.
    fn write(&self, py: Python<'_>, path: &str, content: Content) -> PyResult<Written> {
        let bytes: &[u8] = match &content {
            Content::Text(text) => text.as_bytes(),
            Content::Bytes(bytes) => bytes,
        };
        let written = self.run(py, "write", |s| s.write(path, bytes))?;
        Ok(Written { path: path.to_owned(), bytes: written.bytes, created: written.created })
    }

    /// Replaces the one occurrence of `old` with `new`.
    fn edit(&self, py: Python<'_>, path: &str, old: &str, new: &str) -> PyResult<Written> {
        let written = self.run(py, "edit", |s| s.edit(path, old, new))?;
        Ok(Written { path: path.to_owned(), bytes: written.bytes, created: written.created })
    }

    /// Deletes a file, or an empty folder.
    fn delete(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        Ok(self.run(py, "delete", |s| s.delete(path))?)
    }

    /// Creates a folder (and the folders above it).
    fn mkdir(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        Ok(self.run(py, "mkdir", |s| s.mkdir(path))?)
    }

    /// Moves a file or folder; the destination must not exist.
    #[pyo3(name = "move")]
    fn move_path(&self, py: Python<'_>, source: &str, destination: &str) -> PyResult<()> {
        Ok(self.run(py, "move", |s| s.move_path(source, destination))?)
    }

    /// Copies a file or folder; the destination must not exist.
    fn copy(&self, py: Python<'_>, source: &str, destination: &str) -> PyResult<()> {
        Ok(self.run(py, "copy", |s| s.copy(source, destination))?)
    }

    /// The entries under `path` (every mount when `None`), depth first,
    /// those `glob` matches only if given.
    #[pyo3(signature = (path=None, glob=None))]
    fn list(&self, py: Python<'_>, path: Option<&str>, glob: Option<&str>) -> PyResult<Vec<Entry>> {
        let entries = self.run(py, "list", |s| s.list_files(path, glob))?;
        Ok(entries.into_iter().map(|e| Entry { path: e.path.to_string(), kind: e.kind.as_str() }).collect())
    }

    /// A file's or folder's metadata.
    fn stat(&self, py: Python<'_>, path: &str) -> PyResult<Stat> {
        let stat = self.run(py, "stat", |s| s.stat(path))?;
        let modified = stat.modified.and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_secs_f64());
        Ok(Stat { path: stat.path.to_string(), kind: stat.kind.as_str(), size: stat.size, modified, writable: stat.writable })
    }

    /// Whether the policy lets `path` be read (mounts, modes, suffixes; a
    /// mount that asks first counts as readable).
    fn can_read(&self, path: &str) -> bool {
        self.base.can_read(path)
    }

    /// Whether the policy lets `path` be written (as `can_read`).
    fn can_write(&self, path: &str) -> bool {
        self.base.can_write(path)
    }

    /// Whether reading `path` asks a person first (its mount's `read_approval`).
    fn needs_read_approval(&self, path: &str) -> bool {
        self.mount_rules(path).is_some_and(|r| r.read_approval)
    }

    /// Whether writing `path` asks a person first (its mount's `write_approval`).
    fn needs_write_approval(&self, path: &str) -> bool {
        self.mount_rules(path).is_some_and(|r| r.write_approval)
    }

    /// The virtual folders that may be read.
    fn readable_roots(&self) -> Vec<String> {
        self.base.readable_roots().iter().map(ToString::to_string).collect()
    }

    /// The virtual folders that may be written.
    fn writable_roots(&self) -> Vec<String> {
        self.base.writable_roots().iter().map(ToString::to_string).collect()
    }

    /// The host path behind a virtual path (for the host's own use: never
    /// show it to a model). Raises as a read of `path` would be refused.
    fn host_path(&self, path: &str) -> PyResult<PathBuf> {
        Ok(self.resolve(path, false)?.1)
    }

    /// The mount that serves `path` (for writing, with `write`) and the host
    /// path behind it; raises the refusal that access would meet.
    #[pyo3(signature = (path, write=false))]
    fn resolve(&self, path: &str, write: bool) -> PyResult<(String, PathBuf)> {
        let access = if write { warden_fs::Access::Write } else { warden_fs::Access::Read };
        let resolved = self.base.resolve_for(path, access).map_err(Failure::from)?;
        let mount = self.base.mounts().iter().find(|m| m.path == resolved.mount).expect("resolved in one of its mounts");
        Ok((resolved.mount.to_string(), mount.host_root.join(resolved.relative)))
    }

    /// Runs a command in the OS sandbox (bubblewrap, or the policy's container).
    /// `cancel`, a `CancelToken`, ends it when cancelled from another thread.
    #[pyo3(signature = (argv, *, timeout=None, cwd=None, cancel=None))]
    fn exec(&self, py: Python<'_>, argv: Vec<std::ffi::OsString>, timeout: Option<f64>, cwd: Option<String>, cancel: Option<PyRef<'_, crate::shell::CancelToken>>) -> PyResult<ExecResult> {
        Ok(crate::shell::exec(self, py, argv, timeout, cwd, cancel.as_deref())?)
    }

    /// Runs commands in the kept container `name` (see `warden sandbox start`):
    /// started with the policy's settings when it is not running, unless
    /// `attach`, when it must be running already.
    #[pyo3(signature = (name, *, attach=false))]
    fn keep_container(&self, py: Python<'_>, name: String, attach: bool) -> PyResult<()> {
        Ok(crate::shell::keep_container(self, py, name, attach)?)
    }

    /// The entries of one folder: `(name, kind, leads_to_dir, size)` each, by name.
    fn list_dir(&self, py: Python<'_>, path: &str) -> PyResult<Vec<DirEntryTuple>> {
        let entries = self.run(py, "list", |s| s.list_dir(path))?;
        Ok(entries.into_iter().map(|e| (e.name, e.kind.as_str(), e.leads_to_dir, e.size)).collect())
    }

    /// Deletes a file, a symlink, or a folder with everything in it.
    fn delete_all(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        Ok(self.run(py, "delete", |s| s.delete_all(path))?)
    }

    /// Calls `tool` of the component file `component` with `input` (JSON
    /// text), under the policy's limits with those given over them.
    #[pyo3(signature = (component, tool, input, *, memory=None, timeout=None, fuel=None, output=None))]
    #[allow(clippy::too_many_arguments)]
    fn call_tool(
        &self,
        py: Python<'_>,
        component: PathBuf,
        tool: &str,
        input: &str,
        memory: Option<String>,
        timeout: Option<String>,
        fuel: Option<u64>,
        output: Option<String>,
    ) -> PyResult<ToolResult> {
        let limits = crate::tools::LimitArgs { memory, timeout, fuel, output };
        Ok(crate::tools::call(self, py, &component, tool, input, limits)?)
    }

    /// Ends what the sandbox keeps between calls (a container of its own).
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.shell.clear());
    }
}
