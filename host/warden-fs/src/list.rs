//! `list_files`: a sorted, recursive listing through handles. Never needs approval.

use cap_std::fs::Dir;
use globset::{GlobBuilder, GlobMatcher};
use warden_policy::{Rules, VPath};

use crate::error::{FsError, Op, Result};
use crate::error::Access;
use crate::sandbox::{io_error, Sandbox};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

impl EntryKind {
    /// What a directory entry's type is (a symlink as itself).
    pub fn of(file_type: &cap_std::fs::FileType) -> EntryKind {
        if file_type.is_dir() {
            EntryKind::Dir
        } else if file_type.is_symlink() {
            EntryKind::Symlink
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        }
    }

    /// `file`, `dir`, `symlink` or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "dir",
            EntryKind::Symlink => "symlink",
            EntryKind::Other => "other",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: VPath,
    pub kind: EntryKind,
}

/// One entry of a folder, as [`Sandbox::list_dir`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    /// What the entry itself is (a symlink is a `Symlink`).
    pub kind: EntryKind,
    /// Whether it is a folder, or a symlink that leads to one inside the sandbox.
    pub leads_to_dir: bool,
    /// A regular file's size (through a symlink, its target's).
    pub size: Option<u64>,
}

/// A glob for listings. Without a `/` it matches file names at any depth
/// (`*.md`); with one it matches the path below the listed folder (`src/**/*.rs`).
struct Pattern {
    matcher: GlobMatcher,
    whole_path: bool,
}

impl Pattern {
    fn new(glob: &str) -> Result<Pattern> {
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .map_err(|e| FsError::InvalidGlob { glob: glob.to_owned(), why: e.kind().to_string() })?
            .compile_matcher();
        Ok(Pattern { matcher, whole_path: glob.contains('/') })
    }

    fn matches(&self, relative: &str, name: &str) -> bool {
        self.matcher.is_match(if self.whole_path { relative } else { name })
    }
}

struct Walk<'a> {
    pattern: Option<&'a Pattern>,
    rules: &'a Rules,
    out: Vec<Entry>,
}

impl Sandbox {
    /// Lists everything below `path` (the root when `None`) that the sandbox
    /// lets the caller see, filtered by `glob`, sorted by path. Symlinked
    /// folders are listed but not entered; files the suffix rule hides are left out.
    pub fn list_files(&self, path: Option<&str>, glob: Option<&str>) -> Result<Vec<Entry>> {
        let pattern = glob.map(Pattern::new).transpose()?;
        let base = self.parse(path.unwrap_or("/"))?;
        let mut entries = self.list_below(&base, &base, pattern.as_ref())?;
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        entries.dedup();
        Ok(entries)
    }

    /// The entries of one folder, sorted by name; files the suffix rule
    /// hides are left out. A symlink that leads out, or round in a loop,
    /// is listed as what it is, not as a folder.
    pub fn list_dir(&self, path: &str) -> Result<Vec<DirEntry>> {
        let vpath = self.parse(path)?;
        if let Some(children) = self.virtual_children(&vpath) {
            return Ok(children.into_iter().map(|name| DirEntry { name, kind: EntryKind::Dir, leads_to_dir: true, size: None }).collect());
        }
        let target = self.locate_vpath(vpath, Access::Read)?;
        let fail = |e| io_error(Op::List, &target, e, self);
        let dir = target.mount.dir.open_dir(target.rel_or_dot()).map_err(fail)?;
        let mut out = Vec::new();
        for entry in dir.entries().map_err(fail)? {
            let entry = entry.map_err(fail)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let file_type = entry.file_type().map_err(fail)?;
            let kind = EntryKind::of(&file_type);
            // Through the handle, hop by hop under the suffix rule: a link out, a
            // loop or a hidden name on the way is no folder, and shows no size.
            let followed = match crate::links::follow_final(&dir, std::path::Path::new(&name), &target.mount.rules) {
                Ok(crate::links::Followed::Path(rel)) => dir.metadata(rel).ok(),
                _ => None,
            };
            let leads_to_dir = followed.as_ref().is_some_and(|m| m.is_dir());
            if !leads_to_dir && !target.mount.rules.allows_name(&name) {
                continue;
            }
            let size = followed.filter(|m| m.is_file()).map(|m| m.len());
            out.push(DirEntry { name, kind, leads_to_dir, size });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Lists `folder` (a mount path or below, or a virtual folder above mounts),
    /// matching relative to `base`.
    fn list_below(&self, base: &VPath, folder: &VPath, pattern: Option<&Pattern>) -> Result<Vec<Entry>> {
        if let Some(children) = self.virtual_children(folder) {
            let mut out = Vec::new();
            for name in children {
                let sub = folder.join(&name);
                let rel = sub.strip_prefix(base).unwrap_or_default().to_owned();
                if pattern.is_none_or(|p| p.matches(&rel, &name)) {
                    out.push(Entry { path: sub.clone(), kind: EntryKind::Dir });
                }
                out.extend(self.list_below(base, &sub, pattern)?);
            }
            return Ok(out);
        }
        let target = self.locate_vpath(folder.clone(), Access::Read)?;
        let fail = |e| io_error(Op::List, &target, e, self);
        let dir = target.mount.dir.open_dir(target.rel_or_dot()).map_err(fail)?;
        let mut walk = Walk { pattern, rules: &target.mount.rules, out: Vec::new() };
        let prefix = folder.strip_prefix(base).unwrap_or_default().to_owned();
        walk.folder(&dir, folder, &prefix).map_err(fail)?;
        Ok(walk.out)
    }
}

impl Walk<'_> {
    fn folder(&mut self, dir: &Dir, vfolder: &VPath, relative: &str) -> std::io::Result<()> {
        for entry in dir.entries()? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let file_type = entry.file_type()?;
            let kind = EntryKind::of(&file_type);
            if kind != EntryKind::Dir && !self.rules.allows_name(&name) {
                continue;
            }
            let rel = if relative.is_empty() { name.clone() } else { format!("{relative}/{name}") };
            let vpath = vfolder.join(&name);
            if self.pattern.is_none_or(|p| p.matches(&rel, &name)) {
                self.out.push(Entry { path: vpath.clone(), kind });
            }
            if kind == EntryKind::Dir {
                let sub = entry.open_dir()?;
                self.folder(&sub, &vpath, &rel)?;
            }
        }
        Ok(())
    }
}
