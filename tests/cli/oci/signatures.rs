//! Cosign signatures: a key made in the test signs one component. The
//! signed one loads, by digest or by tag; an unsigned one, one signed by
//! another key and a signature for another digest are refused, naming the
//! key and the digests.

use super::artifact::{Artifact, INDEX};
use super::cosign::{Key, push_referrer, push_signature, referrer, referrers_index, sig_tag, signature};
use super::hostile::{Hostile, Reply, Routes};
use super::registry::Registry;
use super::{Env, guest, pulled};

/// A registry, a test folder holding `acme.pub`, and the key behind it.
fn setup() -> (Registry, Env, Key) {
    let (registry, env, key) = (Registry::start(), Env::new(), Key::generate());
    key.write_public(&env.path("acme.pub"));
    (registry, env, key)
}

fn pull_verified(env: &Env, host: &str, reference: &str) -> super::Run {
    env.warden(&["pull", "--insecure-registry", host, "--verify-key", "acme.pub", reference])
}

fn verified(key: &Key, digest: &str) -> String {
    format!("verified: acme.pub ({}) signed {digest}", key.fingerprint())
}

#[test]
fn a_component_signed_with_the_key_given_loads_and_says_by_whom_even_offline() {
    let (registry, env, key) = setup();
    let wasm = guest("echo.wasm");
    let digest = registry.push_component("tools/echo", "v1", &wasm);
    push_signature(&registry, "tools/echo", &key, &digest, &digest);
    let reference = registry.reference("tools/echo", &digest);
    let r = pull_verified(&env, &registry.host(), &reference);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &digest, &wasm, &verified(&key, &digest))), "{}", r.stderr);
    drop(registry);
    let r = env.warden(&["pull", "--offline", "--verify-key", "acme.pub", &reference]);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &digest, &wasm, &verified(&key, &digest))), "{}", r.stderr);
    let r = env.warden(&["call", "--offline", "--verify-key", "acme.pub", &reference, "echo", "--input", "{}"]);
    assert_eq!((r.status, r.stdout.trim_end()), (0, "{}"), "{}", r.stderr);
}

#[test]
fn an_unsigned_component_is_refused_when_a_key_is_given() {
    let (registry, env, _key) = setup();
    let digest = registry.push_component("tools/echo", "v1", &guest("echo.wasm"));
    let reference = registry.reference("tools/echo", &digest);
    let r = pull_verified(&env, &registry.host(), &reference);
    env.assert_refused(&r, &reference, &format!("no cosign signature for {digest} (no tag {}, no referrer)", sig_tag(&digest)));
}

#[test]
fn a_signature_by_another_key_is_refused_naming_the_key_that_was_wanted() {
    let (registry, env, key) = setup();
    let digest = registry.push_component("tools/echo", "v1", &guest("echo.wasm"));
    push_signature(&registry, "tools/echo", &Key::generate(), &digest, &digest);
    let reference = registry.reference("tools/echo", &digest);
    let r = pull_verified(&env, &registry.host(), &reference);
    let why = format!("no signature for {digest} verifies with the keys given (acme.pub {})", key.fingerprint());
    env.assert_refused(&r, &reference, &why);
}

#[test]
fn a_signature_for_another_digest_is_refused() {
    // The key did sign, but another component: its signature, copied under
    // this component's .sig tag, must not make this one pass.
    let (registry, env, key) = setup();
    let digest = registry.push_component("tools/echo", "v1", &guest("echo.wasm"));
    let other = registry.push_component("tools/echo", "v2", &guest("hello.wasm"));
    push_signature(&registry, "tools/echo", &key, &digest, &other);
    let reference = registry.reference("tools/echo", &digest);
    let r = pull_verified(&env, &registry.host(), &reference);
    env.assert_refused(&r, &reference, &format!("the signature verified with acme.pub is for {other}, not the pulled {digest}"));
}

#[test]
fn a_signature_for_another_repository_is_refused() {
    // The key signed this very digest, but as the component of another
    // repository (the same bytes may be pushed under any name): catches a
    // check of the digest alone, which would let a signer's blessing of
    // other/tool stand for tools/echo.
    let (registry, env, key) = setup();
    let digest = registry.push_component("tools/echo", "v1", &guest("echo.wasm"));
    let elsewhere = format!("{}/other/tool", registry.host());
    registry.push("tools/echo", Some(&sig_tag(&digest)), &signature(&key, &elsewhere, &digest));
    let reference = registry.reference("tools/echo", &digest);
    let r = pull_verified(&env, &registry.host(), &reference);
    env.assert_refused(&r, &reference, "is for the repository other/tool, not tools/echo");
}

#[test]
fn a_referrer_signature_is_found_through_the_fallback_tag() {
    // distribution 2.8 has no referrers API: the referrers tag schema's index at sha256-<hex>.
    let (registry, env, key) = setup();
    let wasm = guest("echo.wasm");
    let artifact = Artifact::component(&wasm);
    let digest = registry.push("tools/echo", Some("v1"), &artifact);
    push_referrer(&registry, "tools/echo", &key, &artifact);
    let reference = registry.reference("tools/echo", &digest);
    let r = pull_verified(&env, &registry.host(), &reference);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &digest, &wasm, &verified(&key, &digest))), "{}", r.stderr);
}

#[test]
fn a_referrer_signature_is_found_through_the_referrers_api_even_one_signed_at_a_mirror() {
    let (env, key) = (Env::new(), Key::generate());
    key.write_public(&env.path("acme.pub"));
    let wasm = guest("echo.wasm");
    let artifact = Artifact::component(&wasm);
    let digest = artifact.digest();
    // The payload names another registry host with the same repository (a
    // mirror, where it was signed): accepted, for the repository and the
    // digest bind, not the host the component is pulled from.
    let signature = referrer(&key, "registry.example/tools/echo", &artifact.descriptor());
    let api = format!("/v2/tools/echo/referrers/{digest}");
    let routes = Routes::new().artifact("tools/echo", &artifact).artifact("tools/echo", &signature);
    let registry = Hostile::start(routes.reply(api.clone(), Reply::ok(INDEX, referrers_index(&[&signature]))));
    let reference = registry.reference("tools/echo", &digest);
    let r = pull_verified(&env, &registry.host(), &reference);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &digest, &wasm, &verified(&key, &digest))), "{}", r.stderr);
    assert!(registry.was_asked_for(&api), "{:?}", registry.requests());
}

#[test]
fn a_tag_with_a_key_resolves_to_a_signed_digest_and_an_unsigned_one_is_refused() {
    let (registry, env, key) = setup();
    let wasm = guest("echo.wasm");
    let digest = registry.push_component("tools/echo", "v1", &wasm);
    push_signature(&registry, "tools/echo", &key, &digest, &digest);
    let tagged = format!("oci://{}/tools/echo:v1", registry.host());
    let r = pull_verified(&env, &registry.host(), &tagged);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stdout.contains(&format!("\n  manifest   {digest}\n")), "{}", r.stdout);
    assert!(r.stdout.ends_with(&format!("\n  signature  {}\n", verified(&key, &digest))), "{}", r.stdout);

    // The tag moves to an unsigned build: refused, and nothing of it kept.
    let env = Env::new();
    key.write_public(&env.path("acme.pub"));
    let moved = registry.push_component("tools/echo", "v1", &guest("hello.wasm"));
    let r = pull_verified(&env, &registry.host(), &tagged);
    env.assert_refused(&r, &tagged, &format!("no cosign signature for {moved} (no tag {}, no referrer)", sig_tag(&moved)));
}
