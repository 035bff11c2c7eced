//! What a hostile registry can send, each refused with its reason and
//! nothing left in the cache: bytes that are not what their digest says,
//! sizes that lie, bodies that never end or never come, redirects
//! elsewhere, and artifacts that are not one component.

use std::time::{Duration, Instant};

use super::artifact::{Artifact, INDEX, MANIFEST, WASM_LAYER};
use super::hostile::{Hostile, Reply, Routes, blob_path, manifest_path};
use super::{Env, Run, guest, sha256};

pub(super) const REPO: &str = "tools/echo";

/// The echo component as an honest artifact.
pub(super) fn echo() -> (Vec<u8>, Artifact) {
    let wasm = guest("echo.wasm");
    let artifact = Artifact::component(&wasm);
    (wasm, artifact)
}

pub(super) fn pull(env: &Env, registry: &Hostile, reference: &str, extra: &[&str]) -> Run {
    let host = registry.host();
    let mut args = vec!["pull", "--insecure-registry", &host];
    args.extend_from_slice(extra);
    args.push(reference);
    env.warden(&args)
}

/// Serves `routes`, pulls `digest` and checks the refusal; returns the registry.
pub(super) fn refused(routes: Routes, digest: &str, extra: &[&str], reason: &str) -> Hostile {
    refused_saying(routes, digest, extra, &[reason])
}

/// As [`refused`], the reason holding each of `reasons`.
pub(super) fn refused_saying(routes: Routes, digest: &str, extra: &[&str], reasons: &[&str]) -> Hostile {
    let env = Env::new();
    let registry = Hostile::start(routes);
    let reference = registry.reference(REPO, digest);
    let r = pull(&env, &registry, &reference, extra);
    for reason in reasons {
        env.assert_refused(&r, &reference, reason);
    }
    registry
}

fn octets(body: Vec<u8>) -> Reply {
    Reply::ok("application/octet-stream", body)
}

#[test]
fn a_blob_whose_bytes_do_not_match_its_digest_is_refused_and_not_cached() {
    let (wasm, artifact) = echo();
    let mut forged = wasm.clone();
    *forged.last_mut().unwrap() ^= 1;
    let routes = Routes::new().artifact(REPO, &artifact).reply(blob_path(REPO, &artifact.layer_digest()), octets(forged.clone()));
    let why = format!("the layer's bytes have digest {}, not {} as the manifest says", sha256(&forged), artifact.layer_digest());
    refused(routes, &artifact.digest(), &[], &why);
}

#[test]
fn a_manifest_that_is_not_the_pinned_one_is_refused() {
    let (_, pinned) = echo();
    let other = Artifact::component(&guest("hello.wasm"));
    let routes = Routes::new().artifact(REPO, &other).reply(manifest_path(REPO, &pinned.digest()), Reply::ok(MANIFEST, other.bytes()));
    let why = format!("the registry sent a manifest with digest {} for {}", other.digest(), pinned.digest());
    refused(routes, &pinned.digest(), &[], &why);
}

#[test]
fn a_docker_content_digest_that_lies_about_the_right_manifest_is_refused() {
    // The body is the pinned manifest; only the header lies. Catches a client
    // that reads the header and ignores it (or trusts it over the bytes).
    let (_, artifact) = echo();
    let liar = sha256(b"another manifest");
    let says = Reply::SaysDigest { content_type: MANIFEST.into(), body: artifact.bytes(), digest: liar.clone() };
    let routes = Routes::new().artifact(REPO, &artifact).reply(manifest_path(REPO, &artifact.digest()), says);
    let why = format!("the registry says the manifest is {liar}");
    let registry = refused(routes, &artifact.digest(), &[], &why);
    assert!(!registry.was_asked_for(&blob_path(REPO, &artifact.layer_digest())), "{:?}", registry.requests());
}

#[test]
fn a_layer_longer_than_the_manifest_says_is_refused_whether_announced_or_streamed() {
    let (wasm, artifact) = echo();
    let mut longer = wasm.clone();
    longer.extend_from_slice(&[0; 100]);
    let why = format!("the layer is longer than the {} bytes the manifest says", wasm.len());
    let layer = blob_path(REPO, &artifact.layer_digest());
    refused(Routes::new().artifact(REPO, &artifact).reply(layer.clone(), octets(longer.clone())), &artifact.digest(), &[], &why);
    let chunked = Reply::Chunked { content_type: "application/octet-stream".into(), body: longer };
    refused(Routes::new().artifact(REPO, &artifact).reply(layer.clone(), chunked), &artifact.digest(), &[], &why);
    let endless = Reply::Endless { content_type: "application/octet-stream".into() };
    refused(Routes::new().artifact(REPO, &artifact).reply(layer, endless), &artifact.digest(), &[], &why);
}

