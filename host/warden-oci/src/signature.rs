//! Finding the cosign signature of a manifest and checking it: in the cache,
//! or in the registry under the tag `sha256-HEX.sig` and among the manifest's
//! OCI 1.1 referrers (the API, else its fallback tag `sha256-HEX`).

use warden_policy::oci::Digest;

use crate::client::Client;
use crate::cosign::{check, signature_layers, Checked, TrustedKey};
use crate::manifest::Manifest;
use crate::media;
use crate::pull::Verified;
use crate::store::Store;

/// Referrers looked at, at most: a registry may list thousands.
const REFERRERS_MAX: usize = 16;

/// A signature that verified, and the blobs that prove it, to be stored.
pub struct Found {
    pub verified: Verified,
    pub blobs: Vec<(Digest, Vec<u8>)>,
}

/// The stored signature of `manifest`, if it still verifies with `keys`.
pub fn from_store(store: &Store, keys: &[TrustedKey], manifest: &Digest) -> Option<Verified> {
    let signature_manifest = store.signature_of(manifest)?;
    let bytes = store.blob(&signature_manifest)?;
    for layer in signature_layers(&bytes).ok()? {
        let Some(payload) = store.blob(&layer.payload) else { continue };
        if let Checked::Verified(key) = check(&layer, &payload, keys, manifest) {
            return Some(verified(key, signature_manifest));
        }
    }
    None
}

pub async fn from_registry(client: &mut Client, keys: &[TrustedKey], manifest: &Digest) -> Result<Found, String> {
    let candidates = candidates(client, manifest).await?;
    if candidates.is_empty() {
        return Err(format!("no cosign signature for {manifest} (no tag sha256-{}.sig, no referrer)", manifest.hex()));
    }
    let mut for_another = None;
    for (digest, bytes) in candidates {
        for layer in signature_layers(&bytes)? {
            let payload = client.blob(&layer.payload, layer.size, "the signature payload").await?;
            match check(&layer, &payload, keys, manifest) {
                Checked::Verified(key) => {
                    let blobs = vec![(layer.payload.clone(), payload), (digest.clone(), bytes)];
                    return Ok(Found { verified: verified(key, digest), blobs });
                }
                Checked::ForAnother(key, named) => for_another = Some((key.clone(), named)),
                Checked::Unproven => {}
            }
        }
    }
    Err(match for_another {
        Some((key, named)) => {
            let name = key.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            format!("the signature verified with {name} is for {}, not the pulled {manifest}", named.escape_debug())
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
    if let Some(fetched) = client.manifest(&format!("sha256-{}.sig", manifest.hex())).await? {
        found.push((crate::sha256(&fetched.body), fetched.body));
    }
    let index = match client.referrers(manifest, media::COSIGN_ARTIFACT).await {
        Ok(Some(index)) => Some(index),
        // No referrers API: the fallback tag holds the index, if anyone wrote it.
        Ok(None) | Err(_) => client.manifest(&format!("sha256-{}", manifest.hex())).await?.map(|f| f.body),
    };
    let Some(index) = index else { return Ok(found) };
    let Ok(index) = Manifest::parse(&index) else { return Ok(found) };
    let referrers = index.manifests.unwrap_or_default();
    for referrer in referrers.iter().filter(|r| r.artifact_type.as_deref().is_none_or(|t| t == media::COSIGN_ARTIFACT)).take(REFERRERS_MAX) {
        let Ok(digest) = Digest::parse(&referrer.digest) else { continue };
        let Some(fetched) = client.manifest(&digest.to_string()).await? else { continue };
        if crate::sha256(&fetched.body) != digest {
            return Err(format!("the registry sent a signature manifest with digest {} for {digest}", crate::sha256(&fetched.body)));
        }
        let subject = Manifest::parse(&fetched.body).ok().and_then(|m| m.subject).map(|s| s.digest);
        if subject.as_deref() == Some(manifest.to_string().as_str()) {
            found.push((digest, fetched.body));
        }
    }
    Ok(found)
}
