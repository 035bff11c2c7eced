//! Which signatures a hostile registry can make Warden look at: referrers
//! (OCI 1.1, through the API) that are for another manifest, more of them
//! than Warden reads, and candidates that do not parse.

use serde_json::{Value, json};

use super::artifact::{Artifact, INDEX, MANIFEST, index};
use super::cosign::{Key, SIG_ARTIFACT, referrer, referrers_index, sig_tag};
use super::hostile::{Hostile, Reply, Routes, manifest_path};
use super::refusals::{REPO, echo, pull};
use super::{Env, guest, pulled, sha256};

/// A test folder holding `acme.pub`, and the key behind it.
fn setup() -> (Env, Key) {
    let (env, key) = (Env::new(), Key::generate());
    key.write_public(&env.path("acme.pub"));
    (env, key)
}

fn verified(key: &Key, digest: &str) -> String {
    format!("verified: acme.pub ({}) signed {digest}", key.fingerprint())
}

fn referrers_path(digest: &str) -> String {
    format!("/v2/{REPO}/referrers/{digest}")
}

/// An entry of a referrers index: a cosign signature manifest of `size` bytes.
fn listing(digest: &str, size: usize) -> Value {
    json!({ "mediaType": MANIFEST, "artifactType": SIG_ARTIFACT, "digest": digest, "size": size })
}

/// `signatures` (with their blobs) and the referrers API listing `listed` for `artifact`.
fn serving(artifact: &Artifact, signatures: &[Artifact], listed: Vec<u8>) -> Routes {
    let routes = Routes::new().artifact(REPO, artifact).reply(referrers_path(&artifact.digest()), Reply::ok(INDEX, listed));
    signatures.iter().fold(routes, |routes, signature| routes.artifact(REPO, signature))
}

#[test]
fn a_referrer_filed_under_another_subject_is_not_a_signature_of_this_manifest() {
    // Its payload names this digest and verifies with the key, but its
    // subject is another manifest: catches a client that takes whatever the
    // referrers API lists without checking what it refers to.
    let ((env, key), (_, artifact)) = (setup(), echo());
    let other = Artifact::component(&guest("hello.wasm"));
    let registry = Hostile::start_with("127.0.0.1", |host| {
        let mut signature = referrer(&key, &format!("{host}/{REPO}"), &artifact.descriptor());
        signature.manifest["subject"] = other.descriptor();
        serving(&artifact, std::slice::from_ref(&signature), referrers_index(&[&signature]))
    });
    let reference = registry.reference(REPO, &artifact.digest());
    let r = pull(&env, &registry, &reference, &["--verify-key", "acme.pub"]);
    env.assert_refused(&r, &reference, &format!("no cosign signature for {}", artifact.digest()));
    assert!(registry.was_asked_for(&referrers_path(&artifact.digest())), "{:?}", registry.requests());
}

#[test]
fn only_the_first_16_referrers_are_read() {
    // Nineteen signatures of other manifests, and the one of this manifest
    // listed 20th: past what Warden reads (a registry may list thousands), so
    // refused, and the 17th to 20th never asked for. Listed first, it is found.
    let (key, (wasm, artifact)) = (Key::generate(), echo());
    for valid_first in [false, true] {
        let env = Env::new();
        key.write_public(&env.path("acme.pub"));
        let mut signatures = Vec::new();
        let registry = Hostile::start_with("127.0.0.1", |host| {
            let name = format!("{host}/{REPO}");
            signatures = (0..19u8).map(|i| referrer(&key, &name, &Artifact::component(&[i; 8]).descriptor())).collect();
            let valid = referrer(&key, &name, &artifact.descriptor());
            match valid_first {
                true => signatures.insert(0, valid),
                false => signatures.push(valid),
            }
            serving(&artifact, &signatures, referrers_index(&signatures.iter().collect::<Vec<_>>()))
        });
        let reference = registry.reference(REPO, &artifact.digest());
        let r = pull(&env, &registry, &reference, &["--verify-key", "acme.pub"]);
        if valid_first {
            assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &artifact.digest(), &wasm, &verified(&key, &artifact.digest()))), "{}", r.stderr);
            continue;
        }
        env.assert_refused(&r, &reference, &format!("no cosign signature for {}", artifact.digest()));
        for unread in &signatures[16..] {
            assert!(!registry.was_asked_for(&manifest_path(REPO, &unread.digest())), "{:?}", registry.requests());
        }
    }
}

#[test]
fn a_candidate_that_does_not_parse_does_not_hide_a_valid_signature() {
    // Catches a client that gives up at the first broken candidate: whoever
    // can push a tag could then block every signature with garbage under
    // `.sig`, or list a garbage referrer before the real one.
    let (key, (wasm, artifact)) = (Key::generate(), echo());
    let garbage = b"{ this is not a manifest".to_vec();
    for garbage_at_the_tag in [true, false] {
        let env = Env::new();
        key.write_public(&env.path("acme.pub"));
        let registry = Hostile::start_with("127.0.0.1", |host| {
            let signature = referrer(&key, &format!("{host}/{REPO}"), &artifact.descriptor());
            let listed = listing(&signature.digest(), signature.bytes().len());
            let routes = match garbage_at_the_tag {
                true => serving(&artifact, std::slice::from_ref(&signature), index(vec![listed]))
                    .manifest(REPO, &sig_tag(&artifact.digest()), MANIFEST, garbage.clone()),
                false => serving(&artifact, std::slice::from_ref(&signature), index(vec![listing(&sha256(&garbage), garbage.len()), listed])),
            };
            routes.manifest(REPO, &sha256(&garbage), MANIFEST, garbage.clone())
        });
        let reference = registry.reference(REPO, &artifact.digest());
        let r = pull(&env, &registry, &reference, &["--verify-key", "acme.pub"]);
        let signed = verified(&key, &artifact.digest());
        assert_eq!((r.status, r.stdout.clone()), (0, pulled(&reference, &artifact.digest(), &wasm, &signed)), "{}", r.stderr);
    }
}