#[test]
fn a_layer_shorter_than_the_manifest_says_is_refused_whether_announced_or_cut() {
    let (wasm, artifact) = echo();
    let short = wasm[..wasm.len() - 10].to_vec();
    let why = format!("the layer ended after {} of the {} bytes the manifest says", short.len(), wasm.len());
    let layer = blob_path(REPO, &artifact.layer_digest());
    let chunked = Reply::Chunked { content_type: "application/octet-stream".into(), body: short.clone() };
    refused(Routes::new().artifact(REPO, &artifact).reply(layer.clone(), chunked), &artifact.digest(), &[], &why);
    let cut = Reply::Truncated { content_type: "application/octet-stream".into(), length: wasm.len() as u64, body: short };
    refused(Routes::new().artifact(REPO, &artifact).reply(layer, cut), &artifact.digest(), &[], &why);
}

#[test]
fn a_layer_over_max_size_is_refused_before_it_is_fetched() {
    let (wasm, artifact) = echo();
    let why = format!("the layer is {} bytes, over the max_size of 1000 bytes", wasm.len());
    let registry = refused(Routes::new().artifact(REPO, &artifact), &artifact.digest(), &["--max-size", "1000"], &why);
    assert!(!registry.was_asked_for(&blob_path(REPO, &artifact.layer_digest())), "{:?}", registry.requests());
}

#[test]
fn a_100_mb_manifest_is_refused_at_4_mib() {
    let (_, artifact) = echo();
    let huge = Reply::Huge { content_type: MANIFEST.into(), length: 100 << 20 };
    let routes = Routes::new().artifact(REPO, &artifact).reply(manifest_path(REPO, &artifact.digest()), huge);
    refused(routes, &artifact.digest(), &[], "the manifest is larger than 4194304 bytes");
}

#[test]
fn an_endless_manifest_is_refused_at_4_mib() {
    let (_, artifact) = echo();
    let endless = Reply::Endless { content_type: MANIFEST.into() };
    let routes = Routes::new().artifact(REPO, &artifact).reply(manifest_path(REPO, &artifact.digest()), endless);
    refused(routes, &artifact.digest(), &[], "the manifest is larger than 4194304 bytes");
}

#[test]
fn a_redirect_to_another_host_over_plain_http_is_refused_and_never_followed() {
    let (_, artifact) = echo();
    let layer = blob_path(REPO, &artifact.layer_digest());
    // Another host that would serve the real bytes: it must never be asked.
    let elsewhere = Hostile::start_on("127.0.0.2", Routes::new().artifact(REPO, &artifact));
    for (status, location) in [(307, elsewhere.url(&layer)), (302, format!("http://example.invalid{layer}"))] {
        let routes = Routes::new().artifact(REPO, &artifact).reply(layer.clone(), Reply::Redirect { status, location: location.clone() });
        let why = format!("the registry redirected to {location}: another host over plain HTTP is refused");
        refused(routes, &artifact.digest(), &[], &why);
    }
    assert_eq!(elsewhere.requests(), Vec::<String>::new());
}

#[test]
fn a_layer_with_foreign_urls_is_never_fetched_from_them() {
    // A descriptor's `urls` would send the pull to any host. The layer is at
    // the registry too, so only the check of `urls` can refuse this pull:
    // without it, the pull would succeed from the registry (or the foreign host).
    let (_, mut artifact) = echo();
    let layer = blob_path(REPO, &artifact.layer_digest());
    let elsewhere = Hostile::start_on("127.0.0.2", Routes::new().artifact(REPO, &artifact));
    artifact.manifest["layers"][0]["urls"] = serde_json::json!([elsewhere.url(&layer)]);
    let registry = refused(
        Routes::new().artifact(REPO, &artifact),
        &artifact.digest(),
        &[],
        "the layer names other URLs to fetch it from",
    );
    assert_eq!((elsewhere.connections(), elsewhere.requests()), (0, Vec::<String>::new()));
    // The manifest is judged before any layer is asked for, at the registry or elsewhere.
    assert!(!registry.was_asked_for(&layer), "{:?}", registry.requests());
}

