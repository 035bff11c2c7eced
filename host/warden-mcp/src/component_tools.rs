//! The tool components a policy declares (`tools:`), loaded once: each tool
//! `T` of component `KEY` is offered as `KEY__T`, run in the sandbox of the
//! component's worker under its limits, one store per call.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use warden_fs::approval::ApprovalSession;
use warden_policy::{ComponentSource, Policy, ToolDecl};
use warden_wasm::{call_approved, Loaded, RunConfig, RunLimits, Runtime, ToolError};

use crate::server::refused;

/// Every model API accepts these names (OpenAI's rule is the narrowest).
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// One tool of one component, as offered.
pub struct ComponentTool {
    pub definition: Tool,
    /// The component's own name for it.
    tool: String,
    /// Its input schema, compiled: arguments are checked before the component runs.
    schema: jsonschema::Validator,
    component: Arc<Component>,
}

impl ComponentTool {
    /// The key of the component it belongs to (`tools.KEY`).
    pub fn key(&self) -> &str {
        &self.component.decl.key
    }

    /// Which tool of which component, for a message.
    pub fn origin(&self) -> String {
        format!("the tool '{}' of component '{}'", self.tool, self.component.decl.key)
    }
}

/// A declared component, loaded.
struct Component {
    decl: ToolDecl,
    loaded: Loaded,
    network: warden_policy::Network,
    env: Vec<(String, String)>,
}

/// The bytes of a declared component: its file read, or its registry's
/// artifact pulled and checked.
pub type FetchComponent<'a> = &'a dyn Fn(&ComponentSource) -> Result<Vec<u8>, String>;

/// The components of a policy and the runtime they run on.
pub struct Components {
    runtime: Runtime,
    pub tools: Vec<ComponentTool>,
    /// Components refused, with why (a digest that does not match): not offered.
    pub refused: Vec<String>,
}

impl Components {
    /// Loads every component `policy` declares. A component whose file does
    /// not match its digest is refused (left out, with the reason); a tool
    /// name no model API would accept is an error.
    pub fn load(policy: &Policy, runtime: Runtime, fetch: FetchComponent<'_>) -> Result<Components, String> {
        let mut tools = Vec::new();
        let mut refused = Vec::new();
        for decl in policy.tools.values() {
            let bytes = match (fetch(&decl.component), &decl.component) {
                (Ok(bytes), _) => bytes,
                (Err(e), ComponentSource::File(_)) => return Err(format!("tools.{}: {e}", decl.key)),
                // A component a registry could not prove is left out, like one whose digest differs.
                (Err(e), ComponentSource::Oci(oci)) => {
                    refused.push(format!("tools.{}: refused: cannot pull {}: {e}", decl.key, oci.reference));
                    continue;
                }
            };
            if let Some(expected) = &decl.digest {
                let actual = blake3::hash(&bytes).to_hex().to_string();
                if &actual != expected {
                    refused.push(format!(
                        "tools.{}: refused: {} has digest blake3:{actual}, and the policy says blake3:{expected}",
                        decl.key, decl.component
                    ));
                    continue;
                }
            }
            let loaded = runtime.load(bytes).map_err(|e| format!("tools.{}: {e}", decl.key))?;
            let component = Arc::new(Component { decl: decl.clone(), loaded, network: policy.network_for(decl.worker.as_deref()).clone(), env: policy.env.clone() });
            let sandbox = warden_fs::Sandbox::open_for(policy, decl.worker.as_deref()).map_err(|e| e.to_string())?;
            let read_only = sandbox.writable_roots().is_empty();
            let described = runtime.describe(&component.loaded, &RunConfig::default()).map_err(|e| format!("tools.{}: describe: {e}", decl.key))?;
            for info in described {
                let name = format!("{}__{}", decl.key, info.name);
                if !is_valid_tool_name(&name) {
                    return Err(format!(
                        "tools.{}: the tool '{}' would be offered as '{name}', which model APIs refuse: \
                         a name needs 1 to 64 letters, digits, '_' or '-'",
                        decl.key,
                        info.name.escape_debug()
                    ));
                }
                let schema: JsonObject = serde_json::from_str(&info.input_schema)
                    .map_err(|e| format!("tools.{}: the tool '{}' has an input schema that is not a JSON object: {e}", decl.key, info.name))?;
                // MCP's tool schemas are objects; some clients drop the whole tool list over one that is not.
                if schema.get("type").and_then(|t| t.as_str()) != Some("object") {
                    let given = schema.get("type").map_or_else(|| "no type".to_owned(), |t| format!("type {t}"));
                    return Err(format!(
                        "tools.{}: the tool '{}' has an input schema of {given}; MCP needs `\"type\": \"object\"` (some clients drop the whole tool list otherwise)",
                        decl.key, info.name
                    ));
                }
                let validator = jsonschema::validator_for(&serde_json::Value::Object(schema.clone()))
                    .map_err(|e| format!("tools.{}: the tool '{}' has an input schema that is not a valid JSON Schema: {e}", decl.key, info.name))?;
                let hints = ToolAnnotations::new()
                    .read_only(read_only)
                    .destructive(!read_only)
                    .idempotent(false)
                    .open_world(!component.network.is_off());
                let definition = Tool::new(name, info.description, Arc::new(schema)).with_annotations(hints);
                tools.push(ComponentTool { definition, tool: info.name, schema: validator, component: component.clone() });
            }
        }
        Ok(Components { runtime, tools, refused })
    }

