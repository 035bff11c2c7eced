//! Tags: refused unpinned, pinned by `warden lock`, and a pin that holds
//! when the tag moves; `warden check`'s word for each reference.

use serde_json::json;

use super::artifact::{Artifact, MANIFEST};
use super::cosign::{Key, push_signature};
use super::hostile::{Hostile, Routes};
use super::mcp::Mcp;
use super::registry::Registry;
use super::served::{answer, policy};
use super::{Env, guest};

#[test]
fn a_tag_without_a_digest_is_an_invalid_policy() {
    let (registry, env) = (Registry::start(), Env::new());
    registry.push_component("tools/echo", "v1", &guest("echo.wasm"));
    let tagged = format!("oci://{}/tools/echo:v1", registry.host());
    env.file("policy.yaml", policy(&registry, &format!("  echo: {{ component: \"{tagged}\" }}\n")));
    let r = env.warden(&["check", env.path("policy.yaml").to_str().unwrap()]);
    assert_eq!(r.status, 2, "{}", r.stdout);
    let why = format!("tools.echo.component: '{tagged}' names a tag without a digest; pin it with `warden lock`, write its @sha256: digest, or add verify:");
    assert!(r.stderr.contains(&why), "{}", r.stderr);
}

#[test]
fn a_command_line_tag_without_a_key_is_refused_before_the_registry_is_asked() {
    let env = Env::new();
    let artifact = Artifact::component(&guest("hello.wasm"));
    let registry = Hostile::start(Routes::new().artifact("tools/hello", &artifact).manifest("tools/hello", "v1", MANIFEST, artifact.bytes()));
    let tagged = format!("oci://{}/tools/hello:v1", registry.host());
    let r = env.warden(&["run", "--insecure-registry", &registry.host(), &tagged]);
    assert_eq!((r.status, r.stdout.as_str()), (2, ""), "{}", r.stderr);
    assert!(r.stderr.contains(&format!("'{tagged}' names a tag without a digest")), "{}", r.stderr);
    assert!(r.stderr.contains("--verify-key"), "{}", r.stderr);
    assert_eq!(registry.requests(), Vec::<String>::new());
    env.assert_nothing_cached();
}

#[test]
fn a_locked_tag_keeps_its_component_after_the_tag_moves() {
    let (registry, env) = (Registry::start(), Env::new());
    let echo = registry.push_component("tools/plugin", "v1", &guest("echo.wasm"));
    let tagged = format!("oci://{}/tools/plugin:v1", registry.host());
    env.file("policy.yaml", policy(&registry, &format!("  plugin: {{ component: \"{tagged}\" }}\n")));
    let policy_file = env.path("policy.yaml");
    let policy_file = policy_file.to_str().unwrap();
    let r = env.warden(&["lock", policy_file]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(says_pinned(&r.stdout, &tagged, &echo), "{}", r.stdout);
    let lock = std::fs::read_to_string(env.path("warden.lock")).unwrap();
    assert!(lock.contains(&format!("\n  \"{tagged}\": \"{echo}\"\n")), "{lock}");
    let r = env.warden(&["check", policy_file]);
    assert_eq!(r.status, 0, "{}", r.stderr);

    // The tag moves to another component; the lock does not follow it.
    let textkit = registry.push_component("tools/plugin", "v1", &guest("textkit.wasm"));
    assert_ne!(textkit, echo);
    let mut mcp = Mcp::start(&env, policy_file);
    assert_eq!(mcp.tool_names(), ["plugin__echo"]);
    assert_eq!(answer(&mcp.call("plugin__echo", json!({ "still": "echo" }))), json!({ "still": "echo" }));
    drop(mcp);

    // Only `warden lock` moves a pin.
    let r = env.warden(&["lock", policy_file]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(says_pinned(&r.stdout, &tagged, &textkit), "{}", r.stdout);
    let mut mcp = Mcp::start(&env, policy_file);
    assert_eq!(mcp.tool_names(), ["plugin__grep", "plugin__count", "plugin__report"]);
}

/// Whether `warden lock` said it pinned `tagged` to `digest` (a line of its
/// own, perhaps followed by what the pin was before).
fn says_pinned(stdout: &str, tagged: &str, digest: &str) -> bool {
    let line = format!("pinned {tagged} -> {digest}");
    stdout.lines().any(|l| l == line || l.starts_with(&format!("{line} ")))
}

/// The line of `warden check`'s report for the tool `key`.
fn line_of<'a>(report: &'a str, key: &str) -> &'a str {
    let start = format!("{key}  ");
    report.lines().find(|l| l.trim_start().starts_with(&start)).unwrap_or_else(|| panic!("no line for {key} in:\n{report}"))
}

#[test]
fn check_says_whether_each_reference_is_pinned_or_verified() {
    let (registry, env) = (Registry::start(), Env::new());
    let key = Key::generate();
    key.write_public(&env.path("acme.pub"));
    let digest = registry.push_component("tools/echo", "v1", &guest("echo.wasm"));
    registry.push_component("tools/echo", "v2", &guest("echo.wasm"));
    push_signature(&registry, "tools/echo", &key, &digest, &digest);
    let host = registry.host();
    let tools = format!(
        "  bydigest: {{ component: \"oci://{host}/tools/echo@{digest}\" }}\n  bykey: {{ component: \"oci://{host}/tools/echo:v2\", verify: {{ keys: [./acme.pub] }} }}\n"
    );
    env.file("policy.yaml", policy(&registry, &tools));
    let policy_file = env.path("policy.yaml");
    let policy_file = policy_file.to_str().unwrap();
    let r = env.warden(&["check", policy_file]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(line_of(&r.stdout, "bydigest").contains("pinned, unverified"), "{}", r.stdout);
    let bykey = line_of(&r.stdout, "bykey");
    assert!(bykey.contains("verified") && !bykey.contains("unverified") && !bykey.contains("pinned"), "{}", r.stdout);

    env.file("policy.yaml", policy(&registry, &format!("{tools}  bylock: {{ component: \"oci://{host}/tools/echo:v1\" }}\n")));
    let r = env.warden(&["lock", policy_file]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let r = env.warden(&["check", policy_file]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(line_of(&r.stdout, "bylock").contains("pinned by warden.lock, unverified"), "{}", r.stdout);
    assert!(line_of(&r.stdout, "bykey").contains("pinned by warden.lock, verified"), "{}", r.stdout);
}
