//! `wasi:filesystem` with Warden's rules: the guest's route to the mounts.
//!
//! wasmtime-wasi enforces read-only mounts and keeps every path under its
//! directory handle. This layer sits in front of it and adds what WASI has no
//! notion of: the suffix rule, the size limit, sorted directory listings, and
//! a record of each refusal worded for the model. Every call it does not need
//! to check goes straight through.

mod descriptor;
mod preopens;
mod streams;

use std::collections::{HashMap, VecDeque};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::filesystem::{Descriptor, Dir, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::DirectoryEntry;
use warden_fs::Denial;
use warden_policy::Rules;

/// A directory handed to the guest: where it appears and the rules of its mount.
#[derive(Clone)]
pub struct GuardedPreopen {
    /// `/portfolio`, or `/` in root layout.
    pub guest_path: String,
    pub dir: Dir,
    pub rules: Rules,
}

/// What the guard knows of the sandbox beyond the preopens, for messages.
#[derive(Clone, Default)]
pub struct SandboxLists {
    pub readable: String,
    pub writable: String,
}

/// The guard's per-store state.
pub struct FsGuard {
    preopens: Vec<GuardedPreopen>,
    lists: SandboxLists,
    /// Descriptor resource → the mount it came from and its virtual path.
    descriptors: HashMap<u32, Origin>,
    /// Directory stream resource → its entries, filtered and sorted.
    listings: HashMap<u32, VecDeque<Result<DirectoryEntry, ErrorCode>>>,
    denials: DenialLog,
}

/// Refusals in order; shared with the file streams, which refuse on their own.
#[derive(Clone, Default)]
pub(crate) struct DenialLog(Arc<Mutex<Vec<Denial>>>);

impl DenialLog {
    pub(crate) fn record(&self, denial: Denial) {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(denial);
    }

    pub(crate) fn snapshot(&self) -> Vec<Denial> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

#[derive(Clone)]
struct Origin {
    mount: usize,
    /// Virtual path, lexically joined; for messages only.
    vpath: PathBuf,
}

impl FsGuard {
    pub fn new(preopens: Vec<GuardedPreopen>, lists: SandboxLists) -> FsGuard {
        FsGuard { preopens, lists, descriptors: HashMap::new(), listings: HashMap::new(), denials: DenialLog::default() }
    }

    /// The log refusals go to, for other guards to share.
    pub(crate) fn denial_log(&self) -> DenialLog {
        self.denials.clone()
    }

    /// Refusals so far, in order, as the model should read them.
    pub fn denials(&self) -> Vec<Denial> {
        self.denials.snapshot()
    }

    fn origin(&self, fd: &Resource<Descriptor>) -> Option<Origin> {
        self.descriptors.get(&fd.rep()).cloned()
    }

    fn rules(&self, origin: &Origin) -> &Rules {
        &self.preopens[origin.mount].rules
    }

    fn deny(&mut self, denial: Denial, code: ErrorCode) -> ErrorCode {
        self.denials.record(denial);
        code
    }
}

/// Connects the guard to a linker: `Data` is the view the host functions get.
pub struct GuardedFs;

impl HasData for GuardedFs {
    type Data<'a> = GuardedFsView<'a>;
}

pub struct GuardedFsView<'a> {
    pub fs: WasiFilesystemCtxView<'a>,
    pub guard: &'a mut FsGuard,
}

/// The virtual path `base/relative`, with `.` and `..` applied lexically.
fn join_virtual(base: &Path, relative: &str) -> PathBuf {
    let mut out = base.to_owned();
    for c in Path::new(relative).components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir if out.parent().is_some() => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

/// The last normal component of a guest path, if it names an entry.
fn final_name(path: &str) -> Option<String> {
    match Path::new(path).components().next_back() {
        Some(Component::Normal(n)) => Some(n.to_string_lossy().into_owned()),
        _ => None,
    }
}

fn shown(path: &Path) -> String {
    path.to_string_lossy().escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_join_stays_lexical() {
        assert_eq!(join_virtual(Path::new("/data"), "a/./b/../c.md"), PathBuf::from("/data/a/c.md"));
        assert_eq!(join_virtual(Path::new("/"), "../../x"), PathBuf::from("/x"));
    }

    #[test]
    fn final_name_ignores_dots() {
        assert_eq!(final_name("a/b.md"), Some("b.md".into()));
        assert_eq!(final_name("a/.."), None);
        assert_eq!(final_name("."), None);
    }
}
