//! Approvals asked of the person at the MCP client, by elicitation: a form
//! naming the tool, the operation, the path and the reason, with the choices
//! allow once / allow for this session / deny, and the folder to grant.
//!
//! 2025-11-25 clients get `elicitation/create` while the operation waits; a
//! cancelled call withdraws its question (`notifications/cancelled`), and a
//! call waiting for a person holds no call slot. Where Warden serves its
//! console (`--console`), the same question is put there too (or there
//! alone, to a client that takes no forms or asks in its results): the
//! first answer wins and the other question is withdrawn. 2026-07-28 clients get the
//! form in the call's result (input required), and call again with the answer
//! and the sealed state of the request, which carries every answer given so
//! far for that call, is bound to the client that was asked, and is spent
//! once answered.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, EnumSchema, InputRequest,
    InputRequests, InputRequiredResult, RequestStateCodec, SealOptions, ServerRequest,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleServer};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use warden_fs::approval::{Answer, ApprovalSession, Approver, CommandRequest, Request, Scope};
use warden_fs::{Access, Denial, FsError};
use warden_policy::shown;

/// How long a person may take over one form.
pub(crate) const ANSWER_TIME: Duration = Duration::from_secs(300);
/// The key of the one form a call's result holds.
const KEY: &str = "approval";
/// The most questions one 2026-07-28 call may carry answers to.
const MAX_ROUNDS: usize = 16;

/// The form for `request`. `offer_session`: "Allow for this session" is a
/// choice; not where no session outlives the call (stateless HTTP).
pub fn form(request: &Request, offer_session: bool) -> ElicitRequestParams {
    let folders: Vec<String> = request.choices.iter().map(|c| shown(c.path.as_str()).into_owned()).collect();
    let folder = EnumSchema::builder(folders.clone())
        .with_default(folders[0].clone())
        .expect("the default is a choice")
        .title(format!("Folder to grant {} access to", request.access.as_str()))
        .build();
    let schema = ElicitationSchema::builder()
        .required_enum_schema("decision", decision_schema(offer_session))
        .required_enum_schema("folder", folder)
        .build()
        .expect("a form of two enums is a valid schema");
    ElicitRequestParams::FormElicitationParams { meta: None, message: request.question(), requested_schema: schema }
}

/// The form for a command a rule asks about: the decision alone.
pub fn command_form(request: &CommandRequest, offer_session: bool) -> ElicitRequestParams {
    let schema = ElicitationSchema::builder()
        .required_enum_schema("decision", decision_schema(offer_session))
        .build()
        .expect("a form of one enum is a valid schema");
    ElicitRequestParams::FormElicitationParams { meta: None, message: request.question(), requested_schema: schema }
}

/// Allow once, for the session (where offered) or deny; deny by default.
fn decision_schema(offer_session: bool) -> EnumSchema {
    let (values, titles) = if offer_session {
        (vec!["once", "session", "deny"], vec!["Allow once", "Allow for this session", "Deny"])
    } else {
        (vec!["once", "deny"], vec!["Allow once", "Deny"])
    };
    EnumSchema::builder(values.into_iter().map(String::from).collect())
        .enum_titles(titles.into_iter().map(String::from).collect())
        .and_then(|b| b.with_default("deny"))
        .expect("the titles match the values")
        .title("Decision")
        .build()
}

/// The answer a form's result gives to `request`. A decline is a denial; a
/// cancel, or a result that does not fit the form, leaves it unanswered.
pub fn answer(request: &Request, result: &ElicitResult, offer_session: bool) -> Answer {
    let scope = match decision(result, offer_session) {
        None => return Answer::Unanswered,
        Some(None) => return Answer::Deny,
        Some(Some(scope)) => scope,
    };
    let field = |name: &str| result.content.as_ref().and_then(|c| c.get(name)).and_then(|v| v.as_str());
    let folder = field("folder");
    let choice = match folder {
        None => Some(0),
        Some(folder) => request.choices.iter().position(|c| shown(c.path.as_str()) == folder),
    };
    match choice {
        Some(choice) => Answer::Allow { scope, choice },
        None => Answer::Unanswered,
    }
}

