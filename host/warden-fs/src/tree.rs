//! `delete`, `mkdir`, `move` and `copy`.

use std::io;

use cap_fs_ext::DirExt;


use crate::error::{Denial, FsError, Op, Result};
use crate::error::Access;
use crate::sandbox::{ensure_dir, io_error, Sandbox, Target};

impl Sandbox {
    /// Deletes a file, a symlink (not what it points to) or an empty folder.
    pub fn delete(&self, path: &str) -> Result<()> {
        let target = self.locate(path, Access::Write)?;
        if target.is_mount_root() {
            return Err(FsError::MountRoot { op: Op::Delete, path: target.display() });
        }
        let fail = |e| io_error(Op::Delete, &target, e, self);
        let meta = target.mount.dir.symlink_metadata(&target.rel).map_err(fail)?;
        if meta.is_dir() {
            return target.mount.dir.remove_dir(&target.rel).map_err(fail);
        }
        if let Some(name) = target.vpath.file_name() {
            self.check_name(&target, name)?;
        }
        target.mount.dir.remove_file(&target.rel).map_err(fail)
    }

    /// Deletes a file, a symlink (not what it points to), or a folder and
    /// everything in it. Nothing below a symlink is followed.
    pub fn delete_all(&self, path: &str) -> Result<()> {
        let target = self.locate(path, Access::Write)?;
        if target.is_mount_root() {
            return Err(FsError::MountRoot { op: Op::Delete, path: target.display() });
        }
        let fail = |e| io_error(Op::Delete, &target, e, self);
        let meta = target.mount.dir.symlink_metadata(&target.rel).map_err(fail)?;
        if !meta.is_dir() {
            return self.delete(path);
        }
        let dir = target.mount.dir.open_dir_nofollow(&target.rel).map_err(fail)?;
        if let Some(name) = hidden_name(&dir, &target.mount.rules).map_err(fail)? {
            return Err(FsError::Unsupported {
                op: Op::Delete,
                path: target.display(),
                why: if name.is_empty() { "it holds more than can be checked" } else { "it holds files this sandbox does not show (by their suffix)" },
            });
        }
        target.mount.dir.remove_dir_all(&target.rel).map_err(fail)
    }

    /// Creates a folder and any missing parents; an existing folder is fine.
    pub fn mkdir(&self, path: &str) -> Result<()> {
        let target = self.locate(path, Access::Write)?;
        ensure_dir(&target.mount.dir, target.rel_or_dot()).map(drop).map_err(|e| io_error(Op::Mkdir, &target, e, self))
    }

    /// Moves a file or folder; the destination must not exist.
    pub fn move_path(&self, from: &str, to: &str) -> Result<()> {
        let src = self.locate(from, Access::Write)?;
        if src.is_mount_root() {
            return Err(FsError::MountRoot { op: Op::Move, path: src.display() });
        }
        let meta = src.mount.dir.symlink_metadata(&src.rel).map_err(|e| io_error(Op::Move, &src, e, self))?;
        let dst = if meta.is_dir() {
            let dst = self.locate(to, Access::Write)?;
            if dst.mount.rules != src.mount.rules {
                return Err(FsError::Unsupported {
                    op: Op::Move,
                    path: src.display(),
                    why: "a folder cannot move to a mount with other rules; move its files one by one",
                });
            }
            dst
        } else {
            if let Some(name) = src.vpath.file_name() {
                self.check_name(&src, name)?;
            }
            let dst = self.writable_file(to, Op::Move)?;
            if let Some(max) = dst.mount.rules.max_file_bytes.filter(|&m| meta.len() > m) {
                return Err(Denial::ContentTooLarge { path: dst.display(), size: meta.len(), max }.into());
            }
            dst
        };
        // A file the sandbox may not read must not move to where it can.
        if self.mount_for(&src.vpath, Access::Read).is_none() && self.mount_for(&dst.vpath, Access::Read).is_some() {
            return Err(Denial::WriteOnly { path: src.display(), readable: self.readable_list() }.into());
        }
        self.prepare_destination(&dst, Op::Move)?;
        match src.mount.dir.rename(&src.rel, &dst.mount.dir, &dst.rel) {
            Err(e) if e.kind() == io::ErrorKind::CrossesDevices && !meta.is_dir() => {
                self.copy_file(&src, &dst, Op::Move)?;
                src.mount.dir.remove_file(&src.rel).map_err(|e| io_error(Op::Move, &src, e, self))
            }
            other => other.map_err(|e| io_error(Op::Move, &dst, e, self)),
        }
    }

    /// Copies a file, e.g. from a read-only mount into a writable one; the
    /// destination must not exist.
    pub fn copy(&self, from: &str, to: &str) -> Result<()> {
        let src = self.locate(from, Access::Read)?;
        let dst = self.writable_file(to, Op::Copy)?;
        self.prepare_destination(&dst, Op::Copy)?;
        self.copy_file(&src, &dst, Op::Copy)
    }

    fn copy_file(&self, src: &Target<'_>, dst: &Target<'_>, op: Op) -> Result<()> {
        let (mut file, size) = self.open_file(src, op).map_err(|e| match e {
            FsError::IsADirectory { .. } => FsError::Unsupported {
                op,
                path: src.display(),
                why: "it is a folder; copy its files one by one",
            },
            e => e,
        })?;
        let perms = file.metadata().ok().map(|m| m.permissions());
        self.replace_file(dst, op, size, &mut file, perms)?;
        Ok(())
    }

    /// Refuses an existing destination and creates its missing parent folders.
    fn prepare_destination(&self, dst: &Target<'_>, op: Op) -> Result<()> {
        if dst.is_mount_root() || dst.mount.dir.symlink_metadata(&dst.rel).is_ok() {
            return Err(FsError::AlreadyExists { op, path: dst.display() });
        }
        match dst.rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => ensure_dir(&dst.mount.dir, parent).map(drop).map_err(|e| io_error(op, dst, e, self)),
            None => Ok(()),
        }
    }
}


/// The first name below `dir` (not following symlinks) that `rules` hide;
/// an empty name when the tree is deeper than is looked into.
fn hidden_name(dir: &cap_std::fs::Dir, rules: &warden_policy::Rules) -> io::Result<Option<String>> {
    const DEEPEST: usize = 64;
    fn walk(dir: &cap_std::fs::Dir, rules: &warden_policy::Rules, depth: usize) -> io::Result<Option<String>> {
        if depth > DEEPEST {
            return Ok(Some(String::new()));
        }
        for entry in dir.entries()? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type()?.is_dir() {
                if let Some(found) = walk(&dir.open_dir_nofollow(&name)?, rules, depth + 1)? {
                    return Ok(Some(found));
                }
            } else if !rules.allows_name(&name) {
                return Ok(Some(name));
            }
        }
        Ok(None)
    }
    if rules.suffixes.is_none() {
        return Ok(None);
    }
    walk(dir, rules, 0)
}
