//! The content-addressed cache, `<cache dir>/oci`: blobs by digest
//! (`blobs/sha256/HEX`, the OCI image-layout way) and, for each manifest,
//! the signature manifest that verified it (`signatures/sha256-HEX`).
//! A blob is written whole or not at all (a temporary file, renamed), only
//! after every check passed. Beside it, `HEX.id` records the file's identity
//! then (device, inode, size, modification and change times): a blob read
//! through a file that still has it is the one that was checked, and any
//! other is hashed again. The change time cannot be set back by a user, so
//! a blob rewritten in place, even with its times restored, is hashed.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use warden_policy::oci::Digest;

/// Signature manifests remembered for one manifest.
const SIGNATURES_MAX: usize = 8;

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

    /// The blob, if it is here, at most `max` bytes, and is the file that
    /// was stored (else still hashes to its name).
    pub fn blob(&self, digest: &Digest, max: u64) -> Option<Vec<u8>> {
        let path = self.blob_path(digest);
        let file = std::fs::File::open(&path).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() > max {
            return None;
        }
        let identity = identity(&meta);
        let mut bytes = Vec::new();
        file.take(max + 1).read_to_end(&mut bytes).ok()?;
        let recorded = std::fs::read_to_string(id_path(&path)).ok();
        if recorded.as_deref() == Some(identity.as_str()) || crate::sha256(&bytes) == *digest {
            return Some(bytes);
        }
        None
    }

    pub fn put_blob(&self, digest: &Digest, bytes: &[u8]) -> Result<(), String> {
        debug_assert!(crate::sha256(bytes) == *digest);
        let path = self.blob_path(digest);
        write_whole(&path, bytes)?;
        let stored = std::fs::metadata(&path).map_err(|e| format!("cannot store {} in the cache: {e}", path.display()))?;
        write_whole(&id_path(&path), identity(&stored).as_bytes())
    }

    /// The signature manifests that verified `manifest` when it was pulled
    /// (one per set of keys it was pulled with), newest first.
    pub fn signatures_of(&self, manifest: &Digest) -> Vec<Digest> {
        let text = std::fs::read_to_string(self.signature_path(manifest)).unwrap_or_default();
        text.lines().filter_map(|line| Digest::parse(line.trim()).ok()).take(SIGNATURES_MAX).collect()
    }

    pub fn put_signature(&self, manifest: &Digest, signature: &Digest) -> Result<(), String> {
        let mut kept = vec![signature.clone()];
        kept.extend(self.signatures_of(manifest).into_iter().filter(|d| d != signature));
        kept.truncate(SIGNATURES_MAX);
        let text: String = kept.iter().map(|d| format!("{d}\n")).collect();
        write_whole(&self.signature_path(manifest), text.as_bytes())
    }
}

fn id_path(blob: &Path) -> PathBuf {
    blob.with_extension("id")
}

fn identity(meta: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    format!("{} {} {} {}.{} {}.{}\n", meta.dev(), meta.ino(), meta.size(), meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_rewritten_in_place_is_hashed_again_and_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::in_cache(dir.path());
        let digest = crate::sha256(b"component");
        store.put_blob(&digest, b"component").unwrap();
        assert_eq!(store.blob(&digest, 100).as_deref(), Some(&b"component"[..]));
        let path = store.blob_path(&digest);
        let times = std::fs::metadata(&path).unwrap().modified().unwrap();
        // The kernel's change time moves by clock ticks (a few ms): past one, a
        // rewrite of the same size with the times set back is still seen.
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::fs::write(&path, b"COMPONENT").unwrap();
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(times).unwrap();
        assert_eq!(store.blob(&digest, 100), None);
    }

    #[test]
    fn a_blob_without_its_record_is_still_accepted_when_it_hashes_to_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::in_cache(dir.path());
        let digest = crate::sha256(b"component");
        store.put_blob(&digest, b"component").unwrap();
        std::fs::remove_file(id_path(&store.blob_path(&digest))).unwrap();
        assert_eq!(store.blob(&digest, 100).as_deref(), Some(&b"component"[..]));
        std::fs::write(store.blob_path(&digest), b"other").unwrap();
        assert_eq!(store.blob(&digest, 100), None);
    }
}
