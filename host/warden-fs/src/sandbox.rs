//! The sandbox: open directory handles plus rules, and path resolution.
//!
//! Every access goes through a [`cap_std::fs::Dir`] opened once per mount (or,
//! in a derived child, opened *from* the parent's handle). A virtual path is
//! only ever turned into a path relative to such a handle, never into a host path.

use std::io;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use warden_policy::{
    list_paths, plan_derive, Area, DeriveRequest, EntryLookup, Layout, Namespace, PathError, Policy, Rules, VPath,
};

use crate::error::{Access, Denial, FsError, Op, Result};
use crate::links::{self, Followed};

/// A part of the virtual namespace with the handle that serves it.
#[derive(Debug)]
pub struct OpenMount {
    /// Where it appears, e.g. `/portfolio` or `/portfolio/drafts` in a child.
    pub path: VPath,
    /// The mount's rules; `writable` is this handle's own right.
    pub rules: Rules,
    /// The host folder behind the handle, for logs and OS sandboxes only.
    pub host_root: PathBuf,
    pub(crate) dir: Dir,
}

impl OpenMount {
    /// The directory handle; everything below it and nothing else is reachable.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }
}

/// A capability filesystem built from a policy, or derived from another sandbox.
#[derive(Debug)]
pub struct Sandbox {
    layout: Layout,
    mount_names: Vec<String>,
    mounts: Vec<OpenMount>,
}

/// Where a virtual path lands: its mount and the path relative to the mount's handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub path: VPath,
    pub mount: VPath,
    /// Relative to the mount's handle; empty for the mount itself.
    pub relative: PathBuf,
}

/// A located path, borrowed from the sandbox for one operation.
pub(crate) struct Target<'a> {
    pub vpath: VPath,
    pub mount: &'a OpenMount,
    pub rel: PathBuf,
}

impl Target<'_> {
    /// The handle-relative path, `.` for the mount itself.
    pub fn rel_or_dot(&self) -> &Path {
        if self.rel.as_os_str().is_empty() { Path::new(".") } else { &self.rel }
    }

    pub fn is_mount_root(&self) -> bool {
        self.rel.as_os_str().is_empty()
    }

    pub fn display(&self) -> String {
        self.vpath.to_string()
    }
}

impl Sandbox {
    /// Opens every mount root of the program's sandbox once.
    pub fn open(policy: &Policy) -> Result<Sandbox> {
        let mut mounts = Vec::with_capacity(policy.mounts.len());
        for m in &policy.mounts {
            let dir = Dir::open_ambient_dir(&m.host_root, ambient_authority())
                .map_err(|source| FsError::Io { op: Op::Derive, path: m.path.to_string(), source })?;
            mounts.push(OpenMount { path: m.path.clone(), rules: m.rules.clone(), host_root: m.host_root.clone(), dir });
        }
        Ok(Sandbox { layout: policy.layout, mount_names: policy.mount_names(), mounts })
    }

    /// The sandbox of `worker`, or of the program when `None`. An unknown
    /// worker is an error, never a fallback to the program's access.
    pub fn open_for(policy: &Policy, worker: Option<&str>) -> Result<Sandbox> {
        if let Some(name) = worker
            && !policy.workers.contains_key(name)
        {
            return Err(FsError::UnknownWorker { name: name.to_owned(), known: policy.workers.keys().cloned().collect() });
        }
        let program = Sandbox::open(policy)?;
        match worker {
            Some(name) => program.derive_worker(policy, name),
            None => Ok(program),
        }
    }

    /// The policy's worker `name`, derived from this (the program's) sandbox.
    /// What only the host can tell (an entry that leads out through a symlink,
    /// or does not exist) is reported as the policy's error, like the rest.
    pub fn derive_worker(&self, policy: &Policy, name: &str) -> Result<Sandbox> {
        let worker = policy.workers.get(name).ok_or_else(|| FsError::UnknownWorker {
            name: name.to_owned(),
            known: policy.workers.keys().cloned().collect(),
        })?;
        self.derive(&worker.request).map_err(|e| match e {
            FsError::Derive(e) => FsError::Policy(policy.worker_error(name, &e)),
            e => e,
        })
    }

