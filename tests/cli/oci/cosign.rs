//! Cosign signatures made in the test, without the cosign binary: an ECDSA
//! P-256 key (ring), its public key as cosign writes it, the "simple
//! signing" payload, and the two places cosign stores a signature: the
//! `sha256-<hex>.sig` tag, and an OCI 1.1 referrer (with the tag-schema
//! fallback index at `sha256-<hex>` for registries without the API).

use std::path::Path;

use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

use super::artifact::{Artifact, IMAGE_CONFIG, INDEX, MANIFEST, index};
use super::registry::Registry;
use super::{base64, sha256};

pub const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
pub const SIG_ARTIFACT: &str = "application/vnd.dev.cosign.artifact.sig.v1+json";

/// DER of a P-256 SubjectPublicKeyInfo up to the 65-byte point.
const SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01,
    0x07, 0x03, 0x42, 0x00,
];

pub struct Key {
    pair: EcdsaKeyPair,
    rng: SystemRandom,
}

impl Key {
    pub fn generate() -> Key {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng).unwrap();
        Key { pair, rng }
    }

    /// The public key's SubjectPublicKeyInfo, DER.
    pub fn spki(&self) -> Vec<u8> {
        let mut der = SPKI_PREFIX.to_vec();
        der.extend_from_slice(self.pair.public_key().as_ref());
        der
    }

    /// `sha256:<hex>` of the SubjectPublicKeyInfo DER.
    pub fn fingerprint(&self) -> String {
        sha256(&self.spki())
    }

    /// Writes the public key as `cosign generate-key-pair` does (`cosign.pub`).
    pub fn write_public(&self, path: &Path) {
        let encoded = base64(&self.spki());
        let mut pem = String::from("-----BEGIN PUBLIC KEY-----\n");
        for line in encoded.as_bytes().chunks(64) {
            pem.push_str(std::str::from_utf8(line).unwrap());
            pem.push('\n');
        }
        pem.push_str("-----END PUBLIC KEY-----\n");
        std::fs::write(path, pem).unwrap();
    }

    /// An ASN.1 DER ECDSA signature of `payload`, base64 as cosign's annotation holds it.
    fn sign(&self, payload: &[u8]) -> String {
        base64(self.pair.sign(&self.rng, payload).unwrap().as_ref())
    }
}

/// The simple-signing payload cosign signs for `name` (`HOST:PORT/REPO`) at `digest`.
pub fn payload(name: &str, digest: &str) -> Vec<u8> {
    let payload = json!({
        "critical": {
            "identity": { "docker-reference": name },
            "image": { "docker-manifest-digest": digest },
            "type": "cosign container image signature",
        },
        "optional": null,
    });
    serde_json::to_vec(&payload).unwrap()
}

/// The signature manifest cosign stores under the `.sig` tag: `{}` as its
/// config and one simple-signing layer whose annotation holds the signature.
pub fn signature(key: &Key, name: &str, signed_digest: &str) -> Artifact {
    let payload = payload(name, signed_digest);
    let mut artifact = Artifact::of(IMAGE_CONFIG, b"{}".to_vec(), &[(SIMPLE_SIGNING, payload.as_slice())]);
    artifact.manifest["layers"][0]["annotations"] = json!({ SIGNATURE_ANNOTATION: key.sign(&payload) });
    artifact
}

/// The same signature as an OCI 1.1 referrer of `subject`.
pub fn referrer(key: &Key, name: &str, subject: &Value) -> Artifact {
    let mut artifact = signature(key, name, subject["digest"].as_str().unwrap());
    artifact.manifest["artifactType"] = json!(SIG_ARTIFACT);
    artifact.manifest["config"]["mediaType"] = json!(SIG_ARTIFACT);
    artifact.manifest["subject"] = subject.clone();
    artifact
}

/// `sha256-<hex>.sig`: the tag cosign signs `digest` under.
pub fn sig_tag(digest: &str) -> String {
    format!("{}.sig", fallback_tag(digest))
}

/// `sha256-<hex>`: the referrers tag schema's fallback tag for `digest`.
pub fn fallback_tag(digest: &str) -> String {
    digest.replacen(':', "-", 1)
}

/// The referrers index listing `referrers` (as the API and the fallback tag serve it).
pub fn referrers_index(referrers: &[&Artifact]) -> Vec<u8> {
    index(
        referrers
            .iter()
            .map(|r| json!({ "mediaType": MANIFEST, "artifactType": SIG_ARTIFACT, "digest": r.digest(), "size": r.bytes().len() }))
            .collect(),
    )
}

/// Signs `signed_digest` with `key` and stores it under the `.sig` tag of
/// `tag_digest` (the same digest, but for the test of a signature for another).
pub fn push_signature(registry: &Registry, repo: &str, key: &Key, tag_digest: &str, signed_digest: &str) {
    let name = format!("{}/{repo}", registry.host());
    registry.push(repo, Some(&sig_tag(tag_digest)), &signature(key, &name, signed_digest));
}

/// Signs `subject` as an OCI 1.1 referrer: the referrer by its digest, and
/// (2.8 has no referrers API) the fallback index at `sha256-<hex>`.
pub fn push_referrer(registry: &Registry, repo: &str, key: &Key, subject: &Artifact) {
    let name = format!("{}/{repo}", registry.host());
    let referrer = referrer(key, &name, &subject.descriptor());
    registry.push(repo, None, &referrer);
    registry.push_manifest(repo, &fallback_tag(&subject.digest()), INDEX, &referrers_index(&[&referrer]));
}
