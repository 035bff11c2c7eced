//! What runs around one tool call: who answers its approval requests, its
//! cancellation and progress, and the blocking thread it runs on.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use warden_fs::approval::{Answer, ApprovalSession, Approver, DenyAll, Request};
use warden_fs::{Denial, FsError};

use crate::elicit::{Answered, Deferred, Settled};

/// How often a long call reports progress, from its first second on.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Who answers the approval requests of one call, and the client's name.
pub struct Asking {
    pub approver: Option<Box<dyn Approver>>,
    pub client: Option<String>,
    /// The approver waits for the client's answer (`elicitation/create`),
    /// which only the async threads can receive.
    pub waits_for_client: bool,
    /// 2026-07-28: the answers the call brings, granted before it runs again,
    /// and where a question to ask instead goes.
    pub answered: Option<(Answered, Arc<Mutex<Option<Deferred>>>)>,
    /// The tool's name, as the requests carry it.
    pub tool: String,
}

/// How a call in a session went.
pub enum Ran<T> {
    Done(T),
    /// It did not run: a question is to be asked first (2026-07-28).
    Asking,
    /// It did not run: the person refused what it needs.
    Refused(Denial),
}

/// What runs beside a call: a cancellation (`notifications/cancelled`, or
/// a closed HTTP stream) sets the call's flag; after a second, progress goes
/// out every second when the client gave a `progressToken`. Stopped on drop.
pub struct Watchers {
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// The call's progress, when the client asked for it.
    pub progress: Option<Progress>,
}

impl Watchers {
    pub fn start(context: &RequestContext<RoleServer>, cancel: Arc<AtomicBool>) -> Watchers {
        let ct = context.ct.clone();
        let mut tasks = vec![tokio::spawn(async move {
            ct.cancelled().await;
            cancel.store(true, Ordering::Relaxed);
        })];
        let progress = context.meta.get_progress_token().map(|token| Progress(Arc::new(ProgressOf {
            peer: context.peer.clone(),
            token,
            sent: AtomicU64::new(0),
            person: AtomicBool::new(false),
        })));
        if let Some(progress) = progress.clone() {
            tasks.push(tokio::spawn(async move {
                for seconds in 1u32.. {
                    tokio::time::sleep(PROGRESS_EVERY).await;
                    let message = if progress.0.person.load(Ordering::SeqCst) {
                        format!("waiting for a person to answer at Warden's console ({seconds} s)")
                    } else {
                        format!("running for {seconds} s")
                    };
                    if !progress.say(message).await {
                        return;
                    }
                }
            }));
        }
        Watchers { tasks, progress }
    }
}

/// A call's progress notifications: each says what the call is doing.
#[derive(Clone)]
pub struct Progress(Arc<ProgressOf>);

struct ProgressOf {
    peer: rmcp::Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
    /// Notifications sent; the progress each carries goes up by one.
    sent: AtomicU64,
    /// A person is being asked at the console, and the client is not.
    person: AtomicBool,
}

impl Progress {
    /// Sends `message`; false when the client is gone.
    async fn say(&self, message: String) -> bool {
        let count = self.0.sent.fetch_add(1, Ordering::SeqCst) + 1;
        let mut note = ProgressNotificationParam::new(self.0.token.clone(), count as f64);
        note.message = Some(message);
        self.0.peer.notify_progress(note).await.is_ok()
    }

    /// Tells the client, at once and then with every notification, that a
    /// person is asked at the console; `false`: no longer.
    pub async fn asking_at_console(&self, asking: bool) {
        self.0.person.store(asking, Ordering::SeqCst);
        if asking {
            self.say("a person is being asked at Warden's console".to_owned()).await;
        }
    }
}

