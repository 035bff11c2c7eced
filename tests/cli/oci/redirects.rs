//! Redirects a registry may send: over HTTPS to another host is allowed,
//! but never to an address on this host (a registry must not reach, through
//! Warden, what it cannot reach itself), and never without end.

use super::hostile::{Hostile, Reply, Routes, blob_path};
use super::refusals::{REPO, echo, pull, refused, refused_saying};
use super::{Env, NOT_CHECKED, pulled};

fn redirect(location: String) -> Reply {
    Reply::Redirect { status: 307, location }
}

#[test]
fn an_https_redirect_to_a_loopback_address_is_refused_before_connecting() {
    // Catches a client that lets https leave the registry for any address:
    // the registry would make Warden knock on this host's services. Each
    // target would serve the right bytes; it must not even see a TLS hello.
    let (_, artifact) = echo();
    let layer = blob_path(REPO, &artifact.layer_digest());
    let other_loopback = Hostile::start_on("127.0.0.2", Routes::new().artifact(REPO, &artifact));
    let localhost = Hostile::start_on("127.0.0.1", Routes::new().artifact(REPO, &artifact));
    let targets = [format!("https://{}", other_loopback.host()), format!("https://localhost:{}", localhost.port())];
    for target in targets {
        let routes = Routes::new().artifact(REPO, &artifact).reply(layer.clone(), redirect(format!("{target}{layer}")));
        let why = format!("the registry redirected to {target}/");
        refused_saying(routes, &artifact.digest(), &[], &[&why, "which is a loopback address"]);
    }
    for target in [&other_loopback, &localhost] {
        assert_eq!((target.connections(), target.requests()), (0, Vec::<String>::new()));
    }
}

/// The layer's path redirecting to `/a1`, `/a1` to `/a2`, … `hops` redirects
/// in all; the last path serves the layer.
fn chain(hops: usize) -> (Routes, Vec<String>) {
    let (wasm, artifact) = echo();
    let layer = blob_path(REPO, &artifact.layer_digest());
    let paths: Vec<String> = std::iter::once(layer).chain((1..=hops).map(|i| format!("/a{i}"))).collect();
    let mut routes = Routes::new().artifact(REPO, &artifact);
    for pair in paths.windows(2) {
        routes = routes.reply(pair[0].clone(), redirect(pair[1].clone()));
    }
    let last = paths.last().unwrap().clone();
    (routes.reply(last, Reply::ok("application/octet-stream", wasm)), paths)
}

#[test]
fn five_redirects_on_the_registry_are_followed_and_a_sixth_is_refused() {
    // Five is the limit, not fewer: a registry with a chain of five still works.
    let (wasm, artifact) = echo();
    let (routes, _) = chain(5);
    let (env, registry) = (Env::new(), Hostile::start(routes));
    let reference = registry.reference(REPO, &artifact.digest());
    let r = pull(&env, &registry, &reference, &[]);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &artifact.digest(), &wasm, NOT_CHECKED)), "{}", r.stderr);

    // Catches a client that follows redirects without end: six are refused,
    // and the path the sixth names is never asked for.
    let (routes, paths) = chain(6);
    let registry = refused(routes, &artifact.digest(), &[], "the registry redirected more than 5 times");
    assert!(registry.was_asked_for(&paths[5]), "the first five are followed: {:?}", registry.requests());
    assert!(!registry.was_asked_for(&paths[6]), "{:?}", registry.requests());
}