/// From the blocking thread the operation runs on, hands the question to
/// the call's own task ([`asking_while`]), which asks the person (by
/// `elicitation/create`, at the console, or both), and waits for the answer.
pub struct Eliciting {
    pub questions: mpsc::Sender<Question>,
    /// Set when the call is cancelled: an answer that comes after grants nothing.
    pub cancel: Arc<AtomicBool>,
    /// The client's name, as the console shows it.
    pub client: String,
    /// Where the last answer came from.
    pub via: Option<&'static str>,
    /// Whether "Allow for this session" is a choice (not where no session
    /// outlives the call: stateless HTTP).
    pub offer_session: bool,
}

/// A question for the person, as a form and as the console shows it, and
/// where the answer goes (`None`: no answer).
pub struct Question {
    form: ElicitRequestParams,
    /// As the console shows it; `None` for a command, which only the client's form asks about.
    console: Option<warden_console::NewQuestion>,
    reply: oneshot::Sender<Option<Decided>>,
}

/// An answer, and where it was given.
pub enum Decided {
    Client(ElicitResult),
    Console(warden_console::Decision),
}

impl Approver for Eliciting {
    fn decide(&mut self, request: &Request) -> Answer {
        let (reply, answered) = oneshot::channel();
        self.via = None;
        let question = Question { form: form(request, self.offer_session), console: Some(warden_console::NewQuestion::of(request, &self.client, self.offer_session)), reply };
        if self.questions.blocking_send(question).is_err() {
            return Answer::Unanswered;
        }
        match answered.blocking_recv() {
            Ok(Some(_)) if self.cancel.load(Ordering::SeqCst) => Answer::Unanswered,
            Ok(Some(Decided::Client(result))) => {
                self.via = Some("client");
                answer(request, &result, self.offer_session)
            }
            Ok(Some(Decided::Console(decision))) => {
                self.via = Some("console");
                decision.answer(self.offer_session)
            }
            _ => Answer::Unanswered,
        }
    }

    fn answered_via(&self) -> Option<&'static str> {
        self.via
    }

    fn decide_command(&mut self, request: &CommandRequest) -> Answer {
        let (reply, answered) = oneshot::channel();
        self.via = None;
        let offer_session = self.offer_session && !request.session_rules.is_empty();
        let console = Some(warden_console::NewQuestion::of_command(request, &self.client, self.offer_session));
        let question = Question { form: command_form(request, offer_session), console, reply };
        if self.questions.blocking_send(question).is_err() {
            return Answer::Unanswered;
        }
        match answered.blocking_recv() {
            Ok(Some(_)) if self.cancel.load(Ordering::SeqCst) => Answer::Unanswered,
            Ok(Some(Decided::Client(result))) => {
                self.via = Some("client");
                decision(&result, offer_session).map_or(Answer::Unanswered, |scope| match scope {
                    Some(scope) => Answer::Allow { scope, choice: 0 },
                    None => Answer::Deny,
                })
            }
            Ok(Some(Decided::Console(decision))) => {
                self.via = Some("console");
                match decision.answer(offer_session) {
                    Answer::Allow { scope, .. } => Answer::Allow { scope, choice: 0 },
                    answer => answer,
                }
            }
            _ => Answer::Unanswered,
        }
    }
}

/// What a form's result decides: `Some(None)` denies, `Some(Some(scope))`
/// allows, `None` leaves it unanswered (a cancel, or a result that does not fit).
fn decision(result: &ElicitResult, offer_session: bool) -> Option<Option<Scope>> {
    match result.action {
        ElicitationAction::Accept => {}
        ElicitationAction::Decline => return Some(None),
        _ => return None,
    }
    match result.content.as_ref().and_then(|c| c.get("decision")).and_then(|v| v.as_str()) {
        Some("once") => Some(Some(Scope::Once)),
        Some("session") if offer_session => Some(Some(Scope::Session)),
        Some("deny") => Some(None),
        _ => None,
    }
}

/// What a call needs while its questions are put to the person.
pub struct Waiting<'a> {
    pub peer: &'a Peer<RoleServer>,
    /// How the client itself is asked, if at all.
    pub client_way: ClientWay,
    /// Warden's own console, where questions go too.
    pub console: Option<&'a warden_console::Console>,
    /// Cancelled with the call: the question is withdrawn.
    pub cancelled: &'a CancellationToken,
    /// Given back while a person is asked, taken again after.
    pub slot: &'a mut Slot,
    /// Whether the call's catalogue is still the one served; an answer that
    /// comes after a reload grants nothing under the old policy.
    pub current: &'a (dyn Fn() -> bool + Send + Sync),
    /// The call's progress notifications, if the client asked for them.
    pub progress: Option<&'a crate::calls::Progress>,
}

