//! `warden mcp --watch` reloads the policy, and a tag it resolved keeps the
//! digest it had: a moved tag is never followed, even to a signed component.

use std::time::{Duration, Instant};

use super::cosign::{Key, push_signature};
use super::mcp::Mcp;
use super::registry::Registry;
use super::served::policy;
use super::{Env, guest};

#[test]
fn a_reload_never_follows_a_moved_tag() {
    let (registry, env, key) = (Registry::start(), Env::new(), Key::generate());
    key.write_public(&env.path("acme.pub"));
    let first = registry.push_component("tools/plugin", "v1", &guest("echo.wasm"));
    push_signature(&registry, "tools/plugin", &key, &first, &first);
    let tools = format!("  plugin: {{ component: \"oci://{}/tools/plugin:v1\", verify: {{ keys: [./acme.pub] }} }}\n", registry.host());
    env.file("policy.yaml", policy(&registry, &tools));
    let policy_file = env.path("policy.yaml");
    let mut mcp = Mcp::start_with(&env, &["mcp", "--watch", "--policy", policy_file.to_str().unwrap()]);
    assert_eq!(mcp.tool_names(), ["plugin__echo"]);

    // The publisher moves the tag to another component, and signs it too.
    let second = registry.push_component("tools/plugin", "v1", &guest("textkit.wasm"));
    push_signature(&registry, "tools/plugin", &key, &second, &second);
    // A visible change (file tools on) shows when the reload has happened.
    env.file("policy.yaml", policy(&registry, &tools).replace("mcp: { file_tools: false }", "mcp: { file_tools: true }"));
    let deadline = Instant::now() + Duration::from_secs(60);
    let names = loop {
        let names = mcp.tool_names();
        if names.iter().any(|n| n == "read_file") || Instant::now() > deadline {
            break names;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(names.iter().any(|n| n == "read_file"), "the policy was not reloaded: {names:?}");
    assert!(names.iter().any(|n| n == "plugin__echo"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("plugin__count")), "the reload followed the moved tag: {names:?}");
}
