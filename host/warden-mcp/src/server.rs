//! The MCP server: one `WardenMcp` per client connection, sharing the
//! catalogue (which `--watch` may swap) and the call slots.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, ServerNotification, SubscriptionFilter,
    Tool, ToolListChangedNotification,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use tokio::sync::{mpsc, watch, Semaphore};
use warden_fs::approval::{Approver, CommandLine, CommandVerdict, DenyAll};
use warden_policy::{CommandRules, Network};

use crate::calls::{blocking, can_elicit, can_open_urls, in_session, run_work, Asking, ClientSession, Ran, Watchers};
use crate::catalogue::{Catalogue, Offer};
use crate::elicit::{asking_while, Answered, Call, ClientWay, Deferred, Deferring, Eliciting, Question, Retried, Slot, StateSeal, Waiting};
use crate::file_tools::FileTool;
use crate::shell_tool;

/// What every client of one server shares.
struct Shared {
    catalogue: RwLock<Arc<Catalogue>>,
    /// Counts catalogue swaps; subscribers of 2026-07-28 wait on it.
    generation: watch::Sender<u64>,
    /// 2025-11-25 clients, told of a swap by `notifications/tools/list_changed`.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Whether the tool list may change (`--watch`), as the capabilities say.
    list_changes: bool,
    seal: StateSeal,
    /// One permit per call that may run, over all clients.
    slots: Arc<Semaphore>,
    /// Numbers the clients, whose questions' states are bound to them.
    clients: AtomicU64,
    /// Warden's own console (`--console`): questions go there too, and it
    /// lists the calls running and the grants in force.
    console: Option<warden_console::Console>,
    /// Questions at the console whose pages 2026-07-28 calls sent their clients.
    parked: crate::parked::Parked,
}

/// One client's approval sessions, one per worker used, and its own
/// container for commands, for one catalogue.
#[derive(Default)]
struct Sessions {
    generation: u64,
    by_worker: HashMap<Option<String>, Arc<ClientSession>>,
    shell: Option<Arc<warden_shell::ShellSandbox>>,
}

/// One client's view of the server: the shared catalogue and its own approvals.
#[derive(Clone)]
pub struct WardenMcp {
    shared: Arc<Shared>,
    sessions: Arc<Mutex<Sessions>>,
    /// This connection or HTTP session, for the states of its questions.
    client: Arc<str>,
    /// The client's number: its container's name has it.
    number: u64,
}

impl WardenMcp {
    /// The server for its first client. `list_changes`: the catalogue may be
    /// swapped later ([`WardenMcp::reload`]). Calls beyond `max_concurrent` wait.
    pub fn new(offer: Offer, max_concurrent: usize, list_changes: bool) -> Result<WardenMcp, String> {
        let shared = Shared {
            catalogue: RwLock::new(Arc::new(Catalogue::new(offer, 0)?)),
            generation: watch::Sender::new(0),
            peers: Mutex::default(),
            list_changes,
            seal: StateSeal::new()?,
            slots: Arc::new(Semaphore::new(max_concurrent.max(1))),
            clients: AtomicU64::new(0),
            console: None,
            parked: crate::parked::Parked::default(),
        };
        WardenMcp::for_client(Arc::new(shared))
    }

    /// Puts questions on `console` too, and lists calls and grants there.
    /// Before the first client is served.
    pub fn with_console(mut self, console: warden_console::Console) -> WardenMcp {
        Arc::get_mut(&mut self.shared).expect("a console is given before any client is served").console = Some(console);
        self
    }

    /// Another client of the same server: the same tools, its own approvals.
    pub fn another_client(&self) -> Result<WardenMcp, String> {
        WardenMcp::for_client(self.shared.clone())
    }

    /// Cheap: over stateless HTTP every request is a new client. Its sessions
    /// are made when a call first needs one.
    fn for_client(shared: Arc<Shared>) -> Result<WardenMcp, String> {
        let number = shared.clients.fetch_add(1, Ordering::Relaxed);
        Ok(WardenMcp { shared, sessions: Arc::default(), client: format!("client-{number}").into(), number })
    }

