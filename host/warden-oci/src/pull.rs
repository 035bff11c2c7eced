//! Pulling one component: from the cache when everything it needs is there
//! and still checks out, otherwise from its registry, checked, then stored.

use std::path::PathBuf;
use std::time::Duration;

use indexmap::IndexMap;
use warden_policy::oci::{is_loopback_host, Digest, OciRef, RegistrySettings};

use crate::client::{Client, MANIFEST_MAX};
use crate::cosign::TrustedKey;
use crate::credentials::Credentials;
use crate::http::Http;
use crate::manifest::component_layer;
use crate::signature::{self, Found};
use crate::store::Store;
use crate::media;

/// One pull's whole deadline, in request timeouts: a registry cannot keep
/// Warden asking (a token, the manifest, the layer, signatures) for long.
const PULL_REQUESTS: u32 = 5;

/// How the registries are reached, and where the cache is.
#[derive(Debug, Clone)]
pub struct Puller {
    /// By `HOST[:PORT]`.
    pub registries: IndexMap<String, RegistrySettings>,
    /// The Docker config with the credentials, read only when a registry is asked
    /// (`None`: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`).
    pub registry_config: Option<PathBuf>,
    /// The cache only; nothing is asked of a registry.
    pub offline: bool,
    /// For each request to a registry, from the first byte sent to the last received.
    pub timeout: Duration,
    /// `None`: pulled into memory only.
    pub store: Option<Store>,
}

/// One component to pull.
#[derive(Debug, Clone)]
pub struct Request {
    pub reference: OciRef,
    /// The manifest digest required: the reference's or a lock's.
    pub pin: Option<Digest>,
    pub verify_keys: Vec<PathBuf>,
    pub max_size: u64,
}

#[derive(Debug, Clone)]
pub struct Pulled {
    /// The reference with the manifest digest.
    pub reference: OciRef,
    pub manifest: Digest,
    pub layer: Digest,
    pub blake3: String,
    pub bytes: Vec<u8>,
    pub signature: Option<Verified>,
    /// Nothing was asked of the registry.
    pub from_cache: bool,
}

/// The signature that verified.
#[derive(Debug, Clone)]
pub struct Verified {
    pub key: PathBuf,
    pub fingerprint: String,
    pub signature_manifest: Digest,
}

