//! The MCP server: one `WardenMcp` per client connection, sharing the tools.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use warden_fs::approval::ApprovalSession;

use crate::component_tools::Components;
use crate::file_tools::FileTool;
use crate::shell_tool::{self, ShellTool};

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
    pub new_session: SessionFactory,
}

/// The offer with its tool list, checked once.
struct Catalogue {
    offer: Offer,
    tools: Vec<Tool>,
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
        WardenMcp::for_client(Arc::new(Catalogue { offer, tools }))
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

    async fn call_file_tool(&self, tool: FileTool, request: CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let args = match tool.args(request.arguments) {
            Ok(args) => args,
            Err(message) => return Ok(refused(message)),
        };
        let session = self.session(self.catalogue.offer.worker.as_deref()).map_err(|e| ErrorData::internal_error(e, None))?;
        let outcome = blocking(move || {
            let mut session = session.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            session.attempt(Some(tool.name()), |sandbox| tool.run(sandbox, &args))
        })
        .await?;
        Ok(match outcome {
            Ok(Ok(value)) => CallToolResult::structured(value),
            Ok(Err(e)) | Err(e) => refused(e.to_string()),
        })
    }

    async fn call_component_tool(&self, name: String, request: CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let catalogue = self.catalogue.clone();
        let worker = catalogue.offer.components.as_ref().and_then(|c| c.get(&name)).and_then(Components::worker_of).map(str::to_owned);
        let session = self.session(worker.as_deref()).map_err(|e| ErrorData::internal_error(e, None))?;
        blocking(move || {
            let components = catalogue.offer.components.as_ref().expect("a component tool has its components");
            let tool = components.get(&name).expect("a listed tool");
            let mut session = session.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            components.call(tool, &mut session, request.arguments)
        })
        .await
    }
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.get_tool(&request.name) else {
            return Err(ErrorData::invalid_params(format!("unknown tool '{}'", request.name), None));
        };
        let result = match FileTool::from_name(&tool.name) {
            Some(file_tool) => self.call_file_tool(file_tool, request).await?,
            None if tool.name == shell_tool::NAME => {
                let catalogue = self.catalogue.clone();
                blocking(move || catalogue.offer.shell.as_ref().expect("a listed run_command").call(request.arguments)).await?
            }
            None => self.call_component_tool(tool.name.to_string(), request).await?,
        };
        Ok(result.into())
    }
}