    /// Swaps in a new offer (a changed policy) and tells the clients. Their
    /// grants end with the old one: sessions are made anew from the new policy.
    pub async fn reload(&self, offer: Offer) -> Result<(), String> {
        let generation = *self.shared.generation.borrow() + 1;
        let catalogue = Catalogue::new(offer, generation)?;
        {
            let mut served = self.shared.catalogue.write().unwrap_or_else(|p| p.into_inner());
            *served = Arc::new(catalogue);
            // Under the catalogue's lock: a call sees the new catalogue and generation together.
            self.shared.generation.send_replace(generation);
        }
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.shared.peers.lock().unwrap_or_else(|p| p.into_inner());
            peers.retain(|p| !p.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            if let Err(e) = peer.notify_tool_list_changed().await {
                tracing::debug!("tools/list_changed not delivered: {e}");
            }
        }
        Ok(())
    }

    fn catalogue(&self) -> Arc<Catalogue> {
        self.shared.catalogue.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// This client's session for `worker` under `catalogue`, made when first needed.
    fn session(&self, catalogue: &Catalogue, worker: Option<&str>, client_name: Option<&str>) -> Result<Arc<ClientSession>, String> {
        let mut sessions = self.sessions_under(catalogue)?;
        let key = worker.map(str::to_owned);
        if let Some(session) = sessions.by_worker.get(&key) {
            return Ok(session.clone());
        }
        let session = Arc::new(ClientSession::new((catalogue.offer.new_session)(worker)?, self.label(client_name)));
        if let Some(console) = &self.shared.console {
            let source: Arc<dyn warden_console::GrantSource> = session.clone();
            console.grants_of(Arc::downgrade(&source));
        }
        sessions.by_worker.insert(key, session.clone());
        Ok(session)
    }

    /// The sandbox this client's commands run in, under `catalogue`: made on
    /// its first command when each client has a container of its own.
    fn client_shell(&self, catalogue: &Catalogue, shell: &crate::ShellTool) -> Result<Arc<warden_shell::ShellSandbox>, String> {
        let mut sessions = self.sessions_under(catalogue)?;
        shell.sandbox_for(self.number, &mut sessions.shell)
    }

    /// This client's sessions and container under `catalogue`, the one
    /// served: those of an earlier catalogue go (a reload ends them), and a
    /// catalogue no longer served is refused, so that nothing runs under the
    /// old policy's mounts.
    fn sessions_under(&self, catalogue: &Catalogue) -> Result<std::sync::MutexGuard<'_, Sessions>, String> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if catalogue.generation < sessions.generation || catalogue.generation != *self.shared.generation.borrow() {
            return Err("the policy changed while this call waited; call the tool again".to_owned());
        }
        if sessions.generation != catalogue.generation {
            *sessions = Sessions { generation: catalogue.generation, ..Sessions::default() };
        }
        Ok(sessions)
    }

    /// The client as the console names it: its name and number.
    fn label(&self, name: Option<&str>) -> String {
        // The name is the client's to choose: escaped like a path, and kept short.
        let name: String = warden_policy::shown(name.unwrap_or("a client")).chars().take(80).collect();
        format!("{name} #{}", self.number)
    }

    /// Who may answer this call's approval requests: answers given in
    /// advance, else the person at the client (by elicitation now, or, for
    /// 2026-07-28 clients, in the call's result), else nobody.
    /// `askable`: whether the client's form or the console may be asked.
    fn asking(&self, catalogue: &Catalogue, context: &RequestContext<RoleServer>, how: How, tool: &str, askable: bool) -> Asking {
        let client = context.client_info().map(|info| info.name);
        let tool = tool.to_owned();
        if catalogue.offer.answers_in_advance {
            return Asking { approver: None, client, waits_for_client: false, answered: None, tool };
        }
        let label = self.label(client.as_deref());
        let (approver, waits_for_client, answered): (Box<dyn Approver>, bool, _) = match how {
            How::Deferring { asked, answered } => (Box::new(Deferring { asked: asked.clone() }), false, answered.map(|a| (a, asked))),
            How::Eliciting { questions, cancel } if askable => {
                let offer_session = stateless_http(context).is_none();
                (Box::new(Eliciting { questions, cancel, client: label, via: None, offer_session }), true, None)
            }
            How::Eliciting { .. } | How::Nobody => (Box::new(DenyAll), false, None),
        };
        Asking { approver: Some(approver), client, waits_for_client, answered, tool }
    }

    /// Who this call's client is, for the state of a question its result
    /// asks: this connection or HTTP session, or, over stateless HTTP, where
    /// every request is a client of its own, the token it sent.
    fn client_of(&self, context: &RequestContext<RoleServer>) -> String {
        match stateless_http(context) {
            Some(parts) => crate::token::Token::client_of(parts.headers.get(axum::http::header::AUTHORIZATION)),
            None => self.client.to_string(),
        }
    }

    /// Runs the tool `name`, which `catalogue` lists.
    async fn run(
        &self,
        catalogue: Arc<Catalogue>,
        name: String,
        request: CallToolRequestParams,
        asking: Asking,
        cancel: Arc<AtomicBool>,
    ) -> Result<CallToolResult, ErrorData> {
        if let Some(tool) = FileTool::from_name(&name) {
            let args = match tool.args(request.arguments) {
                Ok(args) => args,
                Err(message) => return Ok(refused(message)),
            };
            let session = match self.session(&catalogue, catalogue.offer.worker.as_deref(), asking.client.as_deref()) {
                Ok(session) => session,
                Err(message) => return Ok(refused(message)),
            };
            let short = tool.is_short() && !asking.waits_for_client && asking.answered.is_none();
            let outcome = run_work(short, move || {
                in_session(&session, asking, |session| session.attempt(Some(tool.name()), |sandbox| tool.run(sandbox, &args)))
            })
            .await?;
            return Ok(match outcome {
                Ok(Ran::Done(Ok(Ok(value)))) => CallToolResult::structured(value),
                Ok(Ran::Done(Ok(Err(e)) | Err(e))) | Err(e) => refused(e.to_string()),
                Ok(Ran::Refused(denial)) => refused(denial.to_string()),
                Ok(Ran::Asking) => refused(String::new()),
            });
        }
        if name == shell_tool::NAME {
            let this = self.clone();
            let judges = catalogue.offer.shell.as_ref().is_some_and(crate::ShellTool::judges);
            let session = match judges.then(|| self.session(&catalogue, catalogue.offer.worker.as_deref(), asking.client.as_deref())).transpose() {
                Ok(session) => session,
                Err(message) => return Ok(refused(message)),
            };
            return blocking(move || {
                let shell = catalogue.offer.shell.as_ref().expect("a listed run_command");
                let asking = Mutex::new(Some(asking));
                let judge = |rules: &CommandRules, command: &str, network: &Network| {
                    let session = session.as_ref().expect("a session where rules judge");
                    let asking = asking.lock().unwrap_or_else(|p| p.into_inner()).take().expect("one judgement per call");
                    let line = CommandLine::Script(command);
                    let judged = in_session(session, asking, |s| {
                        let verdict = s.judge_command(rules, line, Some(shell_tool::NAME), network)?;
                        let writes = matches!(&verdict, CommandVerdict::Run { granted: Some(g) } if !g.write.is_empty());
                        Ok::<_, warden_fs::FsError>((verdict, if writes { Some(s.sandbox()?) } else { None }))
                    });
                    match judged {
                        Ok(Ran::Done(Ok(judged))) => Ok(judged),
                        Ok(Ran::Done(Err(e))) | Err(e) => Err(e.to_string()),
                        Ok(Ran::Refused(denial)) => Err(denial.to_string()),
                        Ok(Ran::Asking) => Err(String::new()),
                    }
                };
                match this.client_shell(&catalogue, shell) {
                    Ok(sandbox) => shell.call(&sandbox, request.arguments, &cancel, &judge),
                    Err(message) => refused(format!("warden: {message}")),
                }
            })
            .await;
        }
        let components = catalogue.offer.components.as_ref().expect("a component tool has its components");
        let worker = components.get(&name).and_then(crate::Components::worker_of).map(str::to_owned);
        let session = match self.session(&catalogue, worker.as_deref(), asking.client.as_deref()) {
            Ok(session) => session,
            Err(message) => return Ok(refused(message)),
        };
        blocking(move || {
            let components = catalogue.offer.components.as_ref().expect("a component tool has its components");
            let tool = components.get(&name).expect("a listed tool");
            match in_session(&session, asking, |session| components.call(tool, session, request.arguments, cancel)) {
                Ok(Ran::Done(result)) => result,
                Ok(Ran::Refused(denial)) => refused(denial.to_string()),
                Ok(Ran::Asking) => refused(String::new()),
                Err(e) => refused(e.to_string()),
            }
        })
        .await
    }
}