/// A call slot (`--max-concurrent`), held while the call runs.
pub struct Slot {
    pub slots: Arc<tokio::sync::Semaphore>,
    pub held: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// Runs `work` (a call) and puts its questions to the person meanwhile. They
/// are asked from the call's own task, so that over HTTP they ride the
/// call's event stream, where a client that opened no other stream hears them.
pub async fn asking_while<T>(work: impl std::future::Future<Output = T>, questions: &mut mpsc::Receiver<Question>, waiting: Waiting<'_>) -> T {
    tokio::pin!(work);
    loop {
        tokio::select! {
            done = &mut work => return done,
            Some(question) = questions.recv() => {
                // Waiting for a person is not work: others' calls may run meanwhile.
                waiting.slot.held = None;
                let asking = Asking { peer: waiting.peer, way: waiting.client_way, console: waiting.console, progress: waiting.progress };
                let mut answered = ask_person(asking, question.form, question.console, waiting.cancelled).await;
                // Answered or not, the call goes on working: with a slot again.
                tokio::select! {
                    slot = waiting.slot.slots.clone().acquire_owned() => waiting.slot.held = slot.ok(),
                    () = waiting.cancelled.cancelled() => answered = None,
                }
                // A client that cancels and then answers has its cancellation handled
                // first (rmcp's loop cancels the call before it passes the answer on), but
                // the selects above may have seen the answer first: the token decides.
                if waiting.cancelled.is_cancelled() || !(waiting.current)() {
                    answered = None;
                }
                let _ = question.reply.send(answered);
            }
        }
    }
}

/// How a call's client is asked, by `elicitation/create`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ClientWay {
    /// Not at all (it takes no elicitation, or asks in its results).
    Not,
    /// A form with the choices.
    Form,
    /// The console's page for the question (`mode: "url"`), where the person answers.
    Url,
}

/// Where a question goes: the client (a form, or the console's page), the console, or both.
struct Asking<'a> {
    peer: &'a Peer<RoleServer>,
    way: ClientWay,
    console: Option<&'a warden_console::Console>,
    progress: Option<&'a crate::calls::Progress>,
}

/// Asks the person wherever `asking` says; the first answer wins, and the
/// other question is withdrawn, as both are when the call is cancelled or
/// nobody answers in time.
async fn ask_person(
    asking: Asking<'_>,
    form: ElicitRequestParams,
    question: Option<warden_console::NewQuestion>,
    cancelled: &CancellationToken,
) -> Option<Decided> {
    let mut on_page = asking.console.zip(question).map(|(console, question)| console.ask(question));
    // A client that takes URLs is sent the console's page for the question instead of a form.
    let sent = match (asking.way, &on_page) {
        (ClientWay::Url, Some(asked)) => console_page(asked.id(), asked.url()),
        _ => form,
    };
    let mut handle = match asking.way {
        ClientWay::Not => None,
        ClientWay::Form | ClientWay::Url => {
            match asking.peer.send_request_with_option(ServerRequest::ElicitRequest(ElicitRequest::new(sent)), PeerRequestOptions::no_options()).await {
                Ok(handle) => Some(handle),
                Err(e) => {
                    tracing::warn!("elicitation failed: {e}");
                    None
                }
            }
        }
    };
    // A client that is not asked hears why the call waits, if it takes progress.
    let told = match (asking.progress, &handle, &on_page) {
        (Some(progress), None, Some(_)) => Some(progress),
        _ => None,
    };
    if let Some(progress) = told {
        // A client that reads nothing does not hold the question up.
        let _ = tokio::time::timeout(Duration::from_secs(1), progress.asking_at_console(true)).await;
    }
    let deadline = tokio::time::sleep(ANSWER_TIME);
    tokio::pin!(deadline);
    let decided = loop {
        if handle.is_none() && on_page.is_none() {
            break None;
        }
        tokio::select! {
            answered = async { (&mut handle.as_mut().expect("checked by the guard").rx).await }, if handle.is_some() => match answered {
                // The person went to the page: the answer comes from there.
                Ok(Ok(ClientResult::ElicitResult(result))) if asking.way == ClientWay::Url && result.action == ElicitationAction::Accept => handle = None,
                Ok(Ok(ClientResult::ElicitResult(result))) => {
                    handle = None;
                    break Some(Decided::Client(result));
                }
                // The client could not show the form: the console may still be answered.
                other => {
                    tracing::warn!("elicitation failed: {other:?}");
                    handle = None;
                }
            },
            answered = async { on_page.as_mut().expect("checked by the guard").answer().await }, if on_page.is_some() => match answered {
                Some(decision) => break Some(Decided::Console(decision)),
                None => on_page = None,
            },
            () = &mut deadline => break None,
            () = cancelled.cancelled() => break None,
        }
    };
    if let Some(progress) = told {
        let _ = tokio::time::timeout(Duration::from_secs(1), progress.asking_at_console(false)).await;
    }
    // Dropped, the console's question is withdrawn from the page; the client's form is withdrawn here.
    drop(on_page);
    if let Some(handle) = handle {
        let why = if matches!(decided, Some(Decided::Console(_))) { "answered at Warden's console" } else { "the call was cancelled, or nobody answered in time" };
        if let Err(e) = handle.cancel(Some(why.to_owned())).await {
            tracing::debug!("the question was not withdrawn: {e}");
        }
    }
    decided
}

