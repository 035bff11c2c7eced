//! The MCP server: one `WardenMcp` per client connection, sharing the tools.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use warden_fs::approval::ApprovalSession;

use crate::file_tools::FileTool;

/// Makes a fresh approval session for each client connection.
pub type SessionFactory = Box<dyn Fn() -> Result<ApprovalSession, String> + Send + Sync>;

/// What the server offers, the same for every client.
pub struct Offer {
    pub file_tools: bool,
    pub new_session: SessionFactory,
}

/// One client's view of the server: the shared offer and its own approvals.
#[derive(Clone)]
pub struct WardenMcp {
    offer: Arc<Offer>,
    tools: Arc<Vec<Tool>>,
    /// Said to the agent at the start: where its files are.
    instructions: Arc<String>,
    session: Arc<Mutex<ApprovalSession>>,
}

impl WardenMcp {
    pub fn new(offer: Offer) -> Result<WardenMcp, String> {
        let offer = Arc::new(offer);
        let tools = if offer.file_tools { FileTool::ALL.iter().map(|t| t.definition()).collect() } else { Vec::new() };
        WardenMcp::for_client(offer, Arc::new(tools))
    }

    /// Another client of the same server: the same tools, its own approvals.
    pub fn another_client(&self) -> Result<WardenMcp, String> {
        WardenMcp::for_client(self.offer.clone(), self.tools.clone())
    }

    fn for_client(offer: Arc<Offer>, tools: Arc<Vec<Tool>>) -> Result<WardenMcp, String> {
        let session = (offer.new_session)()?;
        let sandbox = session.sandbox().map_err(|e| e.to_string())?;
        let instructions = format!(
            "Warden sandbox. Paths are virtual: '/mount/path'. Readable paths: {}. Writable paths: {}.",
            sandbox.readable_list(),
            sandbox.writable_list()
        );
        Ok(WardenMcp { offer, tools, instructions: Arc::new(instructions), session: Arc::new(Mutex::new(session)) })
    }

    async fn call_file_tool(&self, tool: FileTool, request: CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let args = match tool.args(request.arguments) {
            Ok(args) => args,
            Err(message) => return Ok(refused(message)),
        };
        let session = self.session.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let mut session = session.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            session.attempt(Some(tool.name()), |sandbox| tool.run(sandbox, &args))
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the file tool stopped: {e}"), None))?;
        Ok(match outcome {
            Ok(Ok(value)) => CallToolResult::structured(value),
            Ok(Err(e)) | Err(e) => refused(e.to_string()),
        })
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
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.get_tool(&request.name).and_then(|t| FileTool::from_name(&t.name)) else {
            return Err(ErrorData::invalid_params(format!("unknown tool '{}'", request.name), None));
        };
        Ok(self.call_file_tool(tool, request).await?.into())
    }
}
