//! `stat`: what a path is, as the sandbox sees it.

use std::time::SystemTime;

use warden_policy::VPath;

use crate::error::{Op, Result};
use crate::list::EntryKind;
use crate::error::Access;
use crate::sandbox::{io_error, Sandbox};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub path: VPath,
    pub kind: EntryKind,
    pub size: u64,
    pub modified: Option<SystemTime>,
    /// Whether the sandbox would let this path be written.
    pub writable: bool,
}

impl Sandbox {
    /// Describes a path, following symlinks inside the sandbox.
    pub fn stat(&self, path: &str) -> Result<Stat> {
        let vpath = self.parse(path)?;
        if self.virtual_children(&vpath).is_some() {
            return Ok(Stat { path: vpath, kind: EntryKind::Dir, size: 0, modified: None, writable: false });
        }
        let target = self.locate_vpath(vpath, Access::Read)?;
        let meta = target
            .mount
            .dir
            .metadata(target.rel_or_dot())
            .map_err(|e| io_error(Op::Stat, &target, e, self))?;
        if meta.is_file()
            && let Some(name) = target.vpath.file_name()
        {
            self.check_name(&target, name)?;
        }
        let kind = if meta.is_dir() { EntryKind::Dir } else if meta.is_file() { EntryKind::File } else { EntryKind::Other };
        Ok(Stat {
            writable: self.can_write(target.vpath.as_str()),
            path: target.vpath,
            kind,
            size: meta.len(),
            modified: meta.modified().ok().map(|t| t.into_std()),
        })
    }
}