    pub fn get(&self, name: &str) -> Option<&ComponentTool> {
        self.tools.iter().find(|t| t.definition.name == name)
    }

    /// The worker whose session serves `tool`.
    pub fn worker_of(tool: &ComponentTool) -> Option<&str> {
        tool.component.decl.worker.as_deref()
    }

    /// Calls `tool` in `session` (its worker's), blocking: the result as the
    /// model reads it, refusals and limits as `isError` in the CLI's words.
    pub fn call(&self, tool: &ComponentTool, session: &mut ApprovalSession, arguments: Option<JsonObject>, cancel: Arc<AtomicBool>) -> CallToolResult {
        let component = &tool.component;
        let name = tool.definition.name.to_string();
        let arguments = serde_json::Value::Object(arguments.unwrap_or_default());
        if let Err(e) = tool.schema.validate(&arguments) {
            return refused(format!("Invalid arguments for {name}: {}", schema_error(&e)));
        }
        let input = arguments.to_string();
        let mut config = RunConfig {
            env: component.env.clone(),
            network: component.network.clone(),
            limits: RunLimits::resolve(component.decl.limits, false),
            cancel: Some(cancel),
            ..RunConfig::default()
        };
        let outcome = match call_approved(&self.runtime, &component.loaded, &mut config, session, &name, &tool.tool, &input) {
            Ok(outcome) => outcome,
            Err(e) => return refused(e.to_string()),
        };
        match outcome.map(|o| o.result) {
            Ok(Ok(output)) => CallToolResult::success(vec![ContentBlock::text(output)]),
            Ok(Err(ToolError::Denied(message) | ToolError::Failed(message))) => refused(message),
            Ok(Err(ToolError::InvalidInput(message))) => refused(format!("invalid input: {message}")),
            Err(e) => refused(format!("warden: {e}")),
        }
    }
}

/// A schema error as the file tools word theirs: the field, then what is wrong.
fn schema_error(error: &jsonschema::ValidationError<'_>) -> String {
    let field = error.instance_path().as_str().trim_start_matches('/').replace('/', ".");
    if field.is_empty() { error.to_string() } else { format!("{field}: {error}") }
}

#[cfg(test)]
mod tests {
    use super::is_valid_tool_name;

    #[test]
    fn names_every_model_api_accepts() {
        assert!(is_valid_tool_name("textkit__grep"));
        assert!(is_valid_tool_name(&"a".repeat(64)));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
        assert!(!is_valid_tool_name("notes.search"));
        assert!(!is_valid_tool_name("notes search"));
        assert!(!is_valid_tool_name(""));
    }
}
