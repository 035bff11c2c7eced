//! What the server offers, and its tool list, checked once per policy.

use rmcp::model::Tool;
use warden_fs::approval::ApprovalSession;

use crate::component_tools::Components;
use crate::file_tools::FileTool;
use crate::shell_tool::ShellTool;

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
    pub new_session: SessionFactory,
}

/// An offer with its tool list.
pub struct Catalogue {
    pub offer: Offer,
    pub tools: Vec<Tool>,
    /// Said to each agent at the start: where its files are.
    pub instructions: String,
}

impl Catalogue {
    /// Two tools with one name is an error naming both.
    pub fn new(offer: Offer) -> Result<Catalogue, String> {
        let mut tools: Vec<Tool> = Vec::new();
        // Where each tool comes from, to name both of a clash.
        let mut origins: Vec<String> = Vec::new();
        if offer.file_tools {
            tools.extend(FileTool::ALL.iter().map(|t| t.definition()));
            origins.resize(tools.len(), "a file tool".to_owned());
        }
        if let Some(shell) = &offer.shell {
            tools.push(shell.definition.clone());
            origins.push("the shell tool".to_owned());
        }
        if let Some(components) = &offer.components {
            for tool in &components.tools {
                if let Some(i) = tools.iter().position(|t| t.name == tool.definition.name) {
                    return Err(format!("two tools are named '{}': {} and {}", tool.definition.name, origins[i], tool.origin()));
                }
                tools.push(tool.definition.clone());
                origins.push(tool.origin());
            }
        }
        // A session as a new client gets one: the sandbox in effect before any grant.
        let session = (offer.new_session)(offer.worker.as_deref())?;
        let sandbox = session.sandbox().map_err(|e| e.to_string())?;
        let instructions = format!(
            "Warden sandbox. Paths are virtual: '/mount/path'. Readable paths: {}. Writable paths: {}.",
            sandbox.readable_list(),
            sandbox.writable_list()
        );
        Ok(Catalogue { offer, tools, instructions })
    }

    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }
}