    /// The same namespace with other mounts, for the approval layer.
    /// The same sandbox over duplicated handles, for use beside this one.
    pub fn try_clone(&self) -> Result<Sandbox> {
        let mounts = self
            .mounts
            .iter()
            .map(|m| {
                let dir = m.dir.try_clone().map_err(|source| FsError::Io { op: Op::Derive, path: m.path.to_string(), source })?;
                Ok(OpenMount { path: m.path.clone(), rules: m.rules.clone(), host_root: m.host_root.clone(), dir })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.with_mounts(mounts))
    }

    pub(crate) fn with_mounts(&self, mounts: Vec<OpenMount>) -> Sandbox {
        Sandbox { layout: self.layout, mount_names: self.mount_names.clone(), mounts }
    }

    pub(crate) fn mount_names(&self) -> &[String] {
        &self.mount_names
    }

    pub fn mounts(&self) -> &[OpenMount] {
        &self.mounts
    }

    pub(crate) fn namespace(&self) -> Namespace<'_> {
        match self.layout {
            Layout::Root => Namespace::Root,
            Layout::Named => Namespace::Named(&self.mount_names),
        }
    }

    fn areas(&self) -> Vec<Area> {
        self.mounts
            .iter()
            .map(|m| Area { path: m.path.clone(), readable: m.rules.readable, writable: m.rules.writable })
            .collect()
    }

    /// Roots the sandbox can read, in policy order.
    pub fn readable_roots(&self) -> Vec<VPath> {
        self.mounts.iter().filter(|m| m.rules.readable).map(|m| m.path.clone()).collect()
    }

    /// Roots the sandbox can write, in policy order.
    pub fn writable_roots(&self) -> Vec<VPath> {
        self.mounts.iter().filter(|m| m.rules.writable).map(|m| m.path.clone()).collect()
    }

    pub fn readable_list(&self) -> String {
        list_paths(self.areas().iter().filter(|a| a.readable))
    }

    pub fn writable_list(&self) -> String {
        list_paths(self.areas().iter().filter(|a| a.writable))
    }

    /// Parses `input` as a virtual path of this sandbox.
    pub(crate) fn parse(&self, input: &str) -> Result<VPath, Denial> {
        VPath::parse(input, self.namespace()).map_err(|reason| match reason {
            PathError::AboveRoot => Denial::OutsideSandbox { path: shown(input), readable: self.readable_list() },
            reason => Denial::InvalidPath { path: shown(input), reason, readable: self.readable_list() },
        })
    }

    /// The narrowest mount holding `path` with the access asked for.
    pub(crate) fn mount_for(&self, path: &VPath, access: Access) -> Option<&OpenMount> {
        self.mounts
            .iter()
            .filter(|m| path.starts_with(&m.path) && allows(&m.rules, access))
            .max_by_key(|m| m.path.as_str().len())
    }

