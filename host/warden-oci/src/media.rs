//! Media types Warden knows, and the Accept header that asks for them.

pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";

/// The indexes are asked for only to be refused by name, not as a 404.
pub const MANIFEST_ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, \
     application/vnd.docker.distribution.manifest.v2+json, application/vnd.docker.distribution.manifest.list.v2+json";

/// The CNCF wasm OCI artifact: this config, one `application/wasm` layer.
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
pub const WASM_LAYER: &str = "application/wasm";
/// The older Bytecode Alliance layout, with an image config.
pub const BCA_LAYER: &str = "application/vnd.bytecodealliance.wasm.component.layer.v0+wasm";
pub const OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";

/// Cosign's simple signing: a payload layer, its signature in an annotation.
pub const COSIGN_PAYLOAD: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
pub const COSIGN_SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
pub const COSIGN_ARTIFACT: &str = "application/vnd.dev.cosign.artifact.sig.v1+json";