/// The request that sends the person to the console's page for question `id`.
fn console_page(id: u64, url: String) -> ElicitRequestParams {
    ElicitRequestParams::UrlElicitationParams {
        meta: None,
        // No path or reason: the page shows them to the person, the agent's client need not see them.
        message: "Warden asks you about an access by this agent's tool; answer at Warden's console.".to_owned(),
        url,
        elicitation_id: format!("warden-question-{id}"),
    }
}

/// What a 2026-07-28 call's result asks the person about.
#[derive(Clone, Debug)]
pub enum Deferred {
    Access(Request),
    /// A command a rule asks about.
    Command(CommandRequest),
}

/// 2026-07-28: leaves the first new request unanswered and keeps it, for the
/// call's result to ask.
pub struct Deferring {
    pub asked: Arc<Mutex<Option<Deferred>>>,
}

impl Approver for Deferring {
    fn decide(&mut self, request: &Request) -> Answer {
        self.asked.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| Deferred::Access(request.clone()));
        Answer::Deferred
    }

    fn decide_command(&mut self, request: &CommandRequest) -> Answer {
        self.asked.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| Deferred::Command(request.clone()));
        Answer::Deferred
    }
}

/// The `access` an `Asked` of a command carries.
const RUN: &str = "run";

/// A question a call's result asked, as sealed into its `requestState`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Asked {
    access: String,
    path: String,
    host_path: String,
    choices: Vec<String>,
}

impl Asked {
    /// A command, asked about as the line it is (the state is bound to the call's arguments too).
    fn of_command(request: &CommandRequest) -> Asked {
        Asked { access: RUN.to_owned(), path: request.command.clone(), host_path: String::new(), choices: Vec::new() }
    }

    fn of(request: &Request) -> Asked {
        Asked {
            access: request.access.as_str().to_owned(),
            path: request.path.to_string(),
            host_path: request.host_path.to_string_lossy().into_owned(),
            choices: request.choices.iter().map(|c| format!("{}\0{}", c.path, c.host.display())).collect(),
        }
    }

    fn access(&self) -> Access {
        if self.access == Access::Write.as_str() { Access::Write } else { Access::Read }
    }
}

/// What the person answered in the rounds of one 2026-07-28 call so far,
/// in order; the last one answered in this round.
#[derive(Clone)]
pub struct Answered {
    rounds: Vec<(Asked, ElicitResult)>,
    /// The last answer came with this round (it is logged now; the earlier
    /// ones were logged in theirs).
    fresh: bool,
    offer_session: bool,
    /// Where the last answer was given, when not at the client.
    via: Option<&'static str>,
}

/// What became of the answers given earlier, before the call runs again.
pub enum Settled {
    /// Each is granted as answered; the call may run.
    Granted,
    /// One of the accesses raises another request now (the path changed on
    /// the host since it was asked): that one is to be asked instead.
    AskInstead(Request),
    /// The person refused one, or left it unanswered: the call ends so.
    Refused(Denial),
}

