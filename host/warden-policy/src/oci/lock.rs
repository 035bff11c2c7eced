//! `warden.lock`: the manifest digest each tag of a policy had when
//! `warden lock` resolved it. A pinned tag never follows the registry again.

use std::path::Path;

use indexmap::IndexMap;
use serde::Deserialize;

use super::reference::{Digest, OciRef};

pub const LOCK_FILE: &str = "warden.lock";

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Lock {
    /// By `oci://REGISTRY/REPOSITORY:TAG`.
    pub pins: IndexMap<String, Digest>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LockDocument {
    version: u32,
    #[serde(default)]
    pins: IndexMap<String, String>,
}

impl Lock {
    /// The lock beside a policy file; none is an empty lock.
    pub fn beside(policy_file: &Path) -> Result<Lock, String> {
        let file = policy_file.with_file_name(LOCK_FILE);
        match std::fs::read_to_string(&file) {
            Ok(text) => Lock::parse(&text).map_err(|e| format!("{}: {e}", file.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lock::default()),
            Err(e) => Err(format!("{}: {e}", file.display())),
        }
    }

    pub fn parse(text: &str) -> Result<Lock, String> {
        let doc: LockDocument = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        if doc.version != 1 {
            return Err(format!("version {} is not one this Warden reads (1)", doc.version));
        }
        let mut pins = IndexMap::new();
        for (reference, digest) in doc.pins {
            let parsed = OciRef::parse(&reference)?;
            if parsed.digest.is_some() || parsed.tag.is_none() {
                return Err(format!("'{reference}': a pin names a tag, without a digest"));
            }
            let digest = Digest::parse(&digest).map_err(|e| format!("'{reference}': {e}"))?;
            pins.insert(parsed.tagged().expect("a pin names a tag"), digest);
        }
        Ok(Lock { pins })
    }

    pub fn pin_of(&self, reference: &OciRef) -> Option<&Digest> {
        self.pins.get(&reference.tagged()?)
    }

    /// The file's text; keys and values are JSON strings, which YAML reads as written.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "# Written by `warden lock`: each tag the policy names, pinned to the manifest digest it had.\n\
             # A pinned tag is never resolved again; run `warden lock` to move a pin.\nversion: 1\npins:",
        );
        if self.pins.is_empty() {
            out.push_str(" {}");
        }
        out.push('\n');
        for (reference, digest) in &self.pins {
            let key = serde_json::to_string(reference).expect("strings serialize");
            out.push_str(&format!("  {key}: \"{digest}\"\n"));
        }
        out
    }
}