impl Puller {
    /// Pulls, checks and stores one component; the error says what failed.
    pub fn pull(&self, request: &Request) -> Result<Pulled, String> {
        let keys = request.verify_keys.iter().map(|k| TrustedKey::load(k)).collect::<Result<Vec<_>, _>>()?;
        if let Some(store) = &self.store {
            store.check()?;
        }
        if let Some(pulled) = self.cached(request, &keys) {
            return Ok(pulled);
        }
        if self.offline {
            return Err(match request.pin.as_ref().or(request.reference.digest.as_ref()) {
                Some(digest) if keys.is_empty() => format!("{digest} is not in the cache and --offline was given"),
                Some(digest) => format!("{digest} is not in the cache with a signature by the keys given, and --offline was given"),
                None => "a tag cannot be resolved offline; pin it with `warden lock` or by digest".into(),
            });
        }
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| format!("cannot start the registry client: {e}"))?;
                    let whole = self.timeout.saturating_mul(PULL_REQUESTS);
                    let pulled = runtime.block_on(async {
                        tokio::time::timeout(whole, self.fetch(request, &keys))
                            .await
                            .unwrap_or_else(|_| Err(format!("the pull took longer than {} s ({PULL_REQUESTS} times --registry-timeout)", whole.as_secs())))
                    });
                    // A name lookup still running on the blocking pool is not waited for.
                    runtime.shutdown_timeout(Duration::from_millis(100));
                    pulled
                })
                .join()
                .unwrap_or_else(|_| Err("the registry client panicked".into()))
        })
    }

    /// Everything from the cache, each blob checked again, or `None`.
    fn cached(&self, request: &Request, keys: &[TrustedKey]) -> Option<Pulled> {
        let store = self.store.as_ref()?;
        let manifest = request.pin.clone().or_else(|| request.reference.digest.clone())?;
        if request.reference.digest.as_ref().is_some_and(|d| *d != manifest) {
            return None;
        }
        let manifest_bytes = store.blob(&manifest, MANIFEST_MAX)?;
        // Only a manifest that passed as an OCI manifest was stored.
        let layer = component_layer(&manifest_bytes, Some(media::OCI_MANIFEST), request.max_size).ok()?;
        let (bytes, blake3) = store.layer(&layer.digest, layer.size)?;
        let signature = match keys.is_empty() {
            true => None,
            false => Some(signature::from_store(store, keys, &manifest, &request.reference.repository)?),
        };
        Some(self.pulled(request, manifest, layer.digest, (bytes, blake3), signature, true))
    }

    async fn fetch(&self, request: &Request, keys: &[TrustedKey]) -> Result<Pulled, String> {
        let reference = &request.reference;
        let mut client = self.client(reference)?;
        let wanted = request.pin.clone().or_else(|| reference.digest.clone());
        if let (Some(pin), Some(own)) = (&request.pin, &reference.digest)
            && pin != own
        {
            return Err(format!("the reference names {own}, and the pin is {pin}"));
        }
        let asked = match &wanted {
            Some(digest) => digest.to_string(),
            None => reference.tag.clone().expect("a reference names a tag or a digest"),
        };
        let fetched = client.manifest(&asked).await?.ok_or_else(|| format!("the registry has no manifest {asked} in {}", reference.repository))?;
        let manifest = crate::sha256(&fetched.body);
        if let Some(wanted) = &wanted
            && manifest != *wanted
        {
            return Err(format!("the registry sent a manifest with digest {manifest} for {wanted}"));
        }
        if let Some(said) = fetched.headers.get("docker-content-digest").and_then(|v| v.to_str().ok())
            && said != manifest.to_string()
        {
            return Err(format!("the registry says the manifest is {}, and its bytes are {manifest}", crate::shown(said)));
        }
        let content_type = fetched.headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        let layer = component_layer(&fetched.body, content_type, request.max_size)?;
        let bytes = client.blob(&layer.digest, layer.size, "the layer").await?;
        let found = match keys.is_empty() {
            true => None,
            false => Some(signature::from_registry(&mut client, keys, &manifest, &reference.repository).await?),
        };
        if let Some(store) = &self.store {
            store.put_blob(&layer.digest, &bytes)?;
            if let Some(found) = &found {
                store_signature(store, &manifest, found)?;
            }
            // The manifest last: a manifest in the store means its layer is there.
            store.put_blob(&manifest, &fetched.body)?;
        }
        let verified = found.map(|f| f.verified);
        let blake3 = blake3::hash(&bytes).to_hex().to_string();
        Ok(self.pulled(request, manifest, layer.digest, (bytes, blake3), verified, false))
    }

    fn pulled(&self, request: &Request, manifest: Digest, layer: Digest, (bytes, blake3): (Vec<u8>, String), signature: Option<Verified>, from_cache: bool) -> Pulled {
        Pulled {
            reference: request.reference.pinned(manifest.clone()),
            manifest,
            layer,
            blake3,
            bytes,
            signature,
            from_cache,
        }
    }

    fn client(&self, reference: &OciRef) -> Result<Client, String> {
        let insecure = self.registries.get(&reference.registry).is_some_and(|r| r.insecure);
        if insecure && !is_loopback_host(reference.host()) {
            return Err(format!("plain HTTP is allowed only for a loopback registry, not {}", reference.registry));
        }
        let credentials = Credentials::load(self.registry_config.as_deref())?;
        let basic = credentials.for_registry(&reference.registry).cloned();
        Ok(Client::new(Http::new(self.timeout), !insecure, &reference.registry, &reference.repository, basic))
    }
}

fn store_signature(store: &Store, manifest: &Digest, found: &Found) -> Result<(), String> {
    for (digest, bytes) in &found.blobs {
        store.put_blob(digest, bytes)?;
    }
    store.put_signature(manifest, &found.verified.signature_manifest)
}
