//! The compile cache: `.cwasm` files keyed by the component's content hash and
//! the engine's compatibility hash.
//!
//! Loading native code from disk is only as safe as the file. Beside each
//! `.cwasm` (wasmtime's own artifact, as it wrote it), a `.blake3` file holds
//! the BLAKE3 digest of that artifact, checked before wasmtime sees it, so a
//! corrupted file is recompiled rather than run; a file from another engine
//! fails wasmtime's own compatibility check and is recompiled too. BLAKE3,
//! not SHA-256: a cached start hashes the component and its code (30 to 60 MB
//! for a Python or JavaScript tool), and SHA-256 was a third of that start.
//!
//! In the default cache folder, which no policy may mount (see
//! `warden_policy::host_exposing`), so that no sandboxed process can write a
//! file there, the digest is checked on a read-only mapping of the open file,
//! and wasmtime then maps that very file (the same open file, through
//! `/proc/self/fd`): a cached start copies nothing, where reading the artifact
//! into memory and copying it into fresh pages were most of a Python tool's
//! start. (Only this user's programs outside Warden could change such a file
//! while it is mapped, or truncate it, which would end the process.) Any other
//! folder (`--cache-dir`, or the default one given as a relative path or with
//! a link on its way, which that check could miss) could be mounted by a
//! policy, and a file written in place after its check would change the code
//! wasmtime runs: there the file is read into memory, checked, and wasmtime is
//! given a copy.
//!
//! The digest proves the file whole, not who wrote it: a folder another user
//! can write (a shared `--cache-dir`) could hold their native code with a
//! matching digest. Such a folder is neither read nor written.

use std::fs::File;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

use wasmtime::Engine;
use wasmtime::component::Component;

/// Not the `.cwasm` of earlier builds (the digest inside the file), which two
/// builds sharing a folder would otherwise replace for each other at every start.
const CODE: &str = "v3.cwasm";
const DIGEST: &str = "blake3";
/// From this size on, a digest is computed on every processor: a Python or
/// JavaScript tool's component (15-20 MB) and its code (40-45 MB). Below it,
/// starting the threads would cost more than they save.
const HASHED_IN_PARALLEL_FROM: usize = 4 << 20;
const DIGEST_LEN: usize = 32;
/// A cached file larger than this (a Python tool's code is 40 MB) is compiled
/// again rather than read or mapped whole.
const MAX_CODE_LEN: u64 = 1 << 30;

pub struct CompileCache {
    dir: PathBuf,
    engine_key: String,
    /// The folder is the default one, which no sandbox can be given.
    mapped: bool,
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
        let mapped = unmountable(&dir, warden_policy::compile_cache_folder().as_deref());
        CompileCache { dir, engine_key: format!("{:016x}", hasher.finish()), mapped }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_for(&self, wasm: &[u8]) -> PathBuf {
        let content = digest(wasm).to_hex();
        self.dir.join(format!("{content}-{}.{CODE}", self.engine_key))
    }