impl Drop for Watchers {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// One client's approval session for one worker. Each call runs in a fork of
/// it, so that calls run side by side; grants for the session come back to it.
pub struct ClientSession {
    session: Mutex<ApprovalSession>,
    /// The session's own approver (answers given in advance), which its forks share.
    own: SharedApprover,
    /// The client, as the console names it.
    label: String,
}

impl ClientSession {
    pub fn new(mut session: ApprovalSession, label: String) -> ClientSession {
        let own = SharedApprover(Arc::new(Mutex::new(session.set_approver(Box::new(DenyAll)))));
        ClientSession { session: Mutex::new(session), own, label }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ApprovalSession> {
        self.session.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The console lists the session's grants and may revoke them: the next
/// access there asks again.
impl warden_console::GrantSource for ClientSession {
    fn client(&self) -> String {
        self.label.clone()
    }

    fn grants(&self) -> Vec<warden_console::GrantView> {
        let grants = self.lock().session_grants();
        grants
            .into_iter()
            .map(|(access, dir)| warden_console::GrantView { access: access.as_str().to_owned(), path: dir.path.to_string(), host: dir.host.display().to_string() })
            .collect()
    }

    fn revoke(&self, access: &str, path: &str) -> bool {
        let access = match access {
            "read" => warden_fs::Access::Read,
            "write" => warden_fs::Access::Write,
            _ => return false,
        };
        match self.lock().revoke(access, path, Some("console")) {
            Ok(revoked) => revoked,
            Err(e) => {
                tracing::warn!("a grant was revoked, and not logged: {e}");
                true
            }
        }
    }
}

#[derive(Clone)]
struct SharedApprover(Arc<Mutex<Box<dyn Approver>>>);

impl Approver for SharedApprover {
    fn decide(&mut self, request: &Request) -> Answer {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).decide(request)
    }

    fn decide_command(&mut self, request: &warden_fs::approval::CommandRequest) -> Answer {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).decide_command(request)
    }

    fn answered_via(&self) -> Option<&'static str> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).answered_via()
    }
}

/// Runs `f` in a fork of `session` with this call's approver (else the
/// session's own) and client, once the answers the call brings are granted;
/// the session is locked only to fork and to take the fork's grants back.
pub fn in_session<T>(session: &ClientSession, asking: Asking, f: impl FnOnce(&mut ApprovalSession) -> T) -> Result<Ran<T>, FsError> {
    let approver = asking.approver.unwrap_or_else(|| Box::new(session.own.clone()));
    let mut call = session.lock().fork(approver)?;
    call.set_client(asking.client);
    let settled = match &asking.answered {
        Some((answered, _)) => answered.settle(&mut call, &asking.tool),
        None => Ok(Settled::Granted),
    };
    let ran = match settled {
        Ok(Settled::Granted) => Ok(Ran::Done(f(&mut call))),
        Ok(Settled::AskInstead(request)) => {
            if let Some((_, asked)) = &asking.answered {
                *asked.lock().unwrap_or_else(|p| p.into_inner()) = Some(Deferred::Access(request));
            }
            Ok(Ran::Asking)
        }
        Ok(Settled::Refused(denial)) => Ok(Ran::Refused(denial)),
        Err(e) => Err(e),
    };
    session.lock().adopt(call);
    ran
}

/// The client takes form elicitations (2025-11-25 capabilities).
pub fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().and_then(|c| c.elicitation).is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The client takes URL elicitations: it sends the person to a page.
pub fn can_open_urls(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().and_then(|c| c.elicitation).is_some_and(|e| e.url.is_some())
}

/// Runs `work` where it costs least: a short one that cannot wait for the
/// client right here, sparing two thread switches (most of a small call's
/// time); anything else on the blocking pool, off the async threads.
pub async fn run_work<T: Send + 'static>(short: bool, work: impl FnOnce() -> T + Send + 'static) -> Result<T, ErrorData> {
    if short { Ok(work()) } else { blocking(work).await }
}

/// Runs blocking work (the filesystem, a component) off the async threads.
pub async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, ErrorData> {
    tokio::task::spawn_blocking(work).await.map_err(|e| ErrorData::internal_error(format!("the tool stopped: {e}"), None))
}
