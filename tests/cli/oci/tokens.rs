//! Bearer tokens: a registry that answers 401 and names a token service (its
//! realm). Warden fetches the token with the docker config's login, if any,
//! but never sends that login in clear text to another host.

use super::hostile::{Hostile, Reply, Routes, header, manifest_path, target};
use super::refusals::{REPO, echo, pull};
use super::{Env, NOT_CHECKED, base64, pulled};

const TOKEN: &str = "good-token";
const SCOPE: &str = "scope=repository%3Atools%2Fecho%3Apull";

fn token() -> Reply {
    Reply::ok("application/json", format!(r#"{{"token":"{TOKEN}"}}"#).into_bytes())
}

fn challenge(realm: &str) -> String {
    format!(r#"Bearer realm="{realm}",service="test",scope="repository:tools/echo:pull""#)
}

/// A docker config with `user:password` for `host`.
fn docker_config(env: &Env, host: &str, user: &str, password: &str) {
    let auth = base64(format!("{user}:{password}").as_bytes());
    env.file("docker/config.json", format!(r#"{{"auths":{{"{host}":{{"auth":"{auth}"}}}}}}"#));
}

/// The echo artifact behind a token, the token service on the same origin.
fn behind_a_token() -> Hostile {
    let (_, artifact) = echo();
    Hostile::start_with("127.0.0.1", |host| {
        let realm = format!("http://{host}/token");
        Routes::new().artifact(REPO, &artifact).guard(&format!("Bearer {TOKEN}"), &challenge(&realm)).reply("/token".into(), token())
    })
}

#[test]
fn a_bearer_challenge_is_met_with_a_token_from_the_registry_s_own_token_service() {
    // Catches a client that cannot do the token dance (every real registry
    // but the smallest asks for it), or asks for a token without the scope.
    let (wasm, artifact) = echo();
    let (env, registry) = (Env::new(), behind_a_token());
    let reference = registry.reference(REPO, &artifact.digest());
    let r = pull(&env, &registry, &reference, &[]);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &artifact.digest(), &wasm, NOT_CHECKED)), "{}", r.stderr);
    let tokens = registry.heads_for("/token");
    assert!(!tokens.is_empty(), "{:?}", registry.requests());
    for head in &tokens {
        assert!(target(head).contains(SCOPE) && target(head).contains("service=test"), "{head}");
        assert_eq!(header(head, "authorization"), None, "no login was configured: {head}");
    }
    // The manifest was asked for without a token, answered 401, then asked for again with it.
    let asked = registry.heads_for(&manifest_path(REPO, &artifact.digest()));
    assert!(asked.len() >= 2, "{asked:?}");
    assert_eq!(header(&asked[0], "authorization"), None, "{asked:?}");
    assert_eq!(header(asked.last().unwrap(), "authorization"), Some("Bearer good-token"), "{asked:?}");

    // With a login for the registry, the token service gets it (and a token
    // service on the registry's own origin may).
    let (env, registry) = (Env::new(), behind_a_token());
    docker_config(&env, &registry.host(), "warden", "pull-secret");
    let reference = registry.reference(REPO, &artifact.digest());
    let r = pull(&env, &registry, &reference, &["--registry-config", "docker/config.json"]);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &artifact.digest(), &wasm, NOT_CHECKED)), "{}", r.stderr);
    let tokens = registry.heads_for("/token");
    let basic = format!("Basic {}", base64(b"warden:pull-secret"));
    assert!(!tokens.is_empty() && tokens.iter().all(|head| header(head, "authorization") == Some(basic.as_str())), "{tokens:?}");
    assert!(tokens.iter().all(|head| target(head).contains(SCOPE)), "{tokens:?}");
}

#[test]
fn a_token_realm_on_another_host_over_plain_http_never_sees_the_login() {
    // Catches a client that follows the realm wherever the registry points
    // it, sending the docker config's password there in clear text.
    let (_, artifact) = echo();
    let realm = Hostile::start_on("127.0.0.2", Routes::new().reply("/token".into(), token()));
    let routes = Routes::new().artifact(REPO, &artifact).guard(&format!("Bearer {TOKEN}"), &challenge(&realm.url("/token")));
    let (env, registry) = (Env::new(), Hostile::start(routes));
    docker_config(&env, &registry.host(), "warden", "pull-secret");
    let reference = registry.reference(REPO, &artifact.digest());
    let r = pull(&env, &registry, &reference, &["--registry-config", "docker/config.json"]);
    env.assert_refused(&r, &reference, "is another host over plain HTTP: refused");
    assert_eq!((realm.connections(), realm.requests()), (0, Vec::<String>::new()));
}
