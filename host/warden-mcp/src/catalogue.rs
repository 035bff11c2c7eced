//! What the server offers, and its tool list, checked once per policy.

use rmcp::model::Tool;
use warden_fs::approval::ApprovalSession;
use warden_policy::Policy;
use warden_wasm::Runtime;

use crate::component_tools::{Components, FetchComponent};
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
    /// Where a person is asked: the client's form, the console, or both.
    pub ask_via: warden_policy::AskVia,
    pub new_session: SessionFactory,
}

/// An offer with its tool list.
pub struct Catalogue {
    pub offer: Offer,
    /// Which policy this is: 0 at start, one more at each reload.
    pub generation: u64,
    pub tools: Vec<Tool>,
    /// Said to each agent at the start: where its files are.
    pub instructions: String,
}

impl Catalogue {
    /// Two tools with one name is an error naming both.
    pub fn new(offer: Offer, generation: u64) -> Result<Catalogue, String> {
        check_names(offered_names(offer.file_tools, offer.shell.is_some(), offer.components.as_ref()))?;
        let mut tools: Vec<Tool> = Vec::new();
        if offer.file_tools {
            tools.extend(FileTool::ALL.iter().map(|t| t.definition()));
        }
        if let Some(shell) = &offer.shell {
            tools.push(shell.definition.clone());
        }
        if let Some(components) = &offer.components {
            tools.extend(components.tools.iter().map(|t| t.definition.clone()));
        }
        // A session as a new client gets one: the sandbox in effect before any grant.
        let session = (offer.new_session)(offer.worker.as_deref())?;
        let sandbox = session.sandbox().map_err(|e| e.to_string())?;
        let instructions = format!(
            "Warden sandbox. Paths are virtual: '/mount/path'. Readable paths: {}. Writable paths: {}.",
            sandbox.readable_list(),
            sandbox.writable_list()
        );
        Ok(Catalogue { offer, generation, tools, instructions })
    }

    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// The built-in tools offered, by name, each with where it comes from.
fn builtin_names(file_tools: bool, shell: bool) -> Vec<(String, String)> {
    let mut names = Vec::new();
    if file_tools {
        names.extend(FileTool::ALL.iter().map(|t| (t.name().to_owned(), "a file tool".to_owned())));
    }
    if shell {
        names.push((crate::shell_tool::NAME.to_owned(), "the shell tool".to_owned()));
    }
    names
}

/// The names an offer lists, built-ins first, each with where it comes from.
fn offered_names(file_tools: bool, shell: bool, components: Option<&Components>) -> Vec<(String, String)> {
    let tools = components.map(|c| c.tools.as_slice()).unwrap_or_default();
    builtin_names(file_tools, shell).into_iter().chain(tools.iter().map(|t| (t.definition.name.to_string(), t.origin()))).collect()
}

/// Two tools with one name is an error naming where both come from.
fn check_names(named: Vec<(String, String)>) -> Result<(), String> {
    for (i, (name, origin)) in named.iter().enumerate() {
        if let Some((_, first)) = named[..i].iter().find(|(n, _)| n == name) {
            return Err(format!("two tools are named '{name}': {first} and {origin}"));
        }
    }
    Ok(())
}

/// What `warden mcp` checks before it serves, for `warden check`: loads the
/// components `policy` declares and checks their tools' names against each
/// other and the built-in tools. A component refused for its digest is in
/// [`Components::refused`].
pub fn check_tools(policy: &Policy, runtime: Runtime, fetch: FetchComponent<'_>) -> Result<Components, String> {
    let components = Components::load(policy, runtime, fetch)?;
    check_names(offered_names(policy.mcp.file_tools, policy.shell_section, Some(&components)))?;
    Ok(components)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(n, o)| (n.to_string(), o.to_string())).collect()
    }

    #[test]
    fn keys_and_tools_that_join_into_one_name_are_a_clash_naming_both() {
        let clash = named(&[("read_file", "a file tool"), ("a___b", "the tool '_b' of component 'a'"), ("a___b", "the tool 'b' of component 'a_'")]);
        assert_eq!(check_names(clash), Err("two tools are named 'a___b': the tool '_b' of component 'a' and the tool 'b' of component 'a_'".to_owned()));
    }

    #[test]
    fn a_component_tool_cannot_take_a_built_in_name() {
        let mut offered = builtin_names(true, true);
        offered.push(("run_command".into(), "the tool 'run_command' of component 'x'".into()));
        assert_eq!(
            check_names(offered),
            Err("two tools are named 'run_command': the shell tool and the tool 'run_command' of component 'x'".to_owned())
        );
        assert_eq!(check_names(builtin_names(true, true)), Ok(()));
    }
}
