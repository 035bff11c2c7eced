//! The content-addressed cache, `<cache dir>/oci`: blobs by digest
//! (`blobs/sha256/HEX`, the OCI image-layout way) and, for each manifest,
//! the signature manifest that verified it (`signatures/sha256-HEX`).
//! A blob is written whole or not at all (a temporary file, renamed), only
//! after every check passed, and is hashed again whenever it is read.

use std::io::Write;
use std::path::{Path, PathBuf};

use warden_policy::oci::Digest;

#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// The store inside a cache folder.
    pub fn in_cache(cache_dir: &Path) -> Store {
        Store { root: cache_dir.join("oci") }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn blob_path(&self, digest: &Digest) -> PathBuf {
        self.root.join("blobs/sha256").join(digest.hex())
    }

    fn signature_path(&self, manifest: &Digest) -> PathBuf {
        self.root.join("signatures").join(format!("sha256-{}", manifest.hex()))
    }

    /// The blob, if it is here and still hashes to its name.
    pub fn blob(&self, digest: &Digest) -> Option<Vec<u8>> {
        let bytes = std::fs::read(self.blob_path(digest)).ok()?;
        (crate::sha256(&bytes) == *digest).then_some(bytes)
    }

    pub fn put_blob(&self, digest: &Digest, bytes: &[u8]) -> Result<(), String> {
        debug_assert!(crate::sha256(bytes) == *digest);
        write_whole(&self.blob_path(digest), bytes)
    }

    /// The signature manifest that verified `manifest` when it was pulled.
    pub fn signature_of(&self, manifest: &Digest) -> Option<Digest> {
        let text = std::fs::read_to_string(self.signature_path(manifest)).ok()?;
        Digest::parse(text.trim()).ok()
    }

    pub fn put_signature(&self, manifest: &Digest, signature: &Digest) -> Result<(), String> {
        write_whole(&self.signature_path(manifest), format!("{signature}\n").as_bytes())
    }
}

fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let folder = path.parent().expect("store paths have a folder");
    let failed = |e: std::io::Error| format!("cannot store {} in the cache: {e}", path.display());
    std::fs::create_dir_all(folder).map_err(failed)?;
    let mut file = tempfile::NamedTempFile::new_in(folder).map_err(failed)?;
    file.write_all(bytes).map_err(failed)?;
    file.as_file().sync_all().map_err(failed)?;
    file.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}
