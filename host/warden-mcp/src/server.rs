//! The MCP server: one `WardenMcp` per client connection, sharing the tools.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use warden_fs::approval::{ApprovalSession, Approver, DenyAll};

use crate::component_tools::Components;
use crate::elicit::{Deferring, Eliciting, StateSeal};
use crate::file_tools::FileTool;
use crate::shell_tool::{self, ShellTool};

/// How often a long call reports progress, from its first second on.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Makes a fresh approval session, for a worker (or the program when `None`),
/// for each client connection that needs one.
pub type SessionFactory = Box<dyn Fn(Option<&str>) -> Result<ApprovalSession, String> + Send + Sync>;

/// What the server offers, the same for every client.
pub struct Offer {
    pub file_tools: bool,
    /// Whose sandbox the file tools use: `--worker`, or the program's.
    pub worker: Option<String>,
    pub components: Option<Components>,
    /// `run_command`, when the policy has `shell:`.
    pub shell: Option<ShellTool>,
    /// `--approve`/`--answers` were given: the sessions' own approver answers,
    /// and the person at the client is never asked.
    pub answers_in_advance: bool,
    /// Tool calls that may run at once; the rest wait.
    pub max_concurrent: usize,
    pub new_session: SessionFactory,
}

/// The offer with its tool list, checked once.
struct Catalogue {
    offer: Offer,
    tools: Vec<Tool>,
    seal: StateSeal,
    /// One permit per call that may run; shared by every client.
    slots: Arc<Semaphore>,
}

/// Who answers the approval requests of one call, and the client's name.
struct Asking {
    approver: Option<Box<dyn Approver>>,
    client: Option<String>,
}

/// One client's view of the server: the shared offer and its own approvals.
#[derive(Clone)]
pub struct WardenMcp {
    catalogue: Arc<Catalogue>,
    /// Said to the agent at the start: where its files are.
    instructions: Arc<String>,
    /// This client's approval sessions, one per worker used.
    sessions: Arc<Mutex<HashMap<Option<String>, Arc<Mutex<ApprovalSession>>>>>,
}

impl WardenMcp {
    /// The server for its first client. Two tools with one name is an error naming both.
    pub fn new(offer: Offer) -> Result<WardenMcp, String> {
        let mut tools: Vec<Tool> = Vec::new();
        if offer.file_tools {
            tools.extend(FileTool::ALL.iter().map(|t| t.definition()));
        }
        if let Some(shell) = &offer.shell {
            tools.push(shell.definition.clone());
        }
        if let Some(components) = &offer.components {
            for tool in &components.tools {
                if let Some(other) = tools.iter().find(|t| t.name == tool.definition.name) {
                    return Err(format!("two tools are named '{}': {} and {}", other.name, describe(other), describe(&tool.definition)));
                }
                tools.push(tool.definition.clone());
            }
        }
        let slots = Arc::new(Semaphore::new(offer.max_concurrent.max(1)));
        WardenMcp::for_client(Arc::new(Catalogue { offer, tools, seal: StateSeal::new()?, slots }))
    }

    /// Another client of the same server: the same tools, its own approvals.
    pub fn another_client(&self) -> Result<WardenMcp, String> {
        WardenMcp::for_client(self.catalogue.clone())
    }

    fn for_client(catalogue: Arc<Catalogue>) -> Result<WardenMcp, String> {
        let client = WardenMcp { catalogue, instructions: Arc::default(), sessions: Arc::default() };
        let session = client.session(client.catalogue.offer.worker.as_deref())?;
        let sandbox = session.lock().unwrap_or_else(|p| p.into_inner()).sandbox().map_err(|e| e.to_string())?;
        let instructions = format!(
            "Warden sandbox. Paths are virtual: '/mount/path'. Readable paths: {}. Writable paths: {}.",
            sandbox.readable_list(),
            sandbox.writable_list()
        );
        Ok(WardenMcp { instructions: Arc::new(instructions), ..client })
    }

    /// This client's session for `worker`, made when first needed.
    fn session(&self, worker: Option<&str>) -> Result<Arc<Mutex<ApprovalSession>>, String> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(session) = sessions.get(&worker.map(str::to_owned)) {
            return Ok(session.clone());
        }
        let session = Arc::new(Mutex::new((self.catalogue.offer.new_session)(worker)?));
        sessions.insert(worker.map(str::to_owned), session.clone());
        Ok(session)
    }

    async fn call_file_tool(&self, tool: FileTool, request: CallToolRequestParams, asking: Asking) -> Result<CallToolResult, ErrorData> {
        let args = match tool.args(request.arguments) {
            Ok(args) => args,
            Err(message) => return Ok(refused(message)),
        };
        let session = self.session(self.catalogue.offer.worker.as_deref()).map_err(|e| ErrorData::internal_error(e, None))?;
        let outcome = blocking(move || {
            in_session(&session, asking, |session| session.attempt(Some(tool.name()), |sandbox| tool.run(sandbox, &args)))
        })
        .await?;
        Ok(match outcome {
            Ok(Ok(value)) => CallToolResult::structured(value),
            Ok(Err(e)) | Err(e) => refused(e.to_string()),
        })
    }

    async fn call_component_tool(
        &self,
        name: String,
        request: CallToolRequestParams,
        asking: Asking,
        cancel: Arc<AtomicBool>,
    ) -> Result<CallToolResult, ErrorData> {
        let catalogue = self.catalogue.clone();
        let worker = catalogue.offer.components.as_ref().and_then(|c| c.get(&name)).and_then(Components::worker_of).map(str::to_owned);
        let session = self.session(worker.as_deref()).map_err(|e| ErrorData::internal_error(e, None))?;
        blocking(move || {
            let components = catalogue.offer.components.as_ref().expect("a component tool has its components");
            let tool = components.get(&name).expect("a listed tool");
            in_session(&session, asking, |session| components.call(tool, session, request.arguments, cancel))
        })
        .await
    }

    /// Who may answer this call's approval requests: answers given in
    /// advance, else the person at the client (by elicitation now, or, for
    /// 2026-07-28 clients, in the call's result), else nobody.
    fn asking(&self, context: &RequestContext<RoleServer>, deferring: Option<Deferring>) -> Asking {
        let client = context.client_info().map(|info| info.name);
        if self.catalogue.offer.answers_in_advance {
            return Asking { approver: None, client };
        }
        let approver: Box<dyn Approver> = match deferring {
            Some(deferring) => Box::new(deferring),
            None if can_elicit(context) => Box::new(Eliciting { peer: context.peer.clone(), runtime: tokio::runtime::Handle::current() }),
            None => Box::new(DenyAll),
        };
        Asking { approver: Some(approver), client }
    }
}

