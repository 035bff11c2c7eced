//! Tool components from OCI registries.
//!
//! A component is pulled by its manifest digest (or a tag resolved once and
//! then pinned), and every byte is checked on the way: the manifest against
//! the pin, its one wasm layer against the manifest's digest and size, under
//! a size cap, before anything is stored. With trusted keys, a cosign
//! signature over that very manifest digest is required. What passed is kept
//! in a content-addressed cache, from which later loads work offline.
//!
//! The client is Warden's own, on hyper and rustls, rather than a general
//! registry crate: every body is capped, redirects leave the registry only
//! over HTTPS to public addresses and without credentials, descriptors'
//! foreign `urls` are never followed, and a token service on another host
//! never sees the credentials over plain HTTP.

mod challenge;
mod client;
mod cosign;
mod credentials;
mod http;
mod manifest;
mod media;
mod pull;
mod signature;
mod store;

pub use cosign::TrustedKey;
pub use credentials::Credentials;
pub use pull::{Pulled, Puller, Request, Verified};
pub use store::Store;
pub use warden_policy::oci::{Digest, OciRef};

/// Text a registry sent, for a message to a person: escaped (no terminal
/// control reaches it) and at most 200 characters.
pub(crate) fn shown(text: &str) -> String {
    let escaped: String = text.escape_debug().collect();
    match escaped.char_indices().nth(200) {
        Some((at, _)) => format!("{}...", &escaped[..at]),
        None => escaped,
    }
}

/// The sha256 digest of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> Digest {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    Digest::of_hex(hex)
}
