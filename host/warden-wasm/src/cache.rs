//! The compile cache: `.cwasm` files keyed by the component's content hash and
//! the engine's compatibility hash.
//!
//! Loading native code from disk is only as safe as the file. Each file
//! carries a BLAKE3 digest of its code, checked before wasmtime sees it, so a
//! corrupted file is recompiled rather than run; a file from another engine
//! fails wasmtime's own compatibility check and is recompiled too. BLAKE3,
//! not SHA-256: a cached start hashes the component and its code (30 to 60 MB
//! for a Python or JavaScript tool), and SHA-256 was a third of that start.
//!
//! The digest proves the file whole, not who wrote it: a folder another user
//! can write (a shared `--cache-dir`) could hold their native code with a
//! matching digest. Such a folder is neither read nor written.

use std::borrow::Cow;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

const MAGIC: &[u8; 16] = b"warden-cwasm-v2\n";
const DIGEST_LEN: usize = 32;

pub struct CompileCache {
    dir: PathBuf,
    engine_key: String,
}

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    Hit,
    /// Compiled now (and stored, when the cache folder is writable).
    Compiled,
    /// A cached file was unusable; compiled again and replaced.
    Replaced,
    /// The cache folder is not this user's alone (a link, another user's, or
    /// writable by others): compiled, neither read from it nor stored.
    Untrusted,
}

impl CompileCache {
    pub fn new(dir: PathBuf, engine: &Engine) -> CompileCache {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        CompileCache { dir, engine_key: format!("{:016x}", hasher.finish()) }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_for(&self, wasm: &[u8]) -> PathBuf {
        let content = blake3::hash(wasm).to_hex();
        self.dir.join(format!("{content}-{}.cwasm", self.engine_key))
    }

    /// The compiled component named `identity` (see `cache_identity`), from
    /// the cache when possible; else `wasm` makes the component to compile.
    pub fn load<'a>(&self, engine: &Engine, identity: &[u8], wasm: impl FnOnce() -> wasmtime::Result<Cow<'a, [u8]>>) -> wasmtime::Result<(Component, CacheOutcome)> {
        if !self.trusted() {
            return Ok((Component::new(engine, &*wasm()?)?, CacheOutcome::Untrusted));
        }
        let path = self.path_for(identity);
        let mut outcome = CacheOutcome::Compiled;
        if let Ok(file) = std::fs::read(&path) {
            match verified_code(&file).map(|code| unsafe { Component::deserialize(engine, code) }) {
                // SAFETY: the code is byte for byte what this cache wrote (its
                // digest matches), and wasmtime checks that it was compiled by
                // a compatible engine before using it.
                Some(Ok(component)) => return Ok((component, CacheOutcome::Hit)),
                _ => outcome = CacheOutcome::Replaced,
            }
        }
        let code = engine.precompile_component(&wasm()?)?;
        // A cache that cannot be written only costs speed.
        let _ = self.store(&path, &code);
        // SAFETY: `code` was produced by this engine a moment ago.
        let component = unsafe { Component::deserialize(engine, &code)? };
        Ok((component, outcome))
    }

    /// The folder (made 0700 when missing) is a real folder of this user
    /// that group and others cannot write.
    fn trusted(&self) -> bool {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&self.dir);
        let Ok(meta) = std::fs::symlink_metadata(&self.dir) else { return false };
        meta.is_dir() && meta.uid() == rustix::process::geteuid().as_raw() && meta.mode() & 0o022 == 0
    }

    fn store(&self, path: &Path, code: &[u8]) -> std::io::Result<()> {
        let mut file = tempfile::NamedTempFile::new_in(&self.dir)?;
        file.write_all(MAGIC)?;
        file.write_all(blake3::hash(code).as_bytes())?;
        file.write_all(code)?;
        file.as_file().sync_all()?;
        file.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// The code in a cache file, if its header and digest are intact.
fn verified_code(file: &[u8]) -> Option<&[u8]> {
    let rest = file.strip_prefix(MAGIC.as_slice())?;
    if rest.len() < DIGEST_LEN {
        return None;
    }
    let (digest, code) = rest.split_at(DIGEST_LEN);
    (blake3::hash(code) == *digest).then_some(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flipped_bit_fails_verification() {
        let code = b"not really code".to_vec();
        let mut file = MAGIC.to_vec();
        file.extend_from_slice(blake3::hash(&code).as_bytes());
        file.extend_from_slice(&code);
        assert_eq!(verified_code(&file), Some(code.as_slice()));
        let last = file.len() - 1;
        file[last] ^= 1;
        assert_eq!(verified_code(&file), None);
        assert_eq!(verified_code(b"warden-cwasm-v2\nshort"), None);
    }
}
