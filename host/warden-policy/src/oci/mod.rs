//! Components from OCI registries, as the policy names them: references,
//! registry settings and the pins of `warden.lock`. Fetching is `warden-oci`'s.

mod lock;
pub(crate) mod reference;
mod registry;

pub use lock::{Lock, LOCK_FILE};
pub use reference::{check_registry, Digest, OciRef};
pub use registry::{is_loopback_host, RegistrySettings};

use std::path::PathBuf;

/// The default cap on a component layer: 64 MiB.
pub const DEFAULT_MAX_SIZE: u64 = 64 << 20;

/// A tool component to fetch from a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciSource {
    /// The reference as the policy wrote it.
    pub reference: OciRef,
    /// The manifest digest the component must have: the reference's own, or
    /// the lock's for a tag. `None`: a tag resolved at load, under `verify`.
    pub pin: Option<Digest>,
    pub pinned_by: PinnedBy,
    /// Cosign public keys, one of which must have signed the manifest.
    pub verify_keys: Vec<PathBuf>,
    /// The largest layer accepted, in bytes.
    pub max_size: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinnedBy {
    Reference,
    Lock,
    /// Not pinned: resolved when loaded, and only accepted with `verify`.
    Nothing,
}

impl OciSource {
    /// `pinned`, `verified`, `pinned, verified` or `unverified`, as `warden check` reports.
    pub fn trust_shown(&self) -> String {
        let pinned = match self.pinned_by {
            PinnedBy::Reference => Some("pinned"),
            PinnedBy::Lock => Some("pinned by warden.lock"),
            PinnedBy::Nothing => None,
        };
        let verified = (!self.verify_keys.is_empty()).then_some("verified");
        match (pinned, verified) {
            (Some(p), Some(v)) => format!("{p}, {v}"),
            (Some(p), None) => format!("{p}, unverified"),
            (None, Some(v)) => v.to_owned(),
            (None, None) => "unverified".to_owned(),
        }
    }
}
