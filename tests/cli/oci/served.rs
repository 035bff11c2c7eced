//! A policy's `tools:` entry naming an oci:// component, served by `warden mcp`.

use serde_json::{Value, json};

use super::artifact::Artifact;
use super::hostile::{Hostile, Routes};
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
    // `warden pull --policy` with the policy's `registries:` entry pulls over
    // plain HTTP; the same policy without it must speak TLS to the same kind
    // of server, and never send it a plain HTTP request.
    let artifact = Artifact::component(&guest("echo.wasm"));
    let start = || Hostile::start(Routes::new().artifact("tools/echo", &artifact));
    let policy_for = |registry: &Hostile, insecure: bool| {
        let registries = match insecure {
            true => format!("registries:\n  \"{}\": {{ insecure: true }}\n", registry.host()),
            false => String::new(),
        };
        format!(
            "version: 1\nsandbox: {{ paths: {{ data: {{ root: ./data, mode: ro }} }} }}\nmcp: {{ file_tools: false }}\n{registries}\
             tools:\n  echo: {{ component: \"{}\" }}\n",
            registry.reference("tools/echo", &artifact.digest())
        )
    };

    let (marked, env) = (start(), Env::new());
    env.file("policy.yaml", policy_for(&marked, true));
    let reference = marked.reference("tools/echo", &artifact.digest());
    let r = env.warden(&["pull", "--policy", env.path("policy.yaml").to_str().unwrap(), &reference]);
    assert_eq!(r.status, 0, "with the policy's insecure entry the pull works: {}", r.stderr);

    let (unmarked, env) = (start(), Env::new());
    env.file("policy.yaml", policy_for(&unmarked, false));
    let reference = unmarked.reference("tools/echo", &artifact.digest());
    let r = env.warden(&["pull", "--policy", env.path("policy.yaml").to_str().unwrap(), &reference]);
    assert_eq!((r.status, r.stdout.as_str()), (1, ""), "{}", r.stderr);
    assert!(r.stderr.starts_with(&format!("warden: cannot pull {reference}: ")), "{}", r.stderr);
    env.assert_nothing_cached();
    // Each connection opened with a TLS handshake record (0x16 0x03): no plain HTTP request came.
    let requests = unmarked.requests();
    assert!(!requests.is_empty() && requests.iter().all(|r| r.starts_with("not HTTP: 16 03")), "{requests:?}");
}
