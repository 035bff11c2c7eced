//! The manifest of a component artifact, checked before any layer is
//! fetched: one wasm layer of a known type, within the size cap, and nothing
//! else a plugin could slip in.

use std::collections::BTreeMap;

use serde::Deserialize;
use warden_policy::oci::Digest;

use crate::{media, shown};

#[derive(Debug, Deserialize)]
pub struct Manifest {
    #[serde(rename = "schemaVersion")]
    pub schema_version: Option<u32>,
    #[serde(rename = "mediaType")]
    pub media_type: Option<String>,
    pub config: Option<Descriptor>,
    #[serde(default)]
    pub layers: Vec<Descriptor>,
    pub manifests: Option<Vec<Descriptor>>,
    pub subject: Option<Descriptor>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Descriptor {
    #[serde(rename = "mediaType")]
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    #[serde(default)]
    pub urls: Vec<String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    #[serde(rename = "artifactType")]
    pub artifact_type: Option<String>,
}

/// The one layer of a component artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub digest: Digest,
    pub size: u64,
}

impl Manifest {
    pub fn parse(bytes: &[u8]) -> Result<Manifest, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("the manifest is not an OCI manifest: {}", shown(&e.to_string())))
    }

    fn is_index(&self, content_type: Option<&str>) -> Option<String> {
        let named = [self.media_type.as_deref(), content_type].into_iter().flatten().find(|t| *t == media::OCI_INDEX || *t == media::DOCKER_LIST);
        match (named, &self.manifests) {
            (Some(named), _) => Some(named.to_owned()),
            (None, Some(_)) => Some(media::OCI_INDEX.to_owned()),
            (None, None) => None,
        }
    }
}

/// The layer to fetch, when `bytes` is a component artifact's manifest.
pub fn component_layer(bytes: &[u8], content_type: Option<&str>, max_size: u64) -> Result<Layer, String> {
    let manifest = Manifest::parse(bytes)?;
    let content_type = content_type.map(|t| t.split(';').next().unwrap_or(t).trim());
    if let Some(index) = manifest.is_index(content_type) {
        return Err(format!("it is an image index ({}), not a component: name the component's own manifest by its digest", shown(&index)));
    }
    let claimed = manifest.media_type.as_deref().or(content_type).unwrap_or("no media type");
    if claimed != media::OCI_MANIFEST {
        return Err(format!("the manifest has media type {}; a component artifact is an OCI image manifest ({})", shown(claimed), media::OCI_MANIFEST));
    }
    if let (Some(own), Some(sent)) = (manifest.media_type.as_deref(), content_type)
        && own != sent
    {
        return Err(format!("the registry sent the manifest as {}, and it calls itself {}", shown(sent), shown(own)));
    }
    if manifest.schema_version != Some(2) {
        return Err("the manifest's schemaVersion is not 2".into());
    }
    if let Some(policy) = manifest.layers.iter().find(|l| claims_policy(l)) {
        return Err(format!(
            "a layer claims to be a policy ({}): refused, Warden never applies a policy from a registry; the policy that runs a tool is the operator's",
            describe(policy)
        ));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(format!("the manifest has {} layers; a component artifact has exactly one", manifest.layers.len()));
    };
    let config = manifest.config.as_ref().map_or("none", |c| c.media_type.as_str());
    let config_ok = match layer.media_type.as_str() {
        media::WASM_LAYER => config == media::WASM_CONFIG,
        media::BCA_LAYER => config == media::OCI_CONFIG || config == media::WASM_CONFIG,
        other => {
            return Err(format!(
                "the layer has media type {}; a component is {} or {}",
                shown(other),
                media::WASM_LAYER,
                media::BCA_LAYER
            ));
        }
    };
    if !config_ok {
        return Err(format!("the config has media type {}, which a {} layer does not go with", shown(config), layer.media_type));
    }
    if !layer.urls.is_empty() {
        return Err("the layer names other URLs to fetch it from; Warden fetches a layer from its registry only".into());
    }
    let digest = Digest::parse(&layer.digest).map_err(|e| format!("the layer's digest: {}", shown(&e)))?;
    if layer.size > max_size {
        return Err(format!("the layer is {} bytes, over the max_size of {max_size} bytes", layer.size));
    }
    Ok(Layer { digest, size: layer.size })
}

