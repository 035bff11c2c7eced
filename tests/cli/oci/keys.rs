//! Which key signed is part of what the cache remembers: a signature by
//! one key never stands for another, and a component trusted under two keys
//! (two tools, two signers) keeps both signatures.

use std::path::PathBuf;

use super::artifact::Artifact;
use super::cosign::{Key, push_referrer, push_signature};
use super::registry::Registry;
use super::{Env, Run, guest, pulled};

/// A registry, and a test folder holding `a.pub` and `b.pub` for the two keys.
fn setup() -> (Registry, Env, Key, Key) {
    let (registry, env, a, b) = (Registry::start(), Env::new(), Key::generate(), Key::generate());
    a.write_public(&env.path("a.pub"));
    b.write_public(&env.path("b.pub"));
    (registry, env, a, b)
}

fn by(name: &str, key: &Key, digest: &str) -> String {
    format!("verified: {name} ({}) signed {digest}", key.fingerprint())
}

fn sorted_cache(env: &Env) -> Vec<PathBuf> {
    let mut files = env.cached_files();
    files.sort();
    files
}

/// Refused for `reason`, and the cache as it was.
#[track_caller]
fn assert_refused_keeping(env: &Env, r: &Run, reference: &str, reason: &str, kept: &[PathBuf]) {
    assert_eq!((r.status, r.stdout.as_str()), (1, ""), "{}", r.stderr);
    assert!(r.stderr.starts_with(&format!("warden: cannot pull {reference}: ")), "{}", r.stderr);
    assert!(r.stderr.contains(reason), "expected {reason:?} in: {}", r.stderr);
    assert_eq!(sorted_cache(env), kept, "a refused pull changed the cache");
}

#[test]
fn a_signature_cached_for_one_key_does_not_stand_for_another() {
    // Catches a cache that remembers "signed" rather than "signed by whom":
    // B never signed, so neither the cache nor the registry may say it did.
    let (registry, env, a, b) = setup();
    let wasm = guest("echo.wasm");
    let digest = registry.push_component("tools/echo", "v1", &wasm);
    push_signature(&registry, "tools/echo", &a, &digest, &digest);
    let (reference, host) = (registry.reference("tools/echo", &digest), registry.host());
    let r = env.warden(&["pull", "--insecure-registry", &host, "--verify-key", "a.pub", &reference]);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &digest, &wasm, &by("a.pub", &a, &digest))), "{}", r.stderr);
    let kept = sorted_cache(&env);

    let r = env.warden(&["pull", "--offline", "--verify-key", "b.pub", &reference]);
    let why = format!("{digest} is not in the cache with a signature by the keys given, and --offline was given");
    assert_refused_keeping(&env, &r, &reference, &why, &kept);
    let r = env.warden(&["pull", "--insecure-registry", &host, "--verify-key", "b.pub", &reference]);
    let why = format!("no signature for {digest} verifies with the keys given (b.pub {})", b.fingerprint());
    assert_refused_keeping(&env, &r, &reference, &why, &kept);

    drop(registry);
    let r = env.warden(&["pull", "--offline", "--verify-key", "a.pub", "--verify-key", "b.pub", &reference]);
    assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &digest, &wasm, &by("a.pub", &a, &digest))), "{}", r.stderr);
}

#[test]
fn one_digest_signed_by_two_keys_is_trusted_offline_under_each() {
    // Two tools pin the same component, each trusting its own signer: A's
    // signature under the .sig tag, B's as a referrer. Catches a cache that
    // keeps one signature per digest, so that pulling for B forgets A.
    let (registry, env, a, b) = setup();
    let wasm = guest("echo.wasm");
    let artifact = Artifact::component(&wasm);
    let digest = registry.push("tools/echo", Some("v1"), &artifact);
    push_signature(&registry, "tools/echo", &a, &digest, &digest);
    push_referrer(&registry, "tools/echo", &b, &artifact);
    let (reference, host) = (registry.reference("tools/echo", &digest), registry.host());
    for (name, key) in [("a.pub", &a), ("b.pub", &b)] {
        let r = env.warden(&["pull", "--insecure-registry", &host, "--verify-key", name, &reference]);
        assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &digest, &wasm, &by(name, key, &digest))), "{name}: {}", r.stderr);
    }
    drop(registry);
    for (name, key) in [("a.pub", &a), ("b.pub", &b)] {
        let r = env.warden(&["pull", "--offline", "--verify-key", name, &reference]);
        assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &digest, &wasm, &by(name, key, &digest))), "{name}: {}", r.stderr);
    }
}