impl Answered {
    /// Grants in `session` what the person answered, each answer to the
    /// request its access raises now, and only if that is the request the
    /// person was shown (the same path, host path and folders).
    pub fn settle(&self, session: &mut ApprovalSession, tool: &str) -> Result<Settled, FsError> {
        let last = self.rounds.len().saturating_sub(1);
        for (i, (asked, result)) in self.rounds.iter().enumerate() {
            if asked.access == RUN {
                // Used when the call judges that very line again; logged then, in its round.
                let answer = match decision(result, self.offer_session) {
                    None => Answer::Unanswered,
                    Some(None) => Answer::Deny,
                    Some(Some(scope)) => Answer::Allow { scope, choice: 0 },
                };
                session.answer_command_ahead(&asked.path, answer, i == last && self.fresh, self.via.filter(|_| i == last).or(Some("client")));
                continue;
            }
            let access = asked.access();
            let Some(request) = session.request_ahead(Some(tool), access, &asked.path) else { continue };
            if Asked::of(&request) != *asked {
                return Ok(Settled::AskInstead(request));
            }
            let answer = answer(&request, result, self.offer_session);
            let path = request.path.to_string();
            let settled = session.settle_via(request, answer, i == last && self.fresh, self.via.filter(|_| i == last))?;
            let allowed = || {
                let sandbox = session.sandbox().ok();
                let list = sandbox.as_ref().map(|s| if access == Access::Read { s.readable_list() } else { s.writable_list() });
                list.unwrap_or_default()
            };
            match settled {
                Answer::Allow { .. } => {}
                Answer::Deny => return Ok(Settled::Refused(Denial::Declined { access, path, allowed: allowed() })),
                Answer::Unanswered | Answer::Deferred => return Ok(Settled::Refused(Denial::NeedsApproval { access, path, allowed: allowed() })),
            }
        }
        Ok(Settled::Granted)
    }

    fn asked(&self) -> impl Iterator<Item = &(Asked, ElicitResult)> {
        self.rounds.iter()
    }

    /// These answers and, for `asked`, the person's `decision` at the
    /// console, as the form's answer would say it (`None`: unanswered).
    pub fn and_at_console(&self, asked: Asked, decision: Option<warden_console::Decision>) -> Answered {
        let folder = |i: usize| asked.choices.get(i).and_then(|c| c.split('\0').next()).map(|p| shown(p).into_owned());
        let accept = |decision: &str, i: usize| {
            let content = serde_json::json!({ "decision": decision, "folder": folder(i) });
            ElicitResult::new(ElicitationAction::Accept).with_content(content)
        };
        let result = match decision {
            Some(warden_console::Decision::Once { folder }) => accept("once", folder),
            Some(warden_console::Decision::Session { folder }) => accept("session", folder),
            Some(warden_console::Decision::Deny) => ElicitResult::new(ElicitationAction::Decline),
            None => ElicitResult::new(ElicitationAction::Cancel),
        };
        let mut rounds = self.rounds.clone();
        rounds.push((asked, result));
        Answered { rounds, fresh: true, offer_session: self.offer_session, via: Some("console") }
    }

    /// These answers without the one given to an earlier form of `request`
    /// (the same access to the same path, shown before its host path or
    /// folders changed): the new question takes its place, once.
    pub fn without_earlier_form_of(&self, request: &Request) -> Answered {
        let now = Asked::of(request);
        let rounds = self.rounds.iter().filter(|(asked, _)| asked.access != now.access || asked.path != now.path).cloned().collect();
        Answered { rounds, ..self.clone() }
    }
}

/// The request a call's result asked about, sealed into its `requestState`:
/// bound to the tool, its exact arguments and the client that was asked,
/// with the answers of the earlier rounds.
#[derive(Serialize, Deserialize)]
struct Pending {
    tool: String,
    /// A digest of its exact arguments (a large write stays a small state).
    arguments: String,
    /// Who was asked: this connection or session, or, over stateless HTTP,
    /// a digest of the token the client sent.
    client: String,
    /// The questions of this call so far; the last is the one this state asks.
    asked: Vec<Asked>,
    /// The answers to all but the last.
    answers: Vec<ElicitResult>,
    offer_session: bool,
    /// The last is asked at the console, this question there (the client was
    /// sent its page): the answer comes from the console, not the client.
    #[serde(default)]
    console: Option<u64>,
    /// Random: an answered state is spent, and a second answer with it refused.
    nonce: String,
}

/// What a retried call's state gives.
pub enum Retried {
    /// The answers so far, this round's among them.
    Answered(Answered),
    /// The last question is the console's `question`: its answer comes
    /// from there, after `before` (the earlier rounds, `asked` the last).
    AtConsole { question: u64, before: Answered, asked: Asked },
    /// Not answerable by this client, or not answered: the call runs as one
    /// without a state would (no earlier answer is granted again), and the
    /// state is not spent.
    AskAgain,
}

