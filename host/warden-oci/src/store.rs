//! The content-addressed cache, `<cache dir>/oci`: blobs by digest
//! (`blobs/sha256/HEX`, the OCI image-layout way) and, for each manifest,
//! the signature manifests that verified it (`signatures/sha256-HEX`).
//!
//! A blob is written whole or not at all (a temporary file, renamed), only
//! after every check passed. Beside it, `HEX.blake3` holds its BLAKE3
//! digest: a read checks the bytes against it (BLAKE3 is what a load
//! computes anyway, for the compile cache), and a blob without one is
//! hashed with SHA-256 against its name. The cache folder and every folder
//! of the store must be this user's and writable by nobody else: a cache
//! another user can write is refused, not read.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use warden_policy::oci::Digest;

/// Signature manifests remembered for one manifest.
const SIGNATURES_MAX: usize = 8;
/// A record (a digest list, a BLAKE3 hex) is a few hundred bytes.
const RECORD_MAX: u64 = 4 << 10;

#[derive(Debug, Clone)]
pub struct Store {
    cache_dir: PathBuf,
    root: PathBuf,
}

impl Store {
    /// The store inside a cache folder.
    pub fn in_cache(cache_dir: &Path) -> Store {
        Store { cache_dir: cache_dir.to_path_buf(), root: cache_dir.join("oci") }
    }

    /// Makes the store's folders (mode 0700) and checks that they and the
    /// cache folder are this user's, real folders, and not writable by others.
    pub fn check(&self) -> Result<(), String> {
        private_folder(&self.cache_dir)?;
        for folder in [self.root.clone(), self.root.join("blobs"), self.root.join("blobs/sha256"), self.root.join("signatures")] {
            private_folder(&folder)?;
        }
        Ok(())
    }

    fn blob_path(&self, digest: &Digest) -> PathBuf {
        self.root.join("blobs/sha256").join(digest.hex())
    }

    fn signature_path(&self, manifest: &Digest) -> PathBuf {
        self.root.join("signatures").join(format!("sha256-{}", manifest.hex()))
    }

    /// The blob, if it is here, at most `max` bytes, and hashes to its name.
    pub fn blob(&self, digest: &Digest, max: u64) -> Option<Vec<u8>> {
        let bytes = read_capped(&self.blob_path(digest), max)?;
        (crate::sha256(&bytes) == *digest).then_some(bytes)
    }

    /// A layer, if it is here, at most `max` bytes, and has the BLAKE3
    /// digest recorded beside it (else its SHA-256 name); with that BLAKE3.
    pub fn layer(&self, digest: &Digest, max: u64) -> Option<(Vec<u8>, String)> {
        let path = self.blob_path(digest);
        let bytes = read_capped(&path, max)?;
        let blake3 = blake3::hash(&bytes).to_hex().to_string();
        let recorded = read_capped(&blake3_path(&path), RECORD_MAX);
        if recorded.as_deref() == Some(blake3.as_bytes()) || crate::sha256(&bytes) == *digest {
            return Some((bytes, blake3));
        }
        None
    }

    pub fn put_blob(&self, digest: &Digest, bytes: &[u8]) -> Result<(), String> {
        debug_assert!(crate::sha256(bytes) == *digest);
        let path = self.blob_path(digest);
        write_whole(&path, bytes)?;
        write_whole(&blake3_path(&path), blake3::hash(bytes).to_hex().as_bytes())
    }

    /// The signature manifests that verified `manifest` when it was pulled
    /// (one per set of keys it was pulled with), newest first.
    pub fn signatures_of(&self, manifest: &Digest) -> Vec<Digest> {
        let text = read_capped(&self.signature_path(manifest), RECORD_MAX).unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
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

fn blake3_path(blob: &Path) -> PathBuf {
    blob.with_extension("blake3")
}

/// A regular file's bytes, if it has at most `max`.
fn read_capped(path: &Path, max: u64) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= max).then_some(bytes)
}

/// Made with mode 0700 if missing; refused unless it is a folder (not a
/// symlink) of this user that group and others cannot write.
fn private_folder(folder: &Path) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(folder) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(folder).map_err(|e| format!("cannot create the cache {}: {e}", folder.display()))?;
        }
        Err(e) => return Err(format!("cannot create the cache {}: {e}", folder.display())),
    }
    let meta = std::fs::symlink_metadata(folder).map_err(|e| format!("the cache {}: {e}", folder.display()))?;
    if !meta.is_dir() || meta.uid() != rustix::process::geteuid().as_raw() || meta.mode() & 0o022 != 0 {
        return Err(format!(
            "the cache {} is not a folder of this user's alone (it is a link, another user's, or writable by others): \
             Warden does not trust components kept there; remove it, or give --cache-dir",
            folder.display()
        ));
    }
    Ok(())
}

fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let folder = path.parent().expect("store paths have a folder");
    let failed = |e: std::io::Error| format!("cannot store {} in the cache: {e}", path.display());
    let mut file = tempfile::NamedTempFile::new_in(folder).map_err(failed)?;
    file.write_all(bytes).map_err(failed)?;
    file.as_file().sync_all().map_err(failed)?;
    file.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::in_cache(&dir.path().join("cache"));
        store.check().unwrap();
        (dir, store)
    }

    #[test]
    fn a_layer_rewritten_in_place_is_refused() {
        let (_dir, store) = store();
        let digest = crate::sha256(b"component");
        store.put_blob(&digest, b"component").unwrap();
        assert_eq!(store.layer(&digest, 100).map(|(b, _)| b), Some(b"component".to_vec()));
        std::fs::write(store.blob_path(&digest), b"COMPONENT").unwrap();
        assert_eq!(store.layer(&digest, 100), None);
        assert_eq!(store.blob(&digest, 100), None);
    }

    #[test]
    fn a_layer_without_its_record_is_accepted_only_when_it_hashes_to_its_name() {
        let (_dir, store) = store();
        let digest = crate::sha256(b"component");
        store.put_blob(&digest, b"component").unwrap();
        std::fs::remove_file(blake3_path(&store.blob_path(&digest))).unwrap();
        assert!(store.layer(&digest, 100).is_some());
        std::fs::write(store.blob_path(&digest), b"other").unwrap();
        assert_eq!(store.layer(&digest, 100), None);
    }

    #[test]
    fn a_blob_over_its_cap_is_not_read() {
        let (_dir, store) = store();
        let digest = crate::sha256(b"component");
        store.put_blob(&digest, b"component").unwrap();
        assert_eq!(store.blob(&digest, 8), None);
        assert_eq!(store.layer(&digest, 8), None);
    }

    #[test]
    fn a_cache_others_can_write_or_a_link_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir(&cache).unwrap();
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = Store::in_cache(&cache).check().unwrap_err();
        assert!(error.contains("is not a folder of this user's alone"), "{error}");
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(dir.path(), cache.join("oci")).unwrap();
        let error = Store::in_cache(&cache).check().unwrap_err();
        assert!(error.contains(&format!("the cache {} is not a folder", cache.join("oci").display())), "{error}");
    }
}
