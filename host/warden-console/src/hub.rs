//! What the console shows, and what waits on it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::sync::{oneshot, watch};
use warden_fs::approval::{Answer, CommandRequest, Request, Scope};
use warden_policy::shown;

/// What the person chose for a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "lowercase")]
pub enum Decision {
    /// Allow this operation, on the folder at this index of the question's folders.
    Once { folder: usize },
    /// Allow it for the rest of the client's session.
    Session { folder: usize },
    Deny,
}

impl Decision {
    /// What the decision answers to an approval request; "for this session"
    /// is no answer where the question did not offer it.
    pub fn answer(self, offer_session: bool) -> Answer {
        match self {
            Decision::Once { folder } => Answer::Allow { scope: Scope::Once, choice: folder },
            Decision::Session { folder } if offer_session => Answer::Allow { scope: Scope::Session, choice: folder },
            Decision::Session { .. } => Answer::Unanswered,
            Decision::Deny => Answer::Deny,
        }
    }
}

/// The most questions pending at once: past them a question is not put on
/// the page (it goes unanswered), so that nobody fills the page and memory.
pub const MAX_PENDING: usize = 1000;
/// The most questions of one client pending at once: one client cannot fill the page.
pub const MAX_PENDING_PER_CLIENT: usize = 64;

/// A question for the person: the same facts as the client's form.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NewQuestion {
    /// The MCP client's name (or `warden` for the CLI's own commands).
    pub client: String,
    pub tool: String,
    /// `read` or `write`.
    pub access: String,
    pub path: String,
    pub host_path: String,
    pub reason: String,
    /// The folders that may be granted, narrowest first.
    pub folders: Vec<String>,
    /// Whether "Allow for this session" is a choice.
    pub offer_session: bool,
}

impl NewQuestion {
    /// `request` as the console shows it, asked by `client`; names are escaped
    /// as the client's form escapes them.
    /// A command a rule asks about, as the console shows it: `run` the line,
    /// no host path, and the line as its one choice (the page shows none).
    pub fn of_command(request: &CommandRequest, client: &str, offer_session: bool) -> NewQuestion {
        let command = shown(&request.command).into_owned();
        NewQuestion {
            client: client.to_owned(),
            tool: shown(request.tool.as_deref().unwrap_or("a tool")).into_owned(),
            access: "run".to_owned(),
            path: command.clone(),
            host_path: String::new(),
            reason: shown(&request.reason()).into_owned(),
            folders: vec![command],
            offer_session: offer_session && !request.session_rules.is_empty(),
        }
    }