/// By its media type, or a file name of a policy's kind on a layer that is
/// not wasm: a plugin cannot grant itself access, so such a layer is refused
/// by name and never read (a wasm layer named `opa-policy.wasm` is a component).
fn claims_policy(layer: &Descriptor) -> bool {
    let media_type = layer.media_type.to_ascii_lowercase();
    let title = layer.annotations.get("org.opencontainers.image.title").map(|t| t.to_ascii_lowercase()).unwrap_or_default();
    let wasm = media_type == media::WASM_LAYER || media_type == media::BCA_LAYER;
    media_type.contains("policy") || media_type.contains("yaml") || (!wasm && (title.contains("policy") || title.ends_with(".yaml") || title.ends_with(".yml")))
}

/// What a refused layer says it is, as text: its media type, name, size and digest.
fn describe(layer: &Descriptor) -> String {
    let title = layer.annotations.get("org.opencontainers.image.title").map(|t| format!(", '{}'", shown(t))).unwrap_or_default();
    format!("{}{title}, {} bytes, {}", shown(&layer.media_type), layer.size, shown(&layer.digest))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WASM: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000001";

    fn manifest(config: &str, layers: &str) -> String {
        format!(
            r#"{{"schemaVersion":2,"mediaType":"{}","config":{{"mediaType":"{config}","digest":"{WASM}","size":2}},"layers":[{layers}]}}"#,
            media::OCI_MANIFEST
        )
    }

    fn layer(media_type: &str) -> String {
        format!(r#"{{"mediaType":"{media_type}","digest":"{WASM}","size":100}}"#)
    }

    #[test]
    fn the_cncf_and_the_older_layouts_are_components() {
        let cncf = manifest(media::WASM_CONFIG, &layer(media::WASM_LAYER));
        assert_eq!(component_layer(cncf.as_bytes(), Some(media::OCI_MANIFEST), 1000).unwrap().size, 100);
        let older = manifest(media::OCI_CONFIG, &layer(media::BCA_LAYER));
        assert!(component_layer(older.as_bytes(), None, 1000).is_ok());
    }

    #[test]
    fn a_policy_layer_is_refused_even_beside_a_component() {
        let two = format!("{},{}", layer(media::WASM_LAYER), layer("application/vnd.warden.policy.v1+yaml"));
        let error = component_layer(manifest(media::WASM_CONFIG, &two).as_bytes(), None, 1000).unwrap_err();
        assert!(error.starts_with("a layer claims to be a policy (application/vnd.warden.policy.v1+yaml, 100 bytes, sha256:"), "{error}");
    }

    #[test]
    fn a_layer_over_the_cap_is_refused_before_it_is_fetched() {
        let error = component_layer(manifest(media::WASM_CONFIG, &layer(media::WASM_LAYER)).as_bytes(), None, 99).unwrap_err();
        assert_eq!(error, "the layer is 100 bytes, over the max_size of 99 bytes");
    }

    #[test]
    fn a_layer_with_foreign_urls_is_refused() {
        let with_urls = format!(r#"{{"mediaType":"{}","digest":"{WASM}","size":1,"urls":["https://evil.example/x"]}}"#, media::WASM_LAYER);
        let error = component_layer(manifest(media::WASM_CONFIG, &with_urls).as_bytes(), None, 1000).unwrap_err();
        assert!(error.contains("names other URLs"), "{error}");
    }

    #[test]
    fn a_manifest_that_calls_itself_an_index_is_refused_whatever_the_header() {
        let index = format!(r#"{{"schemaVersion":2,"mediaType":"{}","manifests":[]}}"#, media::OCI_INDEX);
        let error = component_layer(index.as_bytes(), Some(media::OCI_MANIFEST), 1000).unwrap_err();
        assert!(error.starts_with("it is an image index (application/vnd.oci.image.index.v1+json), not a component"), "{error}");
        let mismatch = manifest(media::WASM_CONFIG, &layer(media::WASM_LAYER));
        assert!(component_layer(mismatch.as_bytes(), Some("application/vnd.docker.distribution.manifest.v2+json"), 1000).is_err());
    }
}
