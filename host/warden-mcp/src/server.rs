//! The MCP server: one `WardenMcp` per client connection, sharing the
//! catalogue (which `--watch` may swap) and the call slots.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, ServerNotification, SubscriptionFilter,
    Tool, ToolListChangedNotification,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use tokio::sync::{mpsc, watch, Semaphore};
use warden_fs::approval::{Approver, DenyAll};

use crate::calls::{blocking, can_elicit, in_session, run_work, Asking, ClientSession, Watchers};
use crate::catalogue::{Catalogue, Offer};
use crate::elicit::{asking_while, Deferring, Eliciting, Question, StateSeal};
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
}

/// One client's approval sessions, one per worker used, for one catalogue.
#[derive(Default)]
struct Sessions {
    generation: u64,
    by_worker: HashMap<Option<String>, Arc<ClientSession>>,
}

/// One client's view of the server: the shared catalogue and its own approvals.
#[derive(Clone)]
pub struct WardenMcp {
    shared: Arc<Shared>,
    sessions: Arc<Mutex<Sessions>>,
}

impl WardenMcp {
    /// The server for its first client. `list_changes`: the catalogue may be
    /// swapped later ([`WardenMcp::reload`]). Calls beyond `max_concurrent` wait.
    pub fn new(offer: Offer, max_concurrent: usize, list_changes: bool) -> Result<WardenMcp, String> {
        let shared = Shared {
            catalogue: RwLock::new(Arc::new(Catalogue::new(offer)?)),
            generation: watch::Sender::new(0),
            peers: Mutex::default(),
            list_changes,
            seal: StateSeal::new()?,
            slots: Arc::new(Semaphore::new(max_concurrent.max(1))),
        };
        WardenMcp::for_client(Arc::new(shared))
    }

    /// Another client of the same server: the same tools, its own approvals.
    pub fn another_client(&self) -> Result<WardenMcp, String> {
        WardenMcp::for_client(self.shared.clone())
    }

    /// Cheap: over stateless HTTP every request is a new client. Its sessions
    /// are made when a call first needs one.
    fn for_client(shared: Arc<Shared>) -> Result<WardenMcp, String> {
        Ok(WardenMcp { shared, sessions: Arc::default() })
    }

    /// Swaps in a new offer (a changed policy) and tells the clients. Their
    /// grants end with the old one: sessions are made anew from the new policy.
    pub async fn reload(&self, offer: Offer) -> Result<(), String> {
        let catalogue = Catalogue::new(offer)?;
        *self.shared.catalogue.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(catalogue);
        self.shared.generation.send_modify(|g| *g += 1);
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
    fn session(&self, catalogue: &Catalogue, worker: Option<&str>) -> Result<Arc<ClientSession>, String> {
        let generation = *self.shared.generation.borrow();
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if sessions.generation != generation {
            *sessions = Sessions { generation, by_worker: HashMap::new() };
        }
        let key = worker.map(str::to_owned);
        if let Some(session) = sessions.by_worker.get(&key) {
            return Ok(session.clone());
        }
        let session = Arc::new(ClientSession::new((catalogue.offer.new_session)(worker)?));
        sessions.by_worker.insert(key, session.clone());
        Ok(session)
    }

    /// Who may answer this call's approval requests: answers given in
    /// advance, else the person at the client (by elicitation now, or, for
    /// 2026-07-28 clients, in the call's result), else nobody.
    fn asking(&self, catalogue: &Catalogue, context: &RequestContext<RoleServer>, deferring: Option<Deferring>, questions: mpsc::Sender<Question>) -> Asking {
        let client = context.client_info().map(|info| info.name);
        if catalogue.offer.answers_in_advance {
            return Asking { approver: None, client, waits_for_client: false };
        }
        let (approver, waits_for_client): (Box<dyn Approver>, bool) = match deferring {
            Some(deferring) => (Box::new(deferring), false),
            None if can_elicit(context) => (Box::new(Eliciting { questions }), true),
            None => (Box::new(DenyAll), false),
        };
        Asking { approver: Some(approver), client, waits_for_client }
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
        let internal = |e: String| ErrorData::internal_error(e, None);
        if let Some(tool) = FileTool::from_name(&name) {
            let args = match tool.args(request.arguments) {
                Ok(args) => args,
                Err(message) => return Ok(refused(message)),
            };
            let session = self.session(&catalogue, catalogue.offer.worker.as_deref()).map_err(internal)?;
            let short = tool.is_short() && !asking.waits_for_client;
            let outcome = run_work(short, move || {
                in_session(&session, asking, |session| session.attempt(Some(tool.name()), |sandbox| tool.run(sandbox, &args)))
            })
            .await?;
            return Ok(match outcome.and_then(|attempted| attempted) {
                Ok(Ok(value)) => CallToolResult::structured(value),
                Ok(Err(e)) | Err(e) => refused(e.to_string()),
            });
        }
        if name == shell_tool::NAME {
            return blocking(move || catalogue.offer.shell.as_ref().expect("a listed run_command").call(request.arguments, &cancel)).await;
        }
        let components = catalogue.offer.components.as_ref().expect("a component tool has its components");
        let worker = components.get(&name).and_then(crate::Components::worker_of).map(str::to_owned);
        let session = self.session(&catalogue, worker.as_deref()).map_err(internal)?;
        blocking(move || {
            let components = catalogue.offer.components.as_ref().expect("a component tool has its components");
            let tool = components.get(&name).expect("a listed tool");
            in_session(&session, asking, |session| components.call(tool, session, request.arguments, cancel)).unwrap_or_else(|e| refused(e.to_string()))
        })
        .await
    }
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
        let catalogue = self.catalogue();
        let Some(tool) = catalogue.get(&request.name) else {
            return Err(ErrorData::invalid_params(format!("unknown tool '{}'", request.name), None));
        };
        let name = tool.name.to_string();
        let seal = &self.shared.seal;
        let in_result = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        // What a sealed question is bound to; only 2026-07-28 calls ask in their result.
        let arguments = if in_result { serde_json::Value::Object(request.arguments.clone().unwrap_or_default()).to_string() } else { String::new() };
        let asked = Arc::new(Mutex::new(None));
        let deferring = match (in_result, &request.request_state) {
            (false, _) => None,
            // A client that takes no forms is never asked: it gets today's refusal.
            (true, None) if !can_elicit(&context) => None,
            (true, None) => Some(Deferring { answered: None, asked: asked.clone() }),
            (true, Some(state)) => match seal.answered(&name, &arguments, state, request.input_responses.as_ref()) {
                Ok(answered) => Some(Deferring { answered: Some(answered), asked: asked.clone() }),
                Err(message) => return Ok(refused(message).into()),
            },
        };
        let (questions, mut to_ask) = mpsc::channel(1);
        let asking = self.asking(&catalogue, &context, deferring, questions);
        // Waits for a slot; a call cancelled meanwhile never starts.
        let _slot = tokio::select! {
            slot = self.shared.slots.clone().acquire_owned() => slot.map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
            () = context.ct.cancelled() => return Ok(refused("the call was cancelled".to_owned()).into()),
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let _watchers = Watchers::start(&context, cancel.clone());
        let result = asking_while(self.run(catalogue, name.clone(), request, asking, cancel), &mut to_ask, &context.peer).await?;
        // A 2026-07-28 call that needs a person's answer returns the question.
        if let Some(question) = asked.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let ask = seal.ask(&name, &arguments, &question).map_err(|e| ErrorData::internal_error(e, None))?;
            return Ok(ask.into());
        }
        Ok(result.into())
    }
}
