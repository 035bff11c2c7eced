//! The rules a plan's folders become under Landlock, which only grants, by
//! hierarchy: a right given on a folder holds for everything below it and
//! cannot be taken back lower down. So a folder that holds a protected or
//! denied path is not granted whole: it and every folder on the way to that
//! path may only be listed (a "chain"), each other entry beside the chain is
//! granted whole, a protected path is granted read-only, and a denied path
//! nothing. The price: no new entry can be made at a chain level (at the
//! mount's top, in `.git/`), so `git commit` cannot make `.git/index.lock`.
//!
//! Pure: the folders' entries come from a lister, so the layout is tested
//! without a file system.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// What a grant allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// List the folder; open nothing in it, make nothing.
    ListOnly,
    /// Read and execute.
    Read,
    /// Everything Landlock handles, within.
    Write,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    File,
    /// Never given a rule: following it could grant a place outside the mount.
    Symlink,
    /// A socket, FIFO or device inside a mount: granted like a file.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: OsString,
    pub kind: EntryKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub path: PathBuf,
    pub access: Access,
    /// A file's grant may carry only file rights.
    pub dir: bool,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Layout {
    pub grants: Vec<Grant>,
    /// Folders that can gain no new entry, for the result's note.
    pub chains: Vec<PathBuf>,
}

/// One mount: its host folder, whether it is writable, and the protected
/// (kept read-only; only in a writable mount) and denied (unreadable) paths
/// inside it, as the shield found them, links followed.
pub struct MountRules<'a> {
    pub root: &'a Path,
    pub writable: bool,
    pub protected: &'a [PathBuf],
    pub denied: &'a [PathBuf],
}

impl Layout {
    pub fn add_mount(&mut self, mount: &MountRules<'_>, list: &dyn Fn(&Path) -> io::Result<Vec<Entry>>) -> io::Result<()> {
        let whole = if mount.writable { Access::Write } else { Access::Read };
        let protected: Vec<&Path> = if mount.writable { mount.protected.iter().map(PathBuf::as_path).collect() } else { Vec::new() };
        let denied: Vec<&Path> = mount.denied.iter().map(PathBuf::as_path).collect();
        let special = |p: &Path| protected.iter().chain(&denied).any(|s| s.starts_with(p));
        if !special(mount.root) {
            self.grants.push(Grant { path: mount.root.to_path_buf(), access: whole, dir: true });
            return Ok(());
        }
        // Each folder to walk, with what its plain entries get.
        let mut pending = vec![(mount.root.to_path_buf(), whole)];
        while let Some((folder, plain)) = pending.pop() {
            self.grants.push(Grant { path: folder.clone(), access: Access::ListOnly, dir: true });
            self.chains.push(folder.clone());
            for entry in list(&folder)? {
                let path = folder.join(&entry.name);
                let dir = entry.kind == EntryKind::Dir;
                if entry.kind == EntryKind::Symlink || denied.contains(&path.as_path()) {
                    continue;
                }
                let denied_below = denied.iter().any(|d| d.starts_with(&path) && *d != path);
                if protected.contains(&path.as_path()) {
                    // Read-only, unless a denied path lies below: then a chain of read-only entries.
                    if dir && denied_below {
                        pending.push((path, Access::Read));
                    } else {
                        self.grants.push(Grant { path, access: Access::Read, dir });
                    }
                } else if dir && special(&path) {
                    pending.push((path, plain));
                } else {
                    self.grants.push(Grant { path, access: plain, dir });
                }
            }
        }
        Ok(())
    }
}