    pub(crate) fn locate(&self, input: &str, access: Access) -> Result<Target<'_>> {
        let vpath = self.parse(input)?;
        self.locate_vpath(vpath, access)
    }

    pub(crate) fn locate_vpath(&self, vpath: VPath, access: Access) -> Result<Target<'_>> {
        match self.mount_for(&vpath, access) {
            Some(mount) => {
                let rel = PathBuf::from(vpath.strip_prefix(&mount.path).unwrap_or_default());
                Ok(Target { vpath, mount, rel })
            }
            None if access == Access::Write && self.mount_for(&vpath, Access::Read).is_some() => {
                Err(Denial::ReadOnly { path: vpath.to_string(), writable: self.writable_list() }.into())
            }
            None if access == Access::Read && self.mount_for(&vpath, Access::Write).is_some() => {
                Err(Denial::WriteOnly { path: vpath.to_string(), readable: self.readable_list() }.into())
            }
            None => Err(Denial::OutsideSandbox { path: vpath.to_string(), readable: self.readable_list() }.into()),
        }
    }

    /// Folders that lie above mounts without being in one (`/` for named mounts):
    /// the names that lead towards mounts, or `None` when `path` is no such folder.
    pub(crate) fn virtual_children(&self, path: &VPath) -> Option<Vec<String>> {
        if self.mount_for(path, Access::Read).is_some() {
            return None;
        }
        let mut names: Vec<String> = self
            .mounts
            .iter()
            .filter(|m| m.rules.readable && m.path != *path)
            .filter_map(|m| m.path.strip_prefix(path))
            .filter_map(|rest| rest.split('/').next().map(str::to_owned))
            .collect();
        names.sort();
        names.dedup();
        (!names.is_empty()).then_some(names)
    }

    /// Refuses a file name that the mount's suffix rule does not allow.
    pub(crate) fn check_name(&self, target: &Target<'_>, name: &str) -> Result<(), Denial> {
        let rules = &target.mount.rules;
        if rules.allows_name(name) {
            return Ok(());
        }
        Err(Denial::SuffixNotAllowed {
            path: target.display(),
            suffix: Rules::suffix_of(name).to_owned(),
            allowed: rules.suffixes.as_deref().unwrap_or_default().join(", "),
        })
    }

    /// The suffix rule for an operation on a file: a folder is reported as
    /// a folder, whatever its name.
    pub(crate) fn check_file_name(&self, target: &Target<'_>, op: Op) -> Result<()> {
        let name = match target.vpath.file_name() {
            Some(name) if !target.is_mount_root() => name,
            _ => return Err(FsError::IsADirectory { op, path: target.display() }),
        };
        self.check_name(target, name).map_err(|denial| {
            match target.mount.dir.metadata(&target.rel) {
                Ok(m) if m.is_dir() => FsError::IsADirectory { op, path: target.display() },
                _ => denial.into(),
            }
        })
    }

    /// Checks access to `input` the way an operation would, without doing it:
    /// a folder (or a mount root) passes whatever its name.
    fn check(&self, input: &str, access: Access) -> Result<()> {
        let target = self.locate(input, access)?;
        match self.check_file_name(&target, Op::Stat) {
            Err(FsError::IsADirectory { .. }) => Ok(()),
            other => other,
        }
    }

    /// Whether the sandbox lets `path` be read (mount, mode and suffix rules).
    pub fn can_read(&self, path: &str) -> bool {
        self.check(path, Access::Read).is_ok()
    }

    /// Whether the sandbox lets `path` be written (mount, mode and suffix rules).
    pub fn can_write(&self, path: &str) -> bool {
        self.check(path, Access::Write).is_ok()
    }

    /// Maps a virtual path to its mount and the path relative to that mount.
    pub fn resolve(&self, path: &str) -> Result<Resolved> {
        self.resolve_for(path, Access::Read)
    }

    /// Maps a virtual path to the mount that serves `access` to it, or the
    /// refusal that access would meet (outside, read-only, write-only).
    pub fn resolve_for(&self, path: &str, access: Access) -> Result<Resolved> {
        let t = self.locate(path, access)?;
        Ok(Resolved { path: t.vpath.clone(), mount: t.mount.path.clone(), relative: t.rel })
    }

    /// A child sandbox holding narrower handles, opened from this sandbox's own.
    /// The rules are `warden_policy::plan_derive`'s; each entry is looked up
    /// through the handle that serves its access, before any entry is merged
    /// into another, so that an entry leading out is refused wherever it stands.
    pub fn derive(&self, request: &DeriveRequest) -> Result<Sandbox> {
        let lookup = |path: &VPath, access| self.lookup_entry(path, access);
        let planned = plan_derive(&self.areas(), self.namespace(), request, lookup).map_err(FsError::Derive)?;
        let mut mounts = Vec::with_capacity(planned.len());
        for area in planned {
            let access = if area.readable { Access::Read } else { Access::Write };
            let target = self.locate_vpath(area.path.clone(), access)?;
            let dir = if target.is_mount_root() {
                target.mount.dir.try_clone()
            } else {
                target.mount.dir.open_dir(&target.rel)
            }
            .map_err(|e| io_error(Op::Derive, &target, e, self))?;
            let rules = Rules { readable: area.readable, writable: area.writable, ..target.mount.rules.clone() };
            let host_root = match target.is_mount_root() {
                true => target.mount.host_root.clone(),
                false => target.mount.host_root.join(&target.rel),
            };
            mounts.push(OpenMount { host_root, path: area.path, rules, dir });
        }
        Ok(Sandbox { layout: self.layout, mount_names: self.mount_names.clone(), mounts })
    }

    /// What a derive entry is, seen through the handle that serves `access` there.
    fn lookup_entry(&self, path: &VPath, access: Access) -> EntryLookup {
        let Ok(target) = self.locate_vpath(path.clone(), access) else { return EntryLookup::LeadsOut };
        match target.mount.dir.metadata(target.rel_or_dot()) {
            Ok(meta) if meta.is_dir() => EntryLookup::Grants(path.clone()),
            Ok(_) => EntryLookup::Grants(path.parent()),
            // cap-std's word for a path that would leave the handle.
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied && e.raw_os_error().is_none() => EntryLookup::LeadsOut,
            Err(_) => EntryLookup::Missing,
        }
    }

    /// Follows symlinks in the last component, inside the mount, checking the
    /// suffix rule against every name on the way; returns the final relative path.
    pub(crate) fn follow_final(&self, target: &Target<'_>, op: Op) -> Result<PathBuf> {
        match links::follow_final(&target.mount.dir, &target.rel, &target.mount.rules) {
            Ok(Followed::Path(rel)) => Ok(rel),
            Ok(Followed::Refused { name }) => Err(self.check_name(target, &name).unwrap_err().into()),
            Err(e) => Err(io_error(op, target, e, self)),
        }
    }
}