/// Seals and opens the state of 2026-07-28 approvals.
pub struct StateSeal {
    codec: RequestStateCodec,
    /// Nonces of the states answered, until they would have expired anyway.
    spent: Mutex<std::collections::HashMap<String, std::time::Instant>>,
}

impl StateSeal {
    /// With a key of the process's own: states outlive neither it nor a restart.
    pub fn new() -> Result<StateSeal, String> {
        let codec = RequestStateCodec::try_new(random::<32>()?.to_vec()).map_err(|e| e.to_string())?;
        Ok(StateSeal { codec, spent: Mutex::default() })
    }

    /// The call's result asking about `request`, with `before` (the answers
    /// of the earlier rounds) carried in its state: by a form, or, given the
    /// console's question (its id and page), by sending the person there.
    pub fn ask(&self, call: &Call<'_>, before: Option<&Answered>, request: &Request, console: Option<(u64, String)>) -> Result<InputRequiredResult, String> {
        let params = match &console {
            Some((id, url)) => console_page(*id, url.clone()),
            None => form(request, call.offer_session),
        };
        self.seal(call, before, Asked::of(request), console.map(|(id, _)| id), params)
    }

    /// The call's result asking about a command a rule asks about, by a form.
    pub fn ask_command(&self, call: &Call<'_>, before: Option<&Answered>, request: &CommandRequest) -> Result<InputRequiredResult, String> {
        let offer_session = call.offer_session && !request.session_rules.is_empty();
        self.seal(call, before, Asked::of_command(request), None, command_form(request, offer_session))
    }

    fn seal(&self, call: &Call<'_>, before: Option<&Answered>, now: Asked, console: Option<u64>, params: ElicitRequestParams) -> Result<InputRequiredResult, String> {
        let (asked, answers): (Vec<Asked>, Vec<ElicitResult>) = before.into_iter().flat_map(Answered::asked).cloned().unzip();
        if asked.len() >= MAX_ROUNDS {
            return Err(format!("the call needed more than {MAX_ROUNDS} approvals"));
        }
        let pending = Pending {
            tool: call.tool.to_owned(),
            arguments: blake3::hash(call.arguments.as_bytes()).to_hex().to_string(),
            client: call.client.to_owned(),
            asked: asked.into_iter().chain([now]).collect(),
            answers,
            offer_session: call.offer_session,
            console,
            nonce: random::<16>()?.iter().map(|b| format!("{b:02x}")).collect(),
        };
        let options = SealOptions::new().associated_data(call.tool.as_bytes()).ttl(ANSWER_TIME);
        let state = self.codec.seal_json_with(&pending, &options).map_err(|e| e.to_string())?;
        let mut requests = InputRequests::new();
        requests.insert(KEY.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)));
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// The answers a retried call brings: the state must be ours, fresh, for
    /// this very tool and arguments, unspent (a forged, stale or spent one is
    /// an error, the refusal of today), and this client's.
    pub fn answered(
        &self,
        call: &Call<'_>,
        state: &str,
        responses: Option<&std::collections::BTreeMap<String, serde_json::Value>>,
    ) -> Result<Retried, String> {
        let refused = || "this call's approval state is not valid; call the tool again without it".to_owned();
        let pending: Pending = self.codec.open_json_with(state, call.tool.as_bytes()).map_err(|_| refused())?;
        if pending.tool != call.tool || pending.arguments != blake3::hash(call.arguments.as_bytes()).to_hex().as_str() || pending.answers.len() + 1 != pending.asked.len() {
            return Err(refused());
        }
        // Another client's question, or a retry without an answer: asked
        // again from the start, as if it came without a state (which stays
        // good), so that no earlier "once" is granted again by a replay.
        if pending.client != call.client {
            return Ok(Retried::AskAgain);
        }
        let Some(result) = responses.and_then(|r| r.get(KEY)).and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok()) else {
            return Ok(Retried::AskAgain);
        };
        if !self.spend(&pending.nonce) {
            return Err(refused());
        }
        let offer_session = pending.offer_session;
        // The person went to the console's page: the answer is there.
        if let (Some(question), ElicitationAction::Accept) = (pending.console, &result.action) {
            let mut asked = pending.asked;
            let last = asked.pop().expect("checked: one more asked than answered");
            let rounds = asked.into_iter().zip(pending.answers).collect();
            return Ok(Retried::AtConsole { question, before: Answered { rounds, fresh: false, offer_session, via: None }, asked: last });
        }
        let rounds = pending.asked.into_iter().zip(pending.answers.into_iter().chain([result])).collect();
        Ok(Retried::Answered(Answered { rounds, fresh: true, offer_session, via: None }))
    }

    /// Whether `nonce` was not spent yet; it is now.
    fn spend(&self, nonce: &str) -> bool {
        let now = std::time::Instant::now();
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        spent.retain(|_, at| now.duration_since(*at) < ANSWER_TIME);
        spent.insert(nonce.to_owned(), now).is_none()
    }
}