    pub fn of(request: &Request, client: &str, offer_session: bool) -> NewQuestion {
        NewQuestion {
            client: client.to_owned(),
            tool: shown(request.tool.as_deref().unwrap_or("a tool")).into_owned(),
            access: request.access.as_str().to_owned(),
            path: shown(request.path.as_str()).into_owned(),
            host_path: shown(&request.host_path.to_string_lossy()).into_owned(),
            reason: request.reason.to_string(),
            folders: request.choices.iter().map(|c| shown(c.path.as_str()).into_owned()).collect(),
            offer_session,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
struct QuestionView {
    id: u64,
    client: String,
    tool: String,
    access: String,
    path: String,
    host_path: String,
    reason: String,
    folders: Vec<String>,
    offer_session: bool,
    /// Milliseconds since the epoch.
    asked_at: u64,
}

/// A call running, as the console lists it.
#[derive(Clone, Debug)]
pub struct NewCall {
    pub client: String,
    pub tool: String,
    /// What it does, in a few words (a command line, a path).
    pub detail: String,
}

#[derive(Clone, Debug, Serialize)]
struct CallView {
    id: u64,
    client: String,
    tool: String,
    detail: String,
    started_at: u64,
}

/// One grant in force, as a [`GrantSource`] lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GrantView {
    pub access: String,
    pub path: String,
    pub host: String,
}

/// A client session whose grants the console lists and may revoke.
pub trait GrantSource: Send + Sync {
    fn client(&self) -> String;
    fn grants(&self) -> Vec<GrantView>;
    /// Ends the grant of `access` to `path`; false when there is none.
    fn revoke(&self, access: &str, path: &str) -> bool;
}

type Cancel = Arc<dyn Fn() + Send + Sync>;

#[derive(Default)]
struct State {
    questions: BTreeMap<u64, (QuestionView, oneshot::Sender<Decision>)>,
    calls: BTreeMap<u64, (CallView, Cancel)>,
    grants: BTreeMap<u64, Weak<dyn GrantSource>>,
}

struct Hub {
    next: AtomicU64,
    /// Where the page is served (`http://127.0.0.1:PORT`), once it is.
    base: Mutex<String>,
    state: Mutex<State>,
    /// Counts changes; the page's event stream waits on it.
    changes: watch::Sender<u64>,
    audit: Option<PathBuf>,
}

/// The console's state, shared by the server and every call that asks.
#[derive(Clone)]
pub struct Console(Arc<Hub>);

impl Console {
    /// `audit`: the audit log the page shows, if the policy keeps one.
    pub fn new(audit: Option<PathBuf>) -> Console {
        Console(Arc::new(Hub { next: AtomicU64::new(1), base: Mutex::default(), state: Mutex::default(), changes: watch::Sender::new(0), audit }))
    }

    pub(crate) fn served_at(&self, base: String) {
        *self.0.base.lock().unwrap_or_else(|p| p.into_inner()) = base;
    }

    /// The page of question `id`: the console, which shows it first.
    fn question_url(&self, id: u64) -> String {
        format!("{}/?question={id}", self.0.base.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub(crate) fn audit(&self) -> Option<&PathBuf> {
        self.0.audit.as_ref()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn next_id(&self) -> u64 {
        self.0.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Tells the page that something changed.
    pub fn changed(&self) {
        self.0.changes.send_modify(|n| *n += 1);
    }

    pub(crate) fn changes(&self) -> watch::Receiver<u64> {
        self.0.changes.subscribe()
    }

    /// Puts `question` on the page until it is answered or the [`Asked`] is dropped.
    pub fn ask(&self, question: NewQuestion) -> Asked {
        let id = self.next_id();
        let (reply, answer) = oneshot::channel();
        let mut state = self.state();
        let of_client = state.questions.values().filter(|(view, _)| view.client == question.client).count();
        if state.questions.len() >= MAX_PENDING || of_client >= MAX_PENDING_PER_CLIENT {
            tracing::warn!("the console holds {} questions, {of_client} of {}: one more goes unanswered", state.questions.len(), question.client);
            // Dropped, the reply tells the asker that the console will not answer.
            return Asked { id, answer, console: self.clone() };
        }
        let view = QuestionView {
            id,
            client: question.client,
            tool: question.tool,
            access: question.access,
            path: question.path,
            host_path: question.host_path,
            reason: question.reason,
            folders: question.folders,
            offer_session: question.offer_session,
            asked_at: now_ms(),
        };
        state.questions.insert(id, (view, reply));
        drop(state);
        self.changed();
        Asked { id, answer, console: self.clone() }
    }

    /// The person's answer to question `id`; an error when it is not
    /// pending, or the answer is not one of its choices.
    pub(crate) fn answer(&self, id: u64, decision: Decision) -> Result<(), &'static str> {
        let mut state = self.state();
        let Some((view, _)) = state.questions.get(&id) else { return Err("that question is no longer pending") };
        let valid = match decision {
            Decision::Once { folder } => folder < view.folders.len(),
            Decision::Session { folder } => folder < view.folders.len() && view.offer_session,
            Decision::Deny => true,
        };
        if !valid {
            return Err("that is not one of the question's choices");
        }
        let (_, reply) = state.questions.remove(&id).expect("looked up above");
        drop(state);
        let _ = reply.send(decision);
        self.changed();
        Ok(())
    }

    /// Lists a running call until the guard is dropped; `cancel` ends it.
    pub fn call_started(&self, call: NewCall, cancel: impl Fn() + Send + Sync + 'static) -> CallGuard {
        let id = self.next_id();
        let view = CallView { id, client: call.client, tool: call.tool, detail: call.detail, started_at: now_ms() };
        self.state().calls.insert(id, (view, Arc::new(cancel)));
        self.changed();
        CallGuard { id, console: self.clone() }
    }

    pub(crate) fn cancel(&self, id: u64) -> bool {
        let cancel = self.state().calls.get(&id).map(|(_, cancel)| cancel.clone());
        cancel.map(|cancel| cancel()).is_some()
    }

    /// Lists the grants of `source` while it lives.
    pub fn grants_of(&self, source: Weak<dyn GrantSource>) {
        let id = self.next_id();
        let mut state = self.state();
        // Those of ended sessions go here too, not only when a page looks.
        state.grants.retain(|_, source| source.strong_count() > 0);
        state.grants.insert(id, source);
    }

    pub(crate) fn revoke(&self, source: u64, access: &str, path: &str) -> bool {
        let source = self.state().grants.get(&source).and_then(Weak::upgrade);
        let revoked = source.is_some_and(|s| s.revoke(access, path));
        if revoked {
            self.changed();
        }
        revoked
    }

    /// What the page shows, as JSON (the CSRF token is added by the route).
    pub(crate) fn snapshot(&self) -> serde_json::Value {
        let mut state = self.state();
        state.grants.retain(|_, source| source.strong_count() > 0);
        let questions: Vec<&QuestionView> = state.questions.values().map(|(view, _)| view).collect();
        let calls: Vec<&CallView> = state.calls.values().map(|(view, _)| view).collect();
        let sources: Vec<(u64, Arc<dyn GrantSource>)> = state.grants.iter().filter_map(|(id, s)| Some((*id, s.upgrade()?))).collect();
        let snapshot = serde_json::json!({ "questions": questions, "calls": calls, "now": now_ms() });
        drop(state);
        let mut grants = Vec::new();
        for (id, source) in sources {
            let client = source.client();
            for grant in source.grants() {
                grants.push(serde_json::json!({ "source": id, "client": client, "access": grant.access, "path": grant.path, "host": grant.host }));
            }
        }
        let mut snapshot = snapshot;
        snapshot["grants"] = serde_json::Value::Array(grants);
        snapshot
    }
}

/// A question on the page; dropped, it is withdrawn.
pub struct Asked {
    id: u64,
    answer: oneshot::Receiver<Decision>,
    console: Console,
}

impl Asked {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The console's page for this question, for a client that opens URLs.
    pub fn url(&self) -> String {
        self.console.question_url(self.id)
    }

    /// The person's answer; `None` when the console went away.
    pub async fn answer(&mut self) -> Option<Decision> {
        (&mut self.answer).await.ok()
    }
}

impl Drop for Asked {
    fn drop(&mut self) {
        if self.console.state().questions.remove(&self.id).is_some() {
            self.console.changed();
        }
    }
}

/// A call on the page; dropped, it is gone from it.
pub struct CallGuard {
    id: u64,
    console: Console,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.console.state().calls.remove(&self.id);
        self.console.changed();
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question() -> NewQuestion {
        NewQuestion {
            client: "agent".into(),
            tool: "write_file".into(),
            access: "write".into(),
            path: "/p/a.md".into(),
            host_path: "/h/p/a.md".into(),
            reason: "the mount asks".into(),
            folders: vec!["/p".into()],
            offer_session: false,
        }
    }

    #[tokio::test]
    async fn an_answer_reaches_the_question_once_and_only_a_choice_it_offered() {
        let console = Console::new(None);
        let mut asked = console.ask(question());
        let id = asked.id;
        assert_eq!(console.answer(id, Decision::Session { folder: 0 }), Err("that is not one of the question's choices"));
        assert_eq!(console.answer(id, Decision::Once { folder: 1 }), Err("that is not one of the question's choices"));
        assert_eq!(console.answer(id, Decision::Once { folder: 0 }), Ok(()));
        assert_eq!(asked.answer().await, Some(Decision::Once { folder: 0 }));
        assert_eq!(console.answer(id, Decision::Deny), Err("that question is no longer pending"));
    }

    #[tokio::test]
    async fn past_the_most_pending_a_question_is_not_put_on_the_page_and_goes_unanswered() {
        let console = Console::new(None);
        let kept: Vec<Asked> = (0..MAX_PENDING).map(|i| console.ask(NewQuestion { client: format!("agent {}", i % 20), ..question() })).collect();
        let mut over = console.ask(question());
        assert_eq!(over.answer().await, None);
        assert_eq!(console.snapshot()["questions"].as_array().unwrap().len(), MAX_PENDING);
        drop(kept);
        assert_eq!(console.snapshot()["questions"].as_array().unwrap().len(), 0);
    }

    #[tokio::test]
    async fn one_client_cannot_fill_the_page() {
        let console = Console::new(None);
        let kept: Vec<Asked> = (0..MAX_PENDING_PER_CLIENT).map(|_| console.ask(question())).collect();
        assert_eq!(console.ask(question()).answer().await, None);
        let other = console.ask(NewQuestion { client: "another agent".into(), ..question() });
        assert_eq!(console.snapshot()["questions"].as_array().unwrap().len(), MAX_PENDING_PER_CLIENT + 1);
        drop((kept, other));
    }

    #[test]
    fn a_question_dropped_unanswered_is_withdrawn_from_the_page() {
        let console = Console::new(None);
        let asked = console.ask(question());
        assert_eq!(console.snapshot()["questions"].as_array().unwrap().len(), 1);
        drop(asked);
        assert_eq!(console.snapshot()["questions"].as_array().unwrap().len(), 0);
    }
}