/// How the person is asked in one call.
enum How {
    /// 2025-11-25: by `elicitation/create`, if the client takes forms.
    Eliciting { questions: mpsc::Sender<Question>, cancel: Arc<AtomicBool> },
    /// 2026-07-28: in the call's result; with the answers the call brings.
    Deferring { asked: Arc<Mutex<Option<Deferred>>>, answered: Option<Answered> },
    Nobody,
}

/// What a call does, in a few words for the console: its arguments, cut short.
fn detail(request: &CallToolRequestParams) -> String {
    let arguments = serde_json::Value::Object(request.arguments.clone().unwrap_or_default()).to_string();
    let arguments = warden_policy::shown(&arguments).into_owned();
    match arguments.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &arguments[..cut]),
        None => arguments,
    }
}

/// The HTTP request of a stateless call (2026-07-28 over HTTP, no session).
fn stateless_http(context: &RequestContext<RoleServer>) -> Option<&axum::http::request::Parts> {
    context.extensions.get::<axum::http::request::Parts>().filter(|parts| !parts.headers.contains_key("mcp-session-id"))
}

/// A refusal or failure, as the CLI words it, for the model to read.
pub fn refused(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

impl ServerHandler for WardenMcp {
    fn get_info(&self) -> ServerConfig {
        let tools = ServerCapabilities::builder().enable_tools();
        let capabilities = if self.shared.list_changes { tools.enable_tool_list_changed().build() } else { tools.build() };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("warden", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.catalogue().instructions.as_str())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.shared.list_changes {
            self.shared.peers.lock().unwrap_or_else(|p| p.into_inner()).push(context.peer);
        }
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    /// 2026-07-28: a subscription hears of every swap of the tool list.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.shared.generation.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let note = ServerNotification::ToolListChangedNotification(ToolListChangedNotification::default());
                    if let Err(e) = context.sink().send(note).await {
                        tracing::debug!("tools/list_changed not delivered to a subscription: {e}");
                    }
                }
            }
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.catalogue().tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.catalogue().get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let unknown = |name: &str| ErrorData::invalid_params(format!("unknown tool '{name}'"), None);
        if self.catalogue().get(&request.name).is_none() {
            return Err(unknown(&request.name));
        }
        let cancelled = || -> Result<CallToolResponse, ErrorData> { Ok(refused("the call was cancelled".to_owned()).into()) };
        // Waits for a slot; a call cancelled meanwhile never starts.
        let mut slot = Slot { slots: self.shared.slots.clone(), held: None };
        slot.held = Some(tokio::select! {
            slot = slot.slots.clone().acquire_owned() => slot.map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
            () = context.ct.cancelled() => return cancelled(),
        });
        // Taken once the call may run: one that waited through a reload runs under the new policy.
        let catalogue = self.catalogue();
        let Some(tool) = catalogue.get(&request.name) else {
            return Err(unknown(&request.name));
        };
        let name = tool.name.to_string();
        let seal = &self.shared.seal;
        let in_result = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        // What a sealed question is bound to; only 2026-07-28 calls ask in their result.
        let arguments = if in_result { serde_json::Value::Object(request.arguments.clone().unwrap_or_default()).to_string() } else { String::new() };
        let client = self.client_of(&context);
        let call = Call { tool: &name, arguments: &arguments, client: &client, offer_session: stateless_http(&context).is_none() };
        let asked = Arc::new(Mutex::new(None));
        let cancel = Arc::new(AtomicBool::new(false));
        let (questions, mut to_ask) = mpsc::channel(1);
        let via = catalogue.offer.ask_via;
        // Where questions may go: the console, if one is served and `approvals.via` allows it; the client, if it takes forms and may be asked.
        let console = self.shared.console.as_ref().filter(|_| via.console());
        let client_forms = via.client() && can_elicit(&context);
        let client_urls = via.client() && console.is_some() && can_open_urls(&context);
        // A 2026-07-28 call parks its question at the console only while there is room (else it waits there).
        let parks = in_result && client_urls && self.shared.parked.has_room(&client);
        let how = match (in_result, &request.request_state) {
            (false, _) => How::Eliciting { questions, cancel: cancel.clone() },
            // A client that opens URLs is sent the console's page in the call's result.
            (true, None) if parks => How::Deferring { asked: asked.clone(), answered: None },
            // With a console, any other 2026-07-28 call waits for the person there.
            (true, None) if console.is_some() => How::Eliciting { questions, cancel: cancel.clone() },
            // A client that takes no forms is never asked: it gets today's refusal.
            (true, None) if !client_forms => How::Nobody,
            (true, None) => How::Deferring { asked: asked.clone(), answered: None },
            // The client may not answer (`approvals.via: console`): a state it brings, sealed under
            // a policy that let it, is no answer; the person is asked at the console, or nobody is.
            (true, Some(_)) if !via.client() && console.is_some() => How::Eliciting { questions, cancel: cancel.clone() },
            (true, Some(_)) if !via.client() => How::Nobody,
            (true, Some(state)) => match seal.answered(&call, state, request.input_responses.as_ref()) {
                Ok(Retried::Answered(answered)) => How::Deferring { asked: asked.clone(), answered: Some(answered) },
                Ok(Retried::AtConsole { question, before, asked: last }) => {
                    // Waiting for the person is not work: the slot is free meanwhile.
                    slot.held = None;
                    let decision = self.shared.parked.answer(question, &context.ct).await;
                    slot.held = Some(tokio::select! {
                        slot = slot.slots.clone().acquire_owned() => slot.map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
                        () = context.ct.cancelled() => return cancelled(),
                    });
                    How::Deferring { asked: asked.clone(), answered: Some(before.and_at_console(last, decision)) }
                }
                Ok(Retried::AskAgain) => How::Deferring { asked: asked.clone(), answered: None },
                Err(message) => return Ok(refused(message).into()),
            },
        };
        // A call cancelled while it waited (for a slot, or for the person at the console) never
        // runs, even where a wait's select took the slot or the answer that came at the same moment.
        if context.ct.is_cancelled() {
            return cancelled();
        }
        let before = match &how {
            How::Deferring { answered: Some(answered), .. } => Some(answered.clone()),
            _ => None,
        };
        let asking = self.asking(&catalogue, &context, how, &name, client_forms || console.is_some());
        let watchers = Watchers::start(&context, cancel.clone());
        let _listed = self.shared.console.as_ref().map(|console| {
            let call = warden_console::NewCall { client: self.label(asking.client.as_deref()), tool: name.clone(), detail: detail(&request) };
            let (flag, ct) = (cancel.clone(), context.ct.clone());
            console.call_started(call, move || {
                flag.store(true, Ordering::SeqCst);
                ct.cancel();
            })
        });
        let generation = catalogue.generation;
        let current = || *self.shared.generation.borrow() == generation;
        let client_way = match () {
            () if in_result => ClientWay::Not,
            () if client_urls => ClientWay::Url,
            () if client_forms => ClientWay::Form,
            () => ClientWay::Not,
        };
        let waiting = Waiting { peer: &context.peer, client_way, console, cancelled: &context.ct, slot: &mut slot, current: &current, progress: watchers.progress.as_ref() };
        let result = asking_while(self.run(catalogue, name.clone(), request, asking, cancel), &mut to_ask, waiting).await?;
        // A 2026-07-28 call that needs a person's answer returns the question.
        let deferred = asked.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(Deferred::Command(command)) = deferred {
            let ask = seal.ask_command(&call, before.as_ref(), &command).map_err(|e| ErrorData::internal_error(e, None))?;
            return Ok(ask.into());
        }
        if let Some(Deferred::Access(question)) = deferred {
            let before = before.as_ref().map(|b| b.without_earlier_form_of(&question));
            // Put at the console, its page sent to a client that opens URLs.
            let page = console.filter(|_| parks).map(|console| {
                let label = self.label(context.client_info().map(|info| info.name).as_deref());
                self.shared.parked.park(console.ask(warden_console::NewQuestion::of(&question, &label, call.offer_session)), call.client)
            });
            let ask = seal.ask(&call, before.as_ref(), &question, page).map_err(|e| ErrorData::internal_error(e, None))?;
            return Ok(ask.into());
        }
        Ok(result.into())
    }
}