#[test]
fn an_image_index_is_refused_as_not_a_component() {
    let (_, artifact) = echo();
    let docker_list = "application/vnd.docker.distribution.manifest.list.v2+json";
    for media_type in [INDEX, docker_list] {
        let body = serde_json::to_vec(&serde_json::json!({ "schemaVersion": 2, "mediaType": media_type, "manifests": [artifact.descriptor()] })).unwrap();
        let digest = sha256(&body);
        let routes = Routes::new().artifact(REPO, &artifact).reply(manifest_path(REPO, &digest), Reply::ok(media_type, body));
        let why = format!("is an image index ({media_type}), not a component");
        let registry = refused(routes, &digest, &[], &why);
        assert!(!registry.was_asked_for(&manifest_path(REPO, &artifact.digest())), "an index is not followed: {:?}", registry.requests());
    }
}

#[test]
fn a_layer_of_another_media_type_is_refused_unfetched() {
    let wasm = guest("echo.wasm");
    for media_type in ["application/vnd.wasm.content.layer.v1+wasm", "application/vnd.oci.image.layer.v1.tar+gzip"] {
        let artifact = Artifact::wasm(&[(media_type, wasm.as_slice())]);
        let why = format!(
            "the layer has media type {media_type}; a component is application/wasm or application/vnd.bytecodealliance.wasm.component.layer.v0+wasm"
        );
        let registry = refused(Routes::new().artifact(REPO, &artifact), &artifact.digest(), &[], &why);
        assert!(!registry.was_asked_for(&blob_path(REPO, &sha256(&wasm))), "{:?}", registry.requests());
    }
}

#[test]
fn two_wasm_layers_are_refused_unfetched() {
    let (wasm, hello) = (guest("echo.wasm"), guest("hello.wasm"));
    let artifact = Artifact::wasm(&[(WASM_LAYER, wasm.as_slice()), (WASM_LAYER, hello.as_slice())]);
    let registry = refused(Routes::new().artifact(REPO, &artifact), &artifact.digest(), &[], "the manifest has 2 layers; a component artifact has exactly one");
    assert!(!registry.was_asked_for(&blob_path(REPO, &sha256(&wasm))), "{:?}", registry.requests());
}

#[test]
fn a_layer_that_claims_to_be_a_policy_is_never_applied() {
    let policy = b"version: 1\nsandbox: { paths: { all: { root: /, mode: rw } } }\n";
    let media_type = "application/vnd.warden.policy.v1+yaml";
    let artifact = Artifact::wasm(&[(media_type, policy.as_slice())]);
    // Shown as text (what it says it is), never fetched, never applied.
    let why = format!(
        "a layer claims to be a policy ({media_type}, {} bytes, {}): refused, Warden never applies a policy from a registry",
        policy.len(),
        sha256(policy)
    );
    let registry = refused(Routes::new().artifact(REPO, &artifact), &artifact.digest(), &[], &why);
    assert!(!registry.was_asked_for(&blob_path(REPO, &sha256(policy))), "{:?}", registry.requests());
    // Beside a component, the policy layer is what the refusal names.
    let wasm = guest("echo.wasm");
    let both = Artifact::wasm(&[(WASM_LAYER, wasm.as_slice()), (media_type, policy.as_slice())]);
    let registry = refused(Routes::new().artifact(REPO, &both), &both.digest(), &[], &why);
    assert!(!registry.was_asked_for(&blob_path(REPO, &sha256(&wasm))), "{:?}", registry.requests());
}

#[test]
fn a_registry_that_drips_a_byte_a_second_is_cut_at_the_timeout() {
    let (wasm, artifact) = echo();
    let drip = |body: Vec<u8>| Reply::Drip { content_type: "application/octet-stream".into(), body };
    let cases = [
        (manifest_path(REPO, &artifact.digest()), Reply::Drip { content_type: MANIFEST.into(), body: artifact.bytes() }),
        (blob_path(REPO, &artifact.layer_digest()), drip(wasm)),
    ];
    for (path, reply) in cases {
        let started = Instant::now();
        let routes = Routes::new().artifact(REPO, &artifact).reply(path.clone(), reply);
        refused(routes, &artifact.digest(), &["--registry-timeout", "2"], "the registry did not answer within 2 s");
        let took = started.elapsed();
        assert!(took < Duration::from_secs(30), "{path}: the pull took {took:?} with --registry-timeout 2");
    }
}