/// What runs beside a call: a cancellation (`notifications/cancelled`, or
/// a closed HTTP stream) sets the call's flag; after a second, progress goes
/// out every second when the client gave a `progressToken`. Stopped on drop.
struct Watchers(Vec<tokio::task::JoinHandle<()>>);

impl Watchers {
    fn start(context: &RequestContext<RoleServer>, cancel: Arc<AtomicBool>) -> Watchers {
        let ct = context.ct.clone();
        let mut tasks = vec![tokio::spawn(async move {
            ct.cancelled().await;
            cancel.store(true, Ordering::Relaxed);
        })];
        if let Some(token) = context.meta.get_progress_token() {
            let peer = context.peer.clone();
            tasks.push(tokio::spawn(async move {
                for seconds in 1u32.. {
                    tokio::time::sleep(PROGRESS_EVERY).await;
                    let mut note = ProgressNotificationParam::new(token.clone(), f64::from(seconds));
                    note.message = Some(format!("running for {seconds} s"));
                    if peer.notify_progress(note).await.is_err() {
                        return;
                    }
                }
            }));
        }
        Watchers(tasks)
    }
}

impl Drop for Watchers {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// Runs `f` on the session with this call's approver and client, then gives
/// the session its own approver back.
fn in_session<T>(session: &Mutex<ApprovalSession>, asking: Asking, f: impl FnOnce(&mut ApprovalSession) -> T) -> T {
    let mut session = session.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    session.set_client(asking.client);
    let own = asking.approver.map(|approver| session.set_approver(approver));
    let out = f(&mut session);
    if let Some(own) = own {
        session.set_approver(own);
    }
    out
}

/// The client takes form elicitations (2025-11-25 capabilities).
fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Runs blocking work (the filesystem, a component) off the async threads.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, ErrorData> {
    tokio::task::spawn_blocking(work).await.map_err(|e| ErrorData::internal_error(format!("the tool stopped: {e}"), None))
}

fn describe(tool: &Tool) -> String {
    match FileTool::from_name(&tool.name) {
        Some(_) => "a file tool".to_owned(),
        None if tool.name == shell_tool::NAME => "the shell tool".to_owned(),
        None => format!("a tool of component '{}'", tool.name.split("__").next().unwrap_or_default()),
    }
}

/// A refusal or failure, as the CLI words it, for the model to read.
pub fn refused(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

impl ServerHandler for WardenMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("warden", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions.as_str())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.catalogue.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.catalogue.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.get_tool(&request.name) else {
            return Err(ErrorData::invalid_params(format!("unknown tool '{}'", request.name), None));
        };
        let name = tool.name.to_string();
        let arguments = serde_json::Value::Object(request.arguments.clone().unwrap_or_default()).to_string();
        let in_result = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let asked = Arc::new(Mutex::new(None));
        let deferring = match (in_result, &request.request_state) {
            (false, _) => None,
            (true, None) => Some(Deferring { answered: None, asked: asked.clone() }),
            (true, Some(state)) => match self.catalogue.seal.answered(&name, &arguments, state, request.input_responses.as_ref()) {
                Ok(answered) => Some(Deferring { answered: Some(answered), asked: asked.clone() }),
                Err(message) => return Ok(refused(message).into()),
            },
        };
        let asking = self.asking(&context, deferring);
        // Waits for a slot; a call cancelled meanwhile never starts.
        let _slot = tokio::select! {
            slot = self.catalogue.slots.clone().acquire_owned() => slot.map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
            () = context.ct.cancelled() => return Ok(refused("the call was cancelled".to_owned()).into()),
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let _watchers = Watchers::start(&context, cancel.clone());
        let result = match FileTool::from_name(&tool.name) {
            Some(file_tool) => self.call_file_tool(file_tool, request, asking).await?,
            None if tool.name == shell_tool::NAME => {
                let catalogue = self.catalogue.clone();
                blocking(move || catalogue.offer.shell.as_ref().expect("a listed run_command").call(request.arguments, &cancel)).await?
            }
            None => self.call_component_tool(name.clone(), request, asking, cancel).await?,
        };
        // A 2026-07-28 call that needs a person's answer returns the question.
        if let Some(question) = asked.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let ask = self.catalogue.seal.ask(&name, &arguments, &question).map_err(|e| ErrorData::internal_error(e, None))?;
            return Ok(ask.into());
        }
        Ok(result.into())
    }
}
