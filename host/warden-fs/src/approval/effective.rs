//! The sandbox in effect: the base sandbox with approval rules applied and grants added.

use std::io;
use std::path::Path;

use cap_std::fs::Dir;
use warden_policy::Rules;

use super::request::GrantDir;
use crate::error::{Access, FsError, Op, Result};
use crate::sandbox::{ensure_dir, OpenMount, Sandbox};

/// An allowed request: the folder and the access it grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Grant {
    pub access: Access,
    pub dir: GrantDir,
    /// Index of the base mount the folder lies in; `None` for a dynamic grant.
    pub mount: Option<usize>,
}

/// Mounts needing approval for reads are left out and those needing it for
/// writes are read-only, unless a grant covers the whole mount; each other
/// grant becomes a mount of its own. The result has no approval rules left:
/// it is exactly what may be done now.
pub(crate) fn effective(base: &Sandbox, grants: &[&Grant]) -> Result<Sandbox> {
    let at_root = |i: usize, access: Access| {
        grants.iter().any(|g| g.mount == Some(i) && g.dir.path == base.mounts()[i].path && g.access >= access)
    };
    let mut mounts = Vec::new();
    for (i, m) in base.mounts().iter().enumerate() {
        if m.rules.read_approval && !at_root(i, Access::Read) {
            continue;
        }
        let writable = m.rules.writable && (!m.rules.write_approval || at_root(i, Access::Write));
        if !m.rules.readable && !writable {
            continue;
        }
        mounts.push(duplicate(m, m.dir.try_clone(), m.host_root.clone(), m.path.clone(), writable)?);
    }
    for grant in merged(grants) {
        let mount = match grant.mount {
            Some(i) if grant.dir.path == base.mounts()[i].path => continue,
            Some(i) => {
                let m = &base.mounts()[i];
                let rel = grant.dir.path.strip_prefix(&m.path).unwrap_or_default();
                let writable = m.rules.writable && (grant.access == Access::Write || !m.rules.write_approval);
                // A folder granted for writing may be one the write is about to create.
                let dir = if grant.access == Access::Write { ensure_dir(&m.dir, Path::new(rel)) } else { m.dir.open_dir(rel) };
                // A folder granted for reading that is not there (any more) grants nothing now:
                // left out, so that one such grant does not break every later operation.
                if grant.access == Access::Read && dir.as_ref().is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
                    continue;
                }
                duplicate(m, dir, grant.dir.host.clone(), grant.dir.path.clone(), writable)?
            }
            None => OpenMount {
                path: grant.dir.path.clone(),
                rules: Rules { writable: grant.access == Access::Write, ..Rules::default() },
                host_root: grant.dir.host.clone(),
                dir: open_granted_dir(&grant.dir.host).map_err(|source| grant_error(&grant.dir, source))?,
            },
        };
        mounts.push(mount);
    }
    Ok(base.with_mounts(mounts))
}

/// One grant per folder, with the widest access granted for it.
fn merged(grants: &[&Grant]) -> Vec<Grant> {
    let mut out: Vec<Grant> = Vec::new();
    for g in grants {
        match out.iter_mut().find(|o| o.dir.path == g.dir.path) {
            Some(o) => o.access = o.access.max(g.access),
            None => out.push((*g).clone()),
        }
    }
    out
}

fn duplicate(m: &OpenMount, dir: io::Result<Dir>, host_root: std::path::PathBuf, path: warden_policy::VPath, writable: bool) -> Result<OpenMount> {
    let dir = dir.map_err(|source| FsError::Io { op: Op::Derive, path: path.to_string(), source })?;
    let rules = Rules { writable, read_approval: false, write_approval: false, ..m.rules.clone() };
    Ok(OpenMount { path, rules, host_root, dir })
}

fn grant_error(dir: &GrantDir, source: io::Error) -> FsError {
    FsError::Io { op: Op::Derive, path: dir.path.to_string(), source }
}

/// Opens a granted host folder. The path is canonical when granted; on Linux
/// the kernel refuses any symlink on the way, so a folder swapped for a link
/// since the person said yes is not opened.
#[cfg(target_os = "linux")]
fn open_granted_dir(host: &Path) -> io::Result<Dir> {
    use rustix::fs::{openat2, Mode, OFlags, ResolveFlags, CWD};
    let fd = openat2(CWD, host, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty(), ResolveFlags::NO_SYMLINKS)?;
    Ok(Dir::from_std_file(std::fs::File::from(fd)))
}

#[cfg(not(target_os = "linux"))]
fn open_granted_dir(host: &Path) -> io::Result<Dir> {
    if host.canonicalize()? != host {
        return Err(io::Error::other("the folder is no longer where it was granted"));
    }
    Dir::open_ambient_dir(host, cap_std::ambient_authority())
}
