//! A policy's `tools:` entry naming an oci:// component, served by `warden mcp`.

use serde_json::{Value, json};

use super::mcp::Mcp;
use super::registry::Registry;
use super::{Env, guest};

/// A policy with file tools off, plain HTTP to `registry`, and `tools`.
pub fn policy(registry: &Registry, tools: &str) -> String {
    format!(
        "version: 1\nsandbox: {{ paths: {{ data: {{ root: ./data, mode: ro }} }} }}\nmcp: {{ file_tools: false }}\n\
         registries:\n  \"{}\": {{ insecure: true }}\ntools:\n{tools}",
        registry.host()
    )
}

/// The text of a successful call, as JSON.
pub fn answer(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn a_policy_tool_from_a_registry_is_listed_and_called_over_mcp() {
    let (registry, env) = (Registry::start(), Env::new());
    let digest = registry.push_component("tools/echo", "v1", &guest("echo.wasm"));
    let tools = format!("  echo: {{ component: \"{}\" }}\n", registry.reference("tools/echo", &digest));
    env.file("policy.yaml", policy(&registry, &tools));
    let mut mcp = Mcp::start(&env, env.path("policy.yaml").to_str().unwrap());
    assert_eq!(mcp.tool_names(), ["echo__echo"], "{}", std::fs::read_to_string(env.path("mcp-stderr.log")).unwrap_or_default());
    let result = mcp.call("echo__echo", json!({ "text": "served" }));
    assert_eq!(answer(&result), json!({ "text": "served" }));
}

#[test]
fn a_registry_that_the_policy_does_not_mark_insecure_is_not_spoken_to_over_plain_http() {
    // The same policy without `registries:`: `warden pull --policy` speaks
    // https to the plain HTTP registry, and fails.
    let (registry, env) = (Registry::start(), Env::new());
    let digest = registry.push_component("tools/echo", "v1", &guest("echo.wasm"));
    let tools = format!("  echo: {{ component: \"{}\" }}\n", registry.reference("tools/echo", &digest));
    let text = policy(&registry, &tools);
    let without = text.replace(&format!("registries:\n  \"{}\": {{ insecure: true }}\n", registry.host()), "");
    assert_ne!(without, text);
    env.file("policy.yaml", without);
    let r = env.warden(&["pull", "--policy", env.path("policy.yaml").to_str().unwrap(), &registry.reference("tools/echo", &digest)]);
    assert_eq!(r.status, 1, "{}", r.stdout);
    env.assert_nothing_cached();
}