fn allows(rules: &Rules, access: Access) -> bool {
    match access {
        Access::Read => rules.readable,
        Access::Write => rules.writable,
    }
}

/// Opens the folder `rel` below `dir`, creating it and its parents when missing.
/// When creation fails because a component is in the way, the error of the
/// open is returned instead, so that an escaping symlink reads as an escape.
pub(crate) fn ensure_dir(dir: &Dir, rel: &Path) -> io::Result<Dir> {
    match dir.open_dir(rel) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            dir.create_dir_all(rel).or_else(|create| dir.open_dir(rel).and(Err(create)))?;
            dir.open_dir(rel)
        }
        other => other,
    }
}

/// Shows a caller's string safely: control characters (NUL included) escaped.
pub(crate) fn shown(input: &str) -> String {
    input.escape_debug().to_string()
}

/// Turns an I/O error into a message with the virtual path only.
pub(crate) fn io_error(op: Op, target: &Target<'_>, e: io::Error, sandbox: &Sandbox) -> FsError {
    let path = target.display();
    match e.kind() {
        // cap-std reports an escape (a symlink or `..` leading out) as a
        // PermissionDenied that carries no OS error number.
        io::ErrorKind::PermissionDenied if e.raw_os_error().is_none() => {
            Denial::OutsideSandbox { path, readable: sandbox.readable_list() }.into()
        }
        io::ErrorKind::NotFound => FsError::NotFound { op, path },
        io::ErrorKind::AlreadyExists => FsError::AlreadyExists { op, path },
        io::ErrorKind::IsADirectory => FsError::IsADirectory { op, path },
        io::ErrorKind::NotADirectory => FsError::NotADirectory { op, path },
        _ => FsError::Io { op, path, source: e },
    }
}