    /// The compiled component named `identity` (see `cache_identity`), from
    /// the cache when possible; else `wasm` makes the component to compile.
    pub fn load<'a>(
        &self,
        engine: &Engine,
        identity: &[u8],
        wasm: impl FnOnce() -> wasmtime::Result<std::borrow::Cow<'a, [u8]>>,
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        if !self.trusted() {
            return Ok((Component::new(engine, &*wasm()?)?, CacheOutcome::Untrusted));
        }
        let path = self.path_for(identity);
        let mut outcome = CacheOutcome::Compiled;
        if let Some(cached) = Verified::open(&path, self.mapped) {
            match cached.and_then(|verified| verified.component(engine)) {
                Some(component) => return Ok((component, CacheOutcome::Hit)),
                None => outcome = CacheOutcome::Replaced,
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

    /// The code, then its digest, each written whole and renamed into place.
    /// A reader that finds no digest yet, or (two writers interleaved) one
    /// that does not match the code, compiles again: a pair that does not
    /// match is never run.
    fn store(&self, path: &Path, code: &[u8]) -> std::io::Result<()> {
        self.write_whole(path, code)?;
        self.write_whole(&path.with_extension(DIGEST), digest(code).as_bytes())
    }

    fn write_whole(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        let mut file = tempfile::NamedTempFile::new_in(&self.dir)?;
        file.write_all(bytes)?;
        file.as_file().sync_all()?;
        file.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Whether no policy can mount `dir`: it is `default`, the folder
/// `warden_policy::host_exposing` refuses, spelled as that check spells it
/// (absolute, which it requires), with no link on the way (which it could
/// miss while the folder did not exist yet). Anything else is copied.
fn unmountable(dir: &Path, default: Option<&Path>) -> bool {
    dir.is_absolute() && default == Some(dir) && dir.canonicalize().is_ok_and(|real| real == dir)
}

/// The BLAKE3 digest of `bytes`.
fn digest(bytes: &[u8]) -> blake3::Hash {
    // Rayon's threads do not survive a fork: a child of the process that
    // started them (the Python package's forks) hashes on one thread.
    static POOL_OWNER: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    if bytes.len() < HASHED_IN_PARALLEL_FROM || *POOL_OWNER.get_or_init(std::process::id) != std::process::id() {
        return blake3::hash(bytes);
    }
    blake3::Hasher::new().update_rayon(bytes).finalize()
}

/// A cache file, open, whose digest matched the one beside it.
struct Verified {
    file: File,
    code: Code,
    identity: Identity,
}

/// The bytes whose digest was checked.
enum Code {
    /// Mapped read-only: in the default folder, which no sandbox can write.
    Mapped(Mapping),
    /// Read into memory: anywhere else, so that a write to the file after
    /// its check changes nothing that runs.
    Read(Vec<u8>),
}

impl Code {
    fn bytes(&self) -> &[u8] {
        match self {
            Code::Mapped(map) => map.bytes(),
            Code::Read(bytes) => bytes,
        }
    }
}

/// What says a file is unchanged since it was checked.
#[derive(PartialEq, Eq)]
struct Identity {
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Identity {
    fn of(file: &File) -> Option<Identity> {
        use std::os::unix::fs::MetadataExt;
        let meta = file.metadata().ok()?;
        meta.is_file().then(|| Identity { len: meta.len(), mtime: (meta.mtime(), meta.mtime_nsec()), ctime: (meta.ctime(), meta.ctime_nsec()) })
    }
}

impl Verified {
    /// `None`: no such file. `Some(None)`: a file that is not what this cache
    /// wrote (a link, not a regular file, no digest beside it, or one that
    /// does not match).
    fn open(path: &Path, mapped: bool) -> Option<Option<Verified>> {
        let file = match open_plain(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(_) => return Some(None),
        };
        Some(Self::check(file, &path.with_extension(DIGEST), mapped))
    }

    fn check(mut file: File, digest_file: &Path, mapped: bool) -> Option<Verified> {
        use std::io::Read;
        let identity = Identity::of(&file).filter(|i| i.len <= MAX_CODE_LEN)?;
        let mut expected = Vec::with_capacity(DIGEST_LEN + 1);
        let sidecar = open_plain(digest_file).ok().filter(|f| Identity::of(f).is_some())?;
        sidecar.take(DIGEST_LEN as u64 + 1).read_to_end(&mut expected).ok()?;
        let code = if mapped {
            Code::Mapped(Mapping::of(&file, usize::try_from(identity.len).ok()?)?)
        } else {
            let mut bytes = Vec::new();
            bytes.try_reserve_exact(usize::try_from(identity.len).ok()?).ok()?;
            file.read_to_end(&mut bytes).ok()?;
            Code::Read(bytes)
        };
        (digest(code.bytes()).as_bytes().as_slice() == expected.as_slice()).then_some(Verified { file, code, identity })
    }

    /// The component: wasmtime's own mapping of this very file when it was
    /// mapped (the default folder) and `/proc` is there, else a copy of the
    /// bytes checked. `None` if wasmtime refuses it, or (at best: a write of
    /// the same size within one tick of the clock goes unseen) the file's
    /// size or times changed while it was loaded.
    fn component(&self, engine: &Engine) -> Option<Component> {
        let same_file = format!("/proc/self/fd/{}", self.file.as_raw_fd());
        let component = if matches!(self.code, Code::Mapped(_)) && Path::new(&same_file).exists() {
            // SAFETY: the code is byte for byte what this cache wrote (its
            // digest matches), wasmtime checks that it was compiled by a
            // compatible engine before using it, and the file is in the
            // default cache folder, which no sandbox can be given: only this
            // user's own programs outside Warden could write it.
            unsafe { Component::deserialize_file(engine, &same_file) }
        } else {
            // SAFETY: as above; wasmtime copies these bytes.
            unsafe { Component::deserialize(engine, self.code.bytes()) }
        };
        let unchanged = Identity::of(&self.file).is_some_and(|now| now == self.identity);
        component.ok().filter(|_| unchanged)
    }
}

/// Opens a regular file for reading: no link followed, and no wait on a FIFO.
fn open_plain(path: &Path) -> std::io::Result<File> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    File::options().read(true).custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32).open(path)
}

/// A read-only private mapping of a whole file, unmapped when dropped.
struct Mapping {
    start: NonNull<u8>,
    len: usize,
}

impl Mapping {
    fn of(file: &File, len: usize) -> Option<Mapping> {
        use rustix::mm::{MapFlags, ProtFlags};
        if len == 0 {
            return None;
        }
        // SAFETY: a new mapping at an address the kernel picks; nothing else
        // is affected. POPULATE maps every page in one call, which faulting
        // them in one by one while hashing would not.
        let start = unsafe { rustix::mm::mmap(std::ptr::null_mut(), len, ProtFlags::READ, MapFlags::PRIVATE | MapFlags::POPULATE, file, 0) }.ok()?;
        Some(Mapping { start: NonNull::new(start.cast())?, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes at `start`, mapped until `self` drops.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `of`, which no slice outlives (`bytes` borrows `self`).
        let _ = unsafe { rustix::mm::munmap(self.start.as_ptr().cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    /// Loads wc.wasm twice through a cache in a new folder (compiled, then a
    /// hit), and gives the folder, the component and its code's file.
    fn loaded_twice(mapped: bool) -> (tempfile::TempDir, Component, PathBuf) {
        let wasm = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests/out/wc.wasm")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let mut cache = CompileCache::new(dir.path().to_owned(), &engine);
        cache.mapped = mapped;
        let load = || cache.load(&engine, &wasm, || Ok(Cow::Borrowed(&wasm[..]))).unwrap();
        assert_eq!(load().1, CacheOutcome::Compiled);
        let (component, outcome) = load();
        assert_eq!(outcome, CacheOutcome::Hit);
        let code = cache.path_for(&wasm).canonicalize().unwrap();
        (dir, component, code)
    }

    /// Whether `file` is mapped executable in this process: wasmtime runs it in place.
    fn mapped_executable(file: &Path) -> bool {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        maps.lines().any(|l| l.ends_with(file.to_str().unwrap()) && l.split_whitespace().nth(1) == Some("r-xp"))
    }

    #[test]
    fn only_the_default_folder_as_policies_see_it_is_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        assert!(unmountable(&real, Some(&real)));
        assert!(!unmountable(&real, None));
        assert!(!unmountable(&real, Some(Path::new("/elsewhere"))));
        // A relative folder, which `host_exposing` does not check.
        assert!(!unmountable(Path::new("cache"), Some(Path::new("cache"))));
        // A link on the way, which that check could miss before the folder existed.
        std::os::unix::fs::symlink(&real, real.join("link")).unwrap();
        let linked = real.join("link").join("warden");
        std::fs::create_dir(&linked).unwrap();
        assert!(!unmountable(&linked, Some(&linked)));
        // A `..` on the way is not the folder as spelled.
        let dotted = real.join("link").join("..").join(real.file_name().unwrap());
        assert!(!unmountable(&dotted, Some(&dotted)));
    }

    #[test]
    fn in_the_default_folder_the_cached_code_runs_from_its_file() {
        let (_dir, _component, code) = loaded_twice(true);
        assert!(mapped_executable(&code), "{} is not mapped", code.display());
    }

    #[test]
    fn in_a_folder_a_policy_could_mount_the_code_run_is_a_copy_of_the_bytes_checked() {
        let (_dir, _component, code) = loaded_twice(false);
        assert!(!mapped_executable(&code), "{} is mapped", code.display());
    }
}
