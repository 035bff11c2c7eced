//! A Python callable as the person who answers approval requests.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use warden_fs::approval::{Answer, Approver, CommandRequest, Request, Scope};

/// One access waiting for a person's answer: the question the terminal and
/// the MCP form show, and its parts.
#[pyclass(frozen, get_all, module = "warden._native")]
pub struct ApprovalRequest {
    /// The question, in one line.
    pub question: String,
    /// `read` or `write`.
    pub access: &'static str,
    /// The virtual path the access was for.
    pub path: String,
    /// Its host path (for the person; never shown to a model).
    pub host_path: String,
    pub reason: String,
    /// The folders that may be granted, narrowest first; answering with a
    /// decision alone grants the first.
    pub folders: Vec<String>,
    pub tool: Option<String>,
    pub worker: Option<String>,
}

#[pymethods]
impl ApprovalRequest {
    fn __repr__(&self) -> String {
        format!("ApprovalRequest(access={:?}, path={:?}, folders={:?})", self.access, self.path, self.folders)
    }
}

impl ApprovalRequest {
    fn of(request: &Request) -> ApprovalRequest {
        ApprovalRequest {
            question: request.question(),
            access: request.access.as_str(),
            path: request.path.to_string(),
            host_path: request.host_path.to_string_lossy().into_owned(),
            reason: request.reason.to_string(),
            folders: request.choices.iter().map(|c| c.path.to_string()).collect(),
            tool: request.tool.clone(),
            worker: request.worker.clone(),
        }
    }
}

/// A command a rule asks about, waiting for a person's answer.
#[pyclass(frozen, get_all, module = "warden._native")]
pub struct CommandApprovalRequest {
    /// The question, in one line.
    pub question: String,
    /// The command line, as given.
    pub command: String,
    /// The commands in it that ask, their wrappers taken away.
    pub asking: Vec<String>,
    /// Why it asks: the rules' justifications, or what Warden could not read.
    pub reason: String,
    /// The rules that ask, as written (`git push ...`).
    pub rules: Vec<String>,
    /// What it would get beyond the sandbox, from a rule's grant.
    pub grant: Option<String>,
    /// Whether `"session"` approves its rules for the session (else it allows this once).
    pub session: bool,
    pub tool: Option<String>,
    pub worker: Option<String>,
}

#[pymethods]
impl CommandApprovalRequest {
    fn __repr__(&self) -> String {
        format!("CommandApprovalRequest(command={:?}, rules={:?})", self.command, self.rules)
    }
}

impl CommandApprovalRequest {
    fn of(request: &CommandRequest) -> CommandApprovalRequest {
        CommandApprovalRequest {
            question: request.question(),
            command: request.command.clone(),
            asking: request.asking.clone(),
            reason: request.reason(),
            rules: request.rules.iter().map(|(rule, _)| rule.clone()).collect(),
            grant: request.grant.clone(),
            session: !request.session_rules.is_empty(),
            tool: request.tool.clone(),
            worker: request.worker.clone(),
        }
    }
}

/// Calls `callback(request)`, which answers `"once"`, `"session"` or
/// `"deny"`, or a `(decision, folder)` pair naming one of `request.folders`.
/// Anything else, or an exception (reported through `sys.unraisablehook`),
/// is a denial.
#[derive(Clone)]
pub struct PyApprover {
    pub callback: Arc<Py<PyAny>>,
}

impl Approver for PyApprover {
    fn decide(&mut self, request: &Request) -> Answer {
        Python::attach(|py| {
            let asked = ApprovalRequest::of(request);
            let folders = asked.folders.clone();
            let answer = self.callback.bind(py).call1((asked,)).and_then(|reply| answer_of(&reply, &folders));
            self.or_deny(py, answer)
        })
    }

    /// The same callback, given a `CommandApprovalRequest`: it answers
    /// `"once"`, `"session"` or `"deny"` (a folder makes no sense, and denies).
    fn decide_command(&mut self, request: &CommandRequest) -> Answer {
        Python::attach(|py| {
            let answer = self.callback.bind(py).call1((CommandApprovalRequest::of(request),)).and_then(|reply| {
                let decision: String = reply.extract().map_err(|_| PyValueError::new_err(format!("an approver answers a command with \"once\", \"session\" or \"deny\", not {reply}")))?;
                decided(&decision, 0)
            });
            self.or_deny(py, answer)
        })
    }
}

impl PyApprover {
    /// A bad answer or an exception denies; it is reported through `sys.unraisablehook`.
    fn or_deny(&self, py: Python<'_>, answer: PyResult<Answer>) -> Answer {
        answer.unwrap_or_else(|e| {
            e.write_unraisable(py, Some(self.callback.bind(py)));
            Answer::Deny
        })
    }
}

fn answer_of(reply: &Bound<'_, PyAny>, folders: &[String]) -> PyResult<Answer> {
    let (decision, folder): (String, Option<String>) = match reply.extract::<String>() {
        Ok(decision) => (decision, None),
        Err(_) => reply.extract().map_err(|_| {
            PyValueError::new_err(format!("an approver answers \"once\", \"session\", \"deny\" or (decision, folder), not {reply}"))
        })?,
    };
    let choice = match &folder {
        None => 0,
        Some(folder) => folders.iter().position(|f| f == folder).ok_or_else(|| {
            PyValueError::new_err(format!("the folder {folder:?} is not one of the request's: {}", folders.join(", ")))
        })?,
    };
    decided(&decision, choice)
}

/// `"once"`, `"session"` or `"deny"`, for `choice` (the folder, for an access).
fn decided(decision: &str, choice: usize) -> PyResult<Answer> {
    match decision {
        "once" => Ok(Answer::Allow { scope: Scope::Once, choice }),
        "session" => Ok(Answer::Allow { scope: Scope::Session, choice }),
        "deny" => Ok(Answer::Deny),
        other => Err(PyValueError::new_err(format!("an approver answers \"once\", \"session\" or \"deny\", not {other:?}"))),
    }
}
