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
            let kind = if file_type.is_dir() {
                EntryKind::Dir
            } else if file_type.is_symlink() {
                EntryKind::Symlink
            } else if file_type.is_file() {
                EntryKind::File
            } else {
                EntryKind::Other
            };
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
