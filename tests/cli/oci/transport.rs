//! How Warden reaches a registry: https unless plain HTTP is allowed (and
//! then only on loopback), and logins from a docker config.

use super::artifact::Artifact;
use super::hostile::{Hostile, Routes};
use super::registry::{BCRYPT, PASSWORD, Registry, USER};
use super::{Env, NOT_CHECKED, base64, guest, pulled};

#[test]
fn without_insecure_registry_a_loopback_registry_is_spoken_to_over_https() {
    let env = Env::new();
    let artifact = Artifact::component(&guest("echo.wasm"));
    let registry = Hostile::start(Routes::new().artifact("tools/echo", &artifact));
    let reference = registry.reference("tools/echo", &artifact.digest());
    let r = env.warden(&["pull", &reference]);
    assert_eq!(r.status, 1, "{}", r.stdout);
    assert!(r.stderr.starts_with(&format!("warden: cannot pull {reference}: ")), "{}", r.stderr);
    env.assert_nothing_cached();
    // Each connection opened with a TLS handshake record (0x16 0x03): no plain HTTP request came.
    let requests = registry.requests();
    assert!(!requests.is_empty() && requests.iter().all(|r| r.starts_with("not HTTP: 16 03")), "{requests:?}");
}

#[test]
fn plain_http_to_a_registry_that_is_not_on_loopback_is_refused() {
    let env = Env::new();
    env.file(
        "policy.yaml",
        "version: 1\nsandbox: { paths: { data: { root: ./data, mode: ro } } }\nregistries:\n  \"registry.example.com:5000\": { insecure: true }\n",
    );
    let r = env.warden(&["check", env.path("policy.yaml").to_str().unwrap()]);
    assert_eq!(r.status, 2, "{}", r.stdout);
    let why = "registries.\"registry.example.com:5000\".insecure: plain HTTP is allowed only for a loopback registry";
    assert!(r.stderr.contains(why), "{}", r.stderr);
    let reference = format!("oci://registry.example.com:5000/tools/echo@sha256:{}", "0".repeat(64));
    // The flag is refused as a usage error before anything is asked, naming the host as given.
    let r = env.warden(&["pull", "--insecure-registry", "registry.example.com:5000", &reference]);
    assert_eq!((r.status, r.stdout.as_str()), (2, ""), "{}", r.stderr);
    let why = "--insecure-registry registry.example.com:5000: plain HTTP is allowed only for a loopback registry";
    assert!(r.stderr.contains(why), "{}", r.stderr);
    env.assert_nothing_cached();
}

#[test]
fn a_registry_login_comes_from_the_docker_config_and_nowhere_else() {
    let registry = Registry::start_with_auth(USER, PASSWORD, BCRYPT);
    let wasm = guest("echo.wasm");
    let digest = registry.push_component("tools/echo", "v1", &wasm);
    let reference = registry.reference("tools/echo", &digest);
    let host = registry.host();
    let config = |password: &str| format!(r#"{{"auths":{{"{host}":{{"auth":"{}"}}}}}}"#, base64(format!("{USER}:{password}").as_bytes()));

    let env = Env::new();
    let r = env.warden(&["pull", "--insecure-registry", &host, &reference]);
    env.assert_refused(&r, &reference, "");
    let lower = r.stderr.to_lowercase();
    assert!(lower.contains("401") || lower.contains("unauthorized"), "{}", r.stderr);

    env.file("docker/config.json", config("not-the-password"));
    let r = env.warden(&["pull", "--insecure-registry", &host, "--registry-config", "docker/config.json", &reference]);
    env.assert_refused(&r, &reference, "");
    let lower = r.stderr.to_lowercase();
    assert!(lower.contains("401") || lower.contains("unauthorized"), "{}", r.stderr);

    env.file("docker/config.json", config(PASSWORD));
    let r = env.warden(&["pull", "--insecure-registry", &host, "--registry-config", "docker/config.json", &reference]);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &digest, &wasm, NOT_CHECKED)), "{}", r.stderr);

    // $DOCKER_CONFIG names the folder of config.json, as docker reads it.
    let env = Env::new();
    env.file("elsewhere/config.json", config(PASSWORD));
    let folder = env.path("elsewhere");
    let r = env.warden_with(&["pull", "--insecure-registry", &host, &reference], &[("DOCKER_CONFIG", folder.as_path())]);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &digest, &wasm, NOT_CHECKED)), "{}", r.stderr);
}
