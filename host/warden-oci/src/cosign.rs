//! Cosign's key-based "simple signing": a JSON payload naming the manifest
//! digest, signed with ECDSA P-256 over SHA-256 (ASN.1 DER), the signature
//! in the payload layer's annotation. Only the digest binds: the payload
//! must name the very manifest that was pulled.

use std::path::{Path, PathBuf};

use base64::Engine;
use ring::signature::{UnparsedPublicKey, ECDSA_P256_SHA256_ASN1};
use serde::Deserialize;
use warden_policy::oci::Digest;

use crate::manifest::Manifest;
use crate::media;

/// A payload is a few hundred bytes of JSON.
pub const PAYLOAD_MAX: u64 = 64 << 10;
/// Signature layers tried in one signature manifest.
const LAYERS_MAX: usize = 32;
/// The DER SubjectPublicKeyInfo prefix of every P-256 public key.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01,
    0x07, 0x03, 0x42, 0x00,
];

/// A public key a signature must be made with.
#[derive(Debug, Clone)]
pub struct TrustedKey {
    pub file: PathBuf,
    /// `sha256:` of the key's DER form, as `cosign public-key` shows it hashed.
    pub fingerprint: String,
    point: Vec<u8>,
}

impl TrustedKey {
    pub fn load(file: &Path) -> Result<TrustedKey, String> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read the key {}: {e}", file.display()))?;
        let not_a_key = || format!("{} is not a cosign ECDSA P-256 public key (PEM 'PUBLIC KEY')", file.display());
        let body = text
            .trim()
            .strip_prefix("-----BEGIN PUBLIC KEY-----")
            .and_then(|rest| rest.strip_suffix("-----END PUBLIC KEY-----"))
            .ok_or_else(not_a_key)?;
        let compact: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let der = base64::engine::general_purpose::STANDARD.decode(compact).map_err(|_| not_a_key())?;
        if der.len() != P256_SPKI_PREFIX.len() + 65 || der[..P256_SPKI_PREFIX.len()] != P256_SPKI_PREFIX {
            return Err(not_a_key());
        }
        Ok(TrustedKey { file: file.to_path_buf(), fingerprint: crate::sha256(&der).to_string(), point: der[P256_SPKI_PREFIX.len()..].to_vec() })
    }

    /// The file name and fingerprint, as messages show the key.
    pub fn shown(&self) -> String {
        let name = self.file.file_name().map_or_else(|| self.file.display().to_string(), |n| n.to_string_lossy().into_owned());
        format!("{name} {}", self.fingerprint)
    }

    fn verifies(&self, payload: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, &self.point).verify(payload, signature).is_ok()
    }
}

/// One signature to check: its payload blob and the signature over it.
#[derive(Debug, Clone)]
pub struct SignatureLayer {
    pub payload: Digest,
    pub size: u64,
    signature: Vec<u8>,
}

/// The simple-signing layers of a signature manifest; others are ignored.
pub fn signature_layers(manifest: &[u8]) -> Result<Vec<SignatureLayer>, String> {
    let manifest = Manifest::parse(manifest).map_err(|e| format!("the signature manifest: {e}"))?;
    let mut layers = Vec::new();
    for layer in manifest.layers.iter().filter(|l| l.media_type == media::COSIGN_PAYLOAD).take(LAYERS_MAX) {
        let Some(encoded) = layer.annotations.get(media::COSIGN_SIGNATURE_ANNOTATION) else { continue };
        let Ok(signature) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else { continue };
        let Ok(payload) = Digest::parse(&layer.digest) else { continue };
        if layer.size <= PAYLOAD_MAX {
            layers.push(SignatureLayer { payload, size: layer.size, signature });
        }
    }
    Ok(layers)
}

/// What one signature layer proved.
pub enum Checked<'k> {
    /// Made with this key, for the pulled manifest of this repository.
    Verified(&'k TrustedKey),
    /// Made with this key, for something else.
    ForAnother(&'k TrustedKey, Other),
    /// Made with none of the keys, or not a cosign payload.
    Unproven,
}

/// What a signature by a trusted key names instead of what was pulled.
#[derive(Debug, Clone)]
pub enum Other {
    Digest(String),
    Repository(String),
}

/// Checks a payload against the keys, the pulled manifest and its
/// repository. The payload's `docker-reference` must name the repository
/// (its registry may differ: a mirror), so that a key's signature on one
/// tool cannot be served under another tool's name.
pub fn check<'k>(layer: &SignatureLayer, payload: &[u8], keys: &'k [TrustedKey], pulled: &Digest, repository: &str) -> Checked<'k> {
    let Some(key) = keys.iter().find(|k| k.verifies(payload, &layer.signature)) else { return Checked::Unproven };
    #[derive(Deserialize)]
    struct Payload {
        critical: Critical,
    }
    #[derive(Deserialize)]
    struct Critical {
        #[serde(rename = "type")]
        kind: String,
        image: Image,
        identity: Identity,
    }
    #[derive(Deserialize)]
    struct Identity {
        #[serde(rename = "docker-reference")]
        reference: String,
    }
    #[derive(Deserialize)]
    struct Image {
        #[serde(rename = "docker-manifest-digest")]
        digest: String,
    }
    let Ok(payload) = serde_json::from_slice::<Payload>(payload) else { return Checked::Unproven };
    let critical = payload.critical;
    if critical.kind != "cosign container image signature" {
        return Checked::Unproven;
    }
    if critical.image.digest != pulled.to_string() {
        return Checked::ForAnother(key, Other::Digest(critical.image.digest));
    }
    let named = critical.identity.reference.split_once('/').map_or("", |(_, path)| path);
    let named = named.split(['@', ':']).next().unwrap_or(named);
    if named != repository {
        return Checked::ForAnother(key, Other::Repository(named.to_owned()));
    }
    Checked::Verified(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_of_another_curve_or_kind_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rsa.pub");
        std::fs::write(&file, "-----BEGIN PUBLIC KEY-----\nMFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAK1b\n-----END PUBLIC KEY-----\n").unwrap();
        let error = TrustedKey::load(&file).unwrap_err();
        assert!(error.ends_with("rsa.pub is not a cosign ECDSA P-256 public key (PEM 'PUBLIC KEY')"), "{error}");
    }
}
