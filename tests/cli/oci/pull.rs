//! Round trips through a real registry: what `warden pull` prints and
//! keeps, and `warden call` / `run` with an oci:// reference, online and
//! `--offline`.

use super::hostile::{Hostile, Routes};
use super::artifact::Artifact;
use super::registry::Registry;
use super::{Env, NOT_CHECKED, guest, guest_path, pulled};

const INPUT: &str = r#"{"text":"from a registry"}"#;

#[test]
fn a_pulled_component_is_the_pushed_file_byte_for_byte() {
    let (registry, env) = (Registry::start(), Env::new());
    let wasm = guest("echo.wasm");
    let digest = registry.push_component("tools/echo", "v1", &wasm);
    let reference = registry.reference("tools/echo", &digest);
    let r = env.warden(&["pull", "--insecure-registry", &registry.host(), &reference]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(r.stdout, pulled(&reference, &digest, &wasm, NOT_CHECKED));
    let kept = env.cached_files();
    assert!(kept.iter().any(|f| std::fs::read(f).unwrap() == wasm), "no file in the cache holds the component: {kept:?}");
}

#[test]
fn a_tool_called_by_reference_answers_as_the_local_file_does() {
    let (registry, env) = (Registry::start(), Env::new());
    let digest = registry.push_component("tools/echo", "v1", &guest("echo.wasm"));
    let local = env.warden(&["call", &guest_path("echo.wasm"), "echo", "--input", INPUT]);
    assert_eq!(local.status, 0, "{}", local.stderr);
    let reference = registry.reference("tools/echo", &digest);
    let remote = env.warden(&["call", "--insecure-registry", &registry.host(), &reference, "echo", "--input", INPUT]);
    assert_eq!((remote.status, remote.stdout.as_str()), (0, local.stdout.as_str()), "{}", remote.stderr);
    let v: serde_json::Value = serde_json::from_str(&remote.stdout).unwrap();
    assert_eq!(v, serde_json::json!({ "text": "from a registry" }));
}

#[test]
fn a_command_run_by_reference_gets_its_arguments() {
    let (registry, env) = (Registry::start(), Env::new());
    let digest = registry.push_component("tools/hello", "v1", &guest("hello.wasm"));
    let reference = registry.reference("tools/hello", &digest);
    let r = env.warden(&["run", "--insecure-registry", &registry.host(), &reference, "tool authors"]);
    assert_eq!((r.status, r.stdout.as_str()), (0, "hello, tool authors!\n"), "{}", r.stderr);
}

#[test]
fn the_older_bytecodealliance_layer_type_loads_too() {
    let (registry, env) = (Registry::start(), Env::new());
    let wasm = guest("echo.wasm");
    let digest = registry.push_legacy_component("tools/echo", "old", &wasm);
    assert_ne!(digest, Artifact::component(&wasm).digest(), "the two layouts are two manifests");
    let reference = registry.reference("tools/echo", &digest);
    let r = env.warden(&["pull", "--insecure-registry", &registry.host(), &reference]);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &digest, &wasm, NOT_CHECKED)), "{}", r.stderr);
    let r = env.warden(&["call", "--insecure-registry", &registry.host(), &reference, "echo", "--input", INPUT]);
    assert_eq!(r.status, 0, "{}", r.stderr);
}

#[test]
fn offline_uses_what_was_pulled_with_the_registry_gone() {
    let (registry, env) = (Registry::start(), Env::new());
    let wasm = guest("echo.wasm");
    let digest = registry.push_component("tools/echo", "v1", &wasm);
    let reference = registry.reference("tools/echo", &digest);
    let r = env.warden(&["pull", "--insecure-registry", &registry.host(), &reference]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    drop(registry);
    let r = env.warden(&["call", "--offline", &reference, "echo", "--input", INPUT]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&r.stdout).unwrap(), serde_json::json!({ "text": "from a registry" }));
    let r = env.warden(&["pull", "--offline", &reference]);
    assert_eq!((r.status, r.stdout.as_str()), (0, pulled(&reference, &digest, &wasm, NOT_CHECKED).as_str()), "{}", r.stderr);
}

#[test]
fn offline_before_any_pull_is_refused_without_asking_the_registry() {
    let env = Env::new();
    let artifact = Artifact::component(&guest("echo.wasm"));
    let registry = Hostile::start(Routes::new().artifact("tools/echo", &artifact));
    let reference = registry.reference("tools/echo", &artifact.digest());
    let r = env.warden(&["pull", "--offline", "--insecure-registry", &registry.host(), &reference]);
    env.assert_refused(&r, &reference, &format!("{} is not in the cache and --offline was given", artifact.digest()));
    assert_eq!(registry.requests(), Vec::<String>::new());
    let r = env.warden(&["call", "--offline", &reference, "echo", "--input", INPUT]);
    assert_ne!(r.status, 0);
    assert!(r.stderr.contains(&format!("{} is not in the cache and --offline was given", artifact.digest())), "{}", r.stderr);
    assert_eq!(registry.requests(), Vec::<String>::new());
}
