//! `write` and `edit`: atomic replacement through the parent folder's handle.

use std::io::{self, Read};
use std::path::Path;

use cap_std::fs::{Dir, Permissions};
use cap_tempfile::TempFile;

use crate::error::{Denial, FsError, Op, Result};
use crate::read::ReadOptions;
use crate::error::Access;
use crate::sandbox::{ensure_dir, io_error, Sandbox, Target};

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub bytes: u64,
    /// True when no file stood there before.
    pub created: bool,
}

impl Sandbox {
    /// Writes `content` to a file atomically, creating missing parent folders.
    /// A crash part-way leaves either the old file or the new one, never a mix.
    pub fn write(&self, path: &str, content: &[u8]) -> Result<Written> {
        let target = self.writable_file(path, Op::Write)?;
        self.replace_file(&target, Op::Write, content.len() as u64, &mut &content[..], None)
    }

    /// Replaces the one occurrence of `old` with `new` in a text file.
    pub fn edit(&self, path: &str, old: &str, new: &str) -> Result<Written> {
        let target = self.writable_file(path, Op::Edit)?;
        if old.is_empty() {
            return Err(FsError::EditEmpty { path: target.display() });
        }
        let text = self.read(target.vpath.as_str(), ReadOptions::default())?.text;
        match text.matches(old).count() {
            0 => return Err(FsError::EditNotFound { path: target.display() }),
            1 => {}
            count => return Err(FsError::EditNotUnique { path: target.display(), count }),
        }
        let edited = text.replacen(old, new, 1);
        self.replace_file(&target, Op::Edit, edited.len() as u64, &mut edited.as_bytes(), None)
    }

    /// Locates a file that may be written, suffix rule included.
    pub(crate) fn writable_file(&self, path: &str, op: Op) -> Result<Target<'_>> {
        let target = self.locate(path, Access::Write)?;
        self.check_file_name(&target, op)?;
        Ok(target)
    }

    /// Streams `size` bytes from `content` into a temporary file in the
    /// destination's folder, then renames it over the destination.
    pub(crate) fn replace_file(
        &self,
        target: &Target<'_>,
        op: Op,
        size: u64,
        content: &mut dyn Read,
        permissions: Option<Permissions>,
    ) -> Result<Written> {
        if let Some(max) = target.mount.rules.max_file_bytes.filter(|&m| size > m) {
            return Err(Denial::ContentTooLarge { path: target.display(), size, max }.into());
        }
        let fail = |e: io::Error| io_error(op, target, e, self);
        let rel = self.follow_final(target, op)?;
        let (parent, name) = (rel.parent().unwrap_or(Path::new("")), rel.file_name().unwrap_or_default());
        let owned_parent;
        let dir: &Dir = if parent.as_os_str().is_empty() {
            &target.mount.dir
        } else {
            owned_parent = ensure_dir(&target.mount.dir, parent).map_err(fail)?;
            &owned_parent
        };
        let existing = dir.symlink_metadata(name).ok();
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(FsError::IsADirectory { op, path: target.display() });
        }
        let mut temp = TempFile::new(dir).map_err(fail)?;
        let copied = io::copy(&mut content.take(size.saturating_add(1)), &mut temp).map_err(fail)?;
        if copied > size {
            return Err(fail(io::Error::other("source grew while being copied")));
        }
        let keep = permissions.or_else(|| existing.as_ref().filter(|m| m.is_file()).map(|m| m.permissions()));
        if let Some(perms) = keep {
            temp.as_file().set_permissions(perms).map_err(fail)?;
        }
        temp.as_file().sync_all().map_err(fail)?;
        temp.replace(name).map_err(fail)?;
        Ok(Written { bytes: copied, created: existing.is_none() })
    }
}