/// One 2026-07-28 call, as its state is bound to it.
pub struct Call<'a> {
    pub tool: &'a str,
    /// Its exact arguments, as JSON.
    pub arguments: &'a str,
    /// Who is asked (see [`Pending::client`]).
    pub client: &'a str,
    /// Whether a grant for the session can outlive the call.
    pub offer_session: bool,
}

pub(crate) fn random<const N: usize>() -> Result<[u8; N], String> {
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use serde_json::json;
    use warden_fs::approval::{GrantDir, Reason};
    use warden_policy::VPath;

    use super::*;

    fn request() -> Request {
        let folder = |p: &str| GrantDir { path: VPath::parse(p, warden_policy::Namespace::Root).unwrap(), host: PathBuf::from(format!("/h{p}")) };
        Request {
            access: Access::Write,
            path: VPath::parse("/portfolio/a.md", warden_policy::Namespace::Root).unwrap(),
            host_path: PathBuf::from("/h/portfolio/a.md"),
            reason: Reason::MountRule { mount: VPath::parse("/portfolio", warden_policy::Namespace::Root).unwrap() },
            choices: vec![folder("/portfolio")],
            tool: Some("write_file".into()),
            worker: None,
            client: None,
        }
    }

    fn responses(decision: &str) -> BTreeMap<String, serde_json::Value> {
        BTreeMap::from([(KEY.to_owned(), json!({ "action": "accept", "content": { "decision": decision, "folder": "/portfolio" } }))])
    }

    #[test]
    fn a_state_answers_only_for_the_client_that_was_asked_and_only_once() {
        let seal = StateSeal::new().unwrap();
        let alice = Call { tool: "write_file", arguments: "{}", client: "client-1", offer_session: true };
        let state = seal.ask(&alice, None, &request(), None).unwrap().request_state.unwrap();
        // Another client's answer is no answer: asked again, and the state is not spent by it.
        let mallory = Call { client: "token:beef", ..alice };
        assert!(matches!(seal.answered(&mallory, &state, Some(&responses("once"))), Ok(Retried::AskAgain)));
        // No answer at all asks again, and spends nothing either.
        assert!(matches!(seal.answered(&alice, &state, None), Ok(Retried::AskAgain)));
        assert!(matches!(seal.answered(&alice, &state, Some(&responses("once"))), Ok(Retried::Answered(_))));
        assert!(seal.answered(&alice, &state, Some(&responses("once"))).is_err(), "a spent state answered twice");
        // Another tool's or other arguments' state is refused.
        let other = Call { arguments: "{\"path\":\"/portfolio/b.md\"}", ..alice };
        let state = seal.ask(&alice, None, &request(), None).unwrap().request_state.unwrap();
        assert!(seal.answered(&other, &state, Some(&responses("once"))).is_err());
    }

    #[test]
    fn for_this_session_counts_only_where_it_was_offered() {
        let result = |decision: &str| ElicitResult::new(ElicitationAction::Accept).with_content(responses(decision)[KEY]["content"].clone());
        assert_eq!(answer(&request(), &result("session"), true), Answer::Allow { scope: Scope::Session, choice: 0 });
        assert_eq!(answer(&request(), &result("session"), false), Answer::Unanswered);
        assert_eq!(answer(&request(), &result("once"), false), Answer::Allow { scope: Scope::Once, choice: 0 });
        let offered = |session: bool| {
            let ElicitRequestParams::FormElicitationParams { requested_schema, .. } = form(&request(), session) else { panic!() };
            serde_json::to_value(requested_schema).unwrap()["properties"]["decision"]["oneOf"].as_array().unwrap().len()
        };
        assert_eq!((offered(true), offered(false)), (3, 2));
    }
}
