//! OCI manifests as the tests push and serve them: the CNCF wasm artifact,
//! the older bytecodealliance layout, and any manifest a test edits by hand.

use serde_json::{Value, json};

use super::sha256;

pub const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
pub const WASM_LAYER: &str = "application/wasm";
pub const IMAGE_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
pub const LEGACY_LAYER: &str = "application/vnd.bytecodealliance.wasm.component.layer.v0+wasm";

/// A manifest and the blobs it names (config first, then the layers).
#[derive(Clone)]
pub struct Artifact {
    pub manifest: Value,
    pub blobs: Vec<Vec<u8>>,
}

impl Artifact {
    /// The CNCF wasm OCI artifact: a `wasip2` config and one `application/wasm` layer.
    pub fn component(wasm: &[u8]) -> Artifact {
        Artifact::wasm(&[(WASM_LAYER, wasm)])
    }

    /// A CNCF wasm config over these `(media type, bytes)` layers, whatever they are.
    pub fn wasm(layers: &[(&str, &[u8])]) -> Artifact {
        let digests: Vec<String> = layers.iter().map(|(_, bytes)| sha256(bytes)).collect();
        let config = json!({
            "created": "2026-01-01T00:00:00Z",
            "architecture": "wasm",
            "os": "wasip2",
            "layerDigests": digests,
            "component": { "exports": [], "imports": [] },
        });
        Artifact::of(WASM_CONFIG, serde_json::to_vec(&config).unwrap(), layers)
    }

    /// The older layout (runwasi, Warg): an ordinary image config and one
    /// `…wasm.component.layer.v0+wasm` layer.
    pub fn legacy_component(wasm: &[u8]) -> Artifact {
        let config = json!({ "architecture": "wasm", "os": "wasip2", "rootfs": { "type": "layers", "diff_ids": [sha256(wasm)] } });
        Artifact::of(IMAGE_CONFIG, serde_json::to_vec(&config).unwrap(), &[(LEGACY_LAYER, wasm)])
    }

    /// An image manifest with this config and these `(media type, bytes)` layers.
    pub fn of(config_type: &str, config: Vec<u8>, layers: &[(&str, &[u8])]) -> Artifact {
        let descriptors: Vec<Value> = layers.iter().map(|(media_type, bytes)| descriptor(media_type, bytes)).collect();
        let manifest = json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST,
            "config": descriptor(config_type, &config),
            "layers": descriptors,
        });
        let mut blobs = vec![config];
        blobs.extend(layers.iter().map(|(_, bytes)| bytes.to_vec()));
        Artifact { manifest, blobs }
    }

    /// The manifest's bytes, exactly as pushed or served.
    pub fn bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.manifest).unwrap()
    }

    /// `sha256:<hex>` of [`Artifact::bytes`].
    pub fn digest(&self) -> String {
        sha256(&self.bytes())
    }

    /// The first layer's digest, as the manifest says.
    pub fn layer_digest(&self) -> String {
        self.manifest["layers"][0]["digest"].as_str().unwrap().to_owned()
    }

    /// A descriptor of this manifest, as an index or a `subject` names it.
    pub fn descriptor(&self) -> Value {
        json!({ "mediaType": MANIFEST, "digest": self.digest(), "size": self.bytes().len() })
    }
}

/// `{mediaType, digest, size}` of `bytes`.
pub fn descriptor(media_type: &str, bytes: &[u8]) -> Value {
    json!({ "mediaType": media_type, "digest": sha256(bytes), "size": bytes.len() })
}

/// An image index listing `manifests` (descriptors).
pub fn index(manifests: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(&json!({ "schemaVersion": 2, "mediaType": INDEX, "manifests": manifests })).unwrap()
}
