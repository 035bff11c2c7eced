//! Finding the cosign signature of a manifest and checking it: in the cache,
//! or in the registry under the tag `sha256-HEX.sig` and among the manifest's
//! OCI 1.1 referrers (the API, else its fallback tag `sha256-HEX`). What a
//! registry can make Warden fetch is bounded: a few candidates, a few
//! payloads; a broken candidate is passed over, never trusted.

use warden_policy::oci::Digest;

use crate::client::Client;
use crate::cosign::{check, signature_layers, Checked, Other, TrustedKey};
use crate::manifest::Manifest;
use crate::media;
use crate::pull::Verified;
use crate::store::Store;
use crate::shown;

/// Referrers looked at, at most: a registry may list thousands.
const REFERRERS_MAX: usize = 16;
/// Signature manifests fetched, at most (the `.sig` tag and referrers).
const CANDIDATES_MAX: usize = 4;
/// Payloads fetched, at most, over all candidates.
const PAYLOADS_MAX: usize = 8;

/// A signature that verified, and the blobs that prove it, to be stored.
pub struct Found {
    pub verified: Verified,
    pub blobs: Vec<(Digest, Vec<u8>)>,
}

/// A stored signature of `manifest` that still verifies with `keys`.
pub fn from_store(store: &Store, keys: &[TrustedKey], manifest: &Digest, repository: &str) -> Option<Verified> {
    for signature_manifest in store.signatures_of(manifest) {
        let Some(bytes) = store.blob(&signature_manifest, crate::client::MANIFEST_MAX) else { continue };
        let Ok(layers) = signature_layers(&bytes) else { continue };
        for layer in layers {
            let Some(payload) = store.blob(&layer.payload, crate::cosign::PAYLOAD_MAX) else { continue };
            if let Checked::Verified(key) = check(&layer, &payload, keys, manifest, repository) {
                return Some(verified(key, signature_manifest));
            }
        }
    }
    None
}

pub async fn from_registry(client: &mut Client, keys: &[TrustedKey], manifest: &Digest, repository: &str) -> Result<Found, String> {
    let candidates = candidates(client, manifest).await?;
    if candidates.is_empty() {
        return Err(format!("no cosign signature for {manifest} (no tag sha256-{}.sig, no referrer)", manifest.hex()));
    }
    let mut other = None;
    let mut payloads = 0;
    for (digest, bytes) in candidates {
        let Ok(layers) = signature_layers(&bytes) else { continue };
        for layer in layers {
            if payloads == PAYLOADS_MAX {
                break;
            }
            payloads += 1;
            let Ok(payload) = client.blob(&layer.payload, layer.size, "the signature payload").await else { continue };
            match check(&layer, &payload, keys, manifest, repository) {
                Checked::Verified(key) => {
                    let blobs = vec![(layer.payload.clone(), payload), (digest.clone(), bytes)];
                    return Ok(Found { verified: verified(key, digest), blobs });
                }
                Checked::ForAnother(key, named) => other = Some((key.clone(), named)),
                Checked::Unproven => {}
            }
        }
    }
    Err(match other {
        Some((key, named)) => {
            let name = key.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            match named {
                Other::Digest(d) => format!("the signature verified with {name} is for {}, not the pulled {manifest}", shown(&d)),
                Other::Repository(r) => format!("the signature verified with {name} is for the repository {}, not {repository}", shown(&r)),
            }
        }
        None => {
            let shown: Vec<String> = keys.iter().map(TrustedKey::shown).collect();
            format!("no signature for {manifest} verifies with the keys given ({})", shown.join(", "))
        }
    })
}

fn verified(key: &TrustedKey, signature_manifest: Digest) -> Verified {
    Verified { key: key.file.clone(), fingerprint: key.fingerprint.clone(), signature_manifest }
}

/// Signature manifests, each with its digest checked against its bytes.
async fn candidates(client: &mut Client, manifest: &Digest) -> Result<Vec<(Digest, Vec<u8>)>, String> {
    let mut found = Vec::new();
    // A registry that answers the tag with an error still may have a referrer.
    if let Ok(Some(fetched)) = client.manifest(&format!("sha256-{}.sig", manifest.hex())).await {
        found.push((crate::sha256(&fetched.body), fetched.body));
    }
    let index = match client.referrers(manifest, media::COSIGN_ARTIFACT).await {
        Ok(Some(index)) => Some(index),
        // No referrers API: the fallback tag holds the index, if anyone wrote it.
        Ok(None) | Err(_) => client.manifest(&format!("sha256-{}", manifest.hex())).await.ok().flatten().map(|f| f.body),
    };
    let Some(index) = index.and_then(|i| Manifest::parse(&i).ok()) else { return Ok(found) };
    let referrers = index.manifests.unwrap_or_default();
    let cosign = referrers.iter().filter(|r| r.artifact_type.as_deref().is_none_or(|t| t == media::COSIGN_ARTIFACT));
    // Each referrer looked at costs one fetch, whether or not it is a signature of this manifest.
    for (fetches, referrer) in (found.len()..).zip(cosign.take(REFERRERS_MAX)) {
        if fetches == CANDIDATES_MAX {
            break;
        }
        let Ok(digest) = Digest::parse(&referrer.digest) else { continue };
        let Ok(Some(fetched)) = client.manifest(&digest.to_string()).await else { continue };
        if crate::sha256(&fetched.body) != digest {
            continue;
        }
        let subject = Manifest::parse(&fetched.body).ok().and_then(|m| m.subject).map(|s| s.digest);
        if subject.as_deref() == Some(manifest.to_string().as_str()) {
            found.push((digest, fetched.body));
        }
    }
    Ok(found)
}