/// A folder's entries, links not followed.
pub fn list_folder(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let kind = if kind.is_symlink() {
            EntryKind::Symlink
        } else if kind.is_dir() {
            EntryKind::Dir
        } else if kind.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        };
        out.push(Entry { name: entry.file_name(), kind });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// A tree of folders and files: `a/`, `a/b`, ...
    fn tree(paths: &[&str]) -> BTreeMap<PathBuf, Vec<Entry>> {
        let mut folders: BTreeMap<PathBuf, Vec<Entry>> = BTreeMap::new();
        folders.insert(PathBuf::from("/m"), Vec::new());
        for path in paths {
            let dir = path.ends_with('/');
            let full = Path::new("/m").join(path.trim_end_matches('/'));
            let kind = if path.ends_with('@') { EntryKind::Symlink } else if dir { EntryKind::Dir } else { EntryKind::File };
            let full = PathBuf::from(full.to_string_lossy().trim_end_matches('@'));
            if dir {
                folders.entry(full.clone()).or_default();
            }
            folders.entry(full.parent().unwrap().to_path_buf()).or_default().push(Entry { name: full.file_name().unwrap().into(), kind });
        }
        folders
    }

    fn layout(paths: &[&str], writable: bool, protected: &[&str], denied: &[&str]) -> Layout {
        let folders = tree(paths);
        let abs = |l: &[&str]| l.iter().map(|p| Path::new("/m").join(p)).collect::<Vec<_>>();
        let (protected, denied) = (abs(protected), abs(denied));
        let mut layout = Layout::default();
        let list = |p: &Path| folders.get(p).cloned().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound));
        layout.add_mount(&MountRules { root: Path::new("/m"), writable, protected: &protected, denied: &denied }, &list).unwrap();
        layout
    }

    fn grant(path: &str, access: Access, dir: bool) -> Grant {
        Grant { path: PathBuf::from(path), access, dir }
    }

    fn sorted(layout: &Layout) -> Vec<Grant> {
        let mut grants = layout.grants.clone();
        grants.sort_by(|a, b| a.path.cmp(&b.path));
        grants
    }

    #[test]
    fn a_mount_without_protected_or_denied_paths_is_granted_whole() {
        assert_eq!(layout(&["a.txt", "src/"], true, &[], &[]).grants, [grant("/m", Access::Write, true)]);
        assert_eq!(layout(&["a.txt"], false, &[".git/hooks"], &[]).grants, [grant("/m", Access::Read, true)], "protected paths matter only where writes are granted");
    }

    #[test]
    fn a_protected_path_is_reached_through_folders_that_may_only_be_listed() {
        let l = layout(&["a.txt", "src/", ".git/", ".git/HEAD", ".git/hooks/", ".git/config"], true, &[".git/hooks", ".git/config"], &[]);
        assert_eq!(
            sorted(&l),
            [
                grant("/m", Access::ListOnly, true),
                grant("/m/.git", Access::ListOnly, true),
                grant("/m/.git/HEAD", Access::Write, false),
                grant("/m/.git/config", Access::Read, false),
                grant("/m/.git/hooks", Access::Read, true),
                grant("/m/a.txt", Access::Write, false),
                grant("/m/src", Access::Write, true),
            ]
        );
        assert_eq!(l.chains, [PathBuf::from("/m"), PathBuf::from("/m/.git")]);
    }

    #[test]
    fn a_denied_path_gets_no_rule_even_in_a_read_only_mount() {
        let l = layout(&["notes.md", ".env", "keys/", "keys/id"], false, &[], &[".env", "keys/id"]);
        let paths: Vec<_> = l.grants.iter().map(|g| (g.path.to_string_lossy().into_owned(), g.access)).collect();
        assert!(paths.contains(&("/m/notes.md".into(), Access::Read)), "{paths:?}");
        assert!(!paths.iter().any(|(p, a)| (p == "/m/.env" || p == "/m/keys/id") && *a != Access::ListOnly), "{paths:?}");
        assert!(!paths.iter().any(|(p, _)| p == "/m/.env" || p == "/m/keys/id"), "{paths:?}");
    }

    #[test]
    fn a_denied_path_below_a_protected_folder_stays_unreadable() {
        let l = layout(&[".claude/", ".claude/settings.json", ".claude/secret.json", "a.txt"], true, &[".claude"], &[".claude/secret.json"]);
        assert_eq!(
            sorted(&l),
            [
                grant("/m", Access::ListOnly, true),
                grant("/m/.claude", Access::ListOnly, true),
                grant("/m/.claude/settings.json", Access::Read, false),
                grant("/m/a.txt", Access::Write, false),
            ]
        );
    }

    #[test]
    fn a_link_beside_a_chain_gets_no_rule() {
        let l = layout(&["out@", ".env"], true, &[], &[".env"]);
        assert_eq!(l.grants, [grant("/m", Access::ListOnly, true)]);
    }

    #[test]
    fn a_missing_protected_path_leaves_its_folder_a_chain_so_it_cannot_be_made() {
        let l = layout(&["a.txt"], true, &[".git/hooks"], &[]);
        assert_eq!(l.grants, [grant("/m", Access::ListOnly, true), grant("/m/a.txt", Access::Write, false)]);
    }
}
