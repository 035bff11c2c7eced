//! How the protected paths stay read-only and the denied paths hidden, worked
//! out from the host as it is just before a command: each path is looked at
//! once, and a symlink on the way is followed to where it leads, since a bind
//! mount over a symlink lands on its target anyway. A link that leads out of
//! every mount cannot be covered there, so the command does not run.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::error::ShellError;
use crate::plan::{Bind, ExecPlan};

/// Links followed on one path before it counts as a loop (Linux's own limit).
const MAX_LINK_HOPS: usize = 40;

/// Mount operations over the plan's binds, in the order bwrap must make them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Shield {
    /// Paths that must look absent (a file) or empty and read-only (a folder).
    pub hidden_files: Vec<PathBuf>,
    pub hidden_dirs: Vec<PathBuf>,
    /// Folders holding a protected path, bound onto themselves: a mount point
    /// cannot be renamed, so `.git` cannot be moved aside and replaced.
    pub pinned: Vec<PathBuf>,
    /// Existing protected paths, bound read-only onto themselves.
    pub read_only: Vec<PathBuf>,
    /// The first missing part of a protected path: a placeholder file is
    /// made there (`placeholders.rs`) and bound read-only onto itself, so
    /// that nothing can be made there; it goes with the last sandbox to hold it.
    pub placeholders: Vec<PathBuf>,
    /// Symlinks on the way to protected paths, with what they held. A mount
    /// cannot cover a symlink itself, so a command may replace one: that is
    /// checked after the run.
    pub links: Vec<(PathBuf, PathBuf)>,
}

impl Shield {
    /// The shield for `plan` as the host is now, with the repositories nested
    /// in its writable mounts (`repos.rs`) looked for.
    pub fn for_plan(plan: &ExecPlan) -> Result<Shield, ShellError> {
        let mut nested: Vec<PathBuf> = Vec::new();
        for bind in plan.binds.iter().filter(|b| b.writable) {
            nested.extend(crate::repos::protected_below(&bind.host, &bind.vpath)?);
        }
        Shield::build(plan, plan.protected.iter().chain(&nested))
    }

    /// The shield of `plan`'s denied paths alone. A container checks it
    /// before each command: a denied path that appeared since its start (a
    /// new `.env`) was never hidden, whereas every protected path already has
    /// a cover made at the start (a placeholder where it was missing), whose
    /// change the container notices by itself.
    pub fn of_denied(plan: &ExecPlan) -> Result<Shield, ShellError> {
        Shield::build(plan, std::iter::empty())
    }

    fn build<'a>(plan: &ExecPlan, protected: impl Iterator<Item = &'a PathBuf>) -> Result<Shield, ShellError> {
        let mut shield = Shield::default();
        for path in &plan.denied {
            let Some(real) = followed(path, &plan.binds, Guard::Hide, &mut Vec::new())? else { continue };
            match std::fs::symlink_metadata(&real) {
                Ok(m) if m.is_dir() => push_new(&mut shield.hidden_dirs, real),
                Ok(_) => push_new(&mut shield.hidden_files, real),
                Err(_) => {}
            }
        }
        for path in protected {
            let Some(real) = followed(path, &plan.binds, Guard::Protect, &mut shield.links)? else { continue };
            let Some(bind) = deepest_bind(&real, &plan.binds).filter(|b| b.writable) else { continue };
            shield.protect(&real, &bind.host);
            // Git takes config and hooks from the folder a git folder's
            // `commondir` names; a missing one gets a placeholder naming the
            // git folder itself.
            if real.file_name().is_some_and(|n| n == "config")
                && let Some(git) = real.parent().filter(|g| g.is_dir())
            {
                shield.protect(&git.join("commondir"), &bind.host);
            }
        }
        shield.pinned.sort_by_key(|p| p.components().count());
        Ok(shield)
    }

    /// The symlinks on the way to protected paths that no longer hold what they did.
    pub fn replaced_links(&self) -> Vec<&Path> {
        self.links.iter().filter(|(link, target)| std::fs::read_link(link).ok().as_ref() != Some(target)).map(|(l, _)| l.as_path()).collect()
    }

    /// Every path the shield covers, of any kind, and the symlinks it followed.
    pub fn covered(&self) -> Vec<&Path> {
        let lists = [&self.hidden_files, &self.hidden_dirs, &self.pinned, &self.read_only, &self.placeholders];
        let mut all: Vec<&Path> = lists.iter().flat_map(|l| l.iter().map(PathBuf::as_path)).collect();
        all.extend(self.links.iter().map(|(link, _)| link.as_path()));
        all
    }

    /// `path` has no symlink on the way below `root`.
    fn protect(&mut self, path: &Path, root: &Path) {
        let below: Vec<&Path> = path.ancestors().take_while(|a| *a != root).collect();
        // Shallowest first: the part that stops being a folder is what gets covered.
        for part in below.iter().rev() {
            let part = *part;
            // Each path is covered once (the engines refuse two mounts at one place), whatever
            // another sandbox made or removed there while this one looked: one covered as a
            // whole (a placeholder, a read-only bind) covers all below it.
            if self.read_only.iter().chain(&self.placeholders).any(|p| p == part) {
                return;
            }
            match std::fs::symlink_metadata(part) {
                Ok(m) if m.is_dir() && part != path => push_new(&mut self.pinned, part.to_path_buf()),
                Ok(_) => {
                    // Bound read-only onto itself, a folder is pinned too.
                    self.pinned.retain(|p| p != part);
                    return push_new(&mut self.read_only, part.to_path_buf());
                }
                Err(_) => {
                    self.pinned.retain(|p| p != part);
                    return push_new(&mut self.placeholders, part.to_path_buf());
                }
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Guard {
    Protect,
    Hide,
}

/// Where `path` really is, inside a mount. `None` when that is a read-only
/// place nothing needs covering in; an error when a link leads out of every mount.
fn followed(path: &Path, binds: &[Bind], guard: Guard, links: &mut Vec<(PathBuf, PathBuf)>) -> Result<Option<PathBuf>, ShellError> {
    let unprotectable = |why: String| {
        let (verb, state) = match guard {
            Guard::Protect => ("protected", "read-only"),
            Guard::Hide => ("denied", "hidden"),
        };
        ShellError::Unprotectable(format!(
            "the {verb} path {} {why}, so Warden cannot keep it {state}; the command was not run. \
             Remove the link, or make it point inside a mount",
            path.display()
        ))
    };
    // Bind roots are canonical: resolving starts there.
    let root = deepest_bind(path, binds).map_or(Path::new("/"), |b| b.host.as_path());
    let Some(real) = resolve(root, path, links) else {
        return Err(unprotectable("is a loop of symbolic links".into()));
    };
    if real == path {
        return Ok(Some(real));
    }
    match deepest_bind(&real, binds) {
        // A path outside the mounts to begin with (`read: all` shows the whole host).
        None if deepest_bind(path, binds).is_none() => Ok(Some(real)),
        None => Err(unprotectable(format!("leads through a symbolic link to {}, outside every mount", real.display()))),
        Some(_) => Ok(Some(real)),
    }
}

/// `path` with every symlink below `root` (a folder without symlinks on the
/// way) followed, like `realpath`, except that missing parts are kept as
/// written; the links followed are added to `links`. `None` for a loop.
fn resolve(root: &Path, path: &Path, links: &mut Vec<(PathBuf, PathBuf)>) -> Option<PathBuf> {
    let mut out = root.to_path_buf();
    let mut todo: VecDeque<OsString> = parts(path.strip_prefix(root).unwrap_or(path)).collect();
    let mut hops = 0;
    while let Some(part) = todo.pop_front() {
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        match std::fs::read_link(&next) {
            Ok(target) => {
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return None;
                }
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                for (i, p) in parts(&target).enumerate() {
                    todo.insert(i, p);
                }
                if !links.iter().any(|(l, _)| *l == next) {
                    links.push((next, target));
                }
            }
            Err(_) => out = next,
        }
    }
    Some(out)
}

fn parts(path: &Path) -> impl Iterator<Item = OsString> + '_ {
    path.components().filter_map(|c| match c {
        Component::Normal(name) => Some(name.to_owned()),
        Component::ParentDir => Some(OsString::from("..")),
        Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
    })
}

/// The bind a command reaches `path` through: the deepest one holding it.
fn deepest_bind<'a>(path: &Path, binds: &'a [Bind]) -> Option<&'a Bind> {
    binds.iter().filter(|b| path.starts_with(&b.host)).max_by_key(|b| b.host.components().count())
}

fn push_new(list: &mut Vec<PathBuf>, path: PathBuf) {
    if !list.contains(&path) {
        list.push(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_follows_links_on_the_way_and_keeps_missing_parts() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::os::unix::fs::symlink("real", root.join("rel")).unwrap();
        std::os::unix::fs::symlink(root.join("real/sub"), root.join("abs")).unwrap();
        std::os::unix::fs::symlink("../missing", root.join("real/sub/dangling")).unwrap();
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        let mut links = Vec::new();
        assert_eq!(resolve(&root, &root.join("rel/sub/x"), &mut links), Some(root.join("real/sub/x")));
        assert_eq!(links, [(root.join("rel"), PathBuf::from("real"))]);
        let resolve = |p: &Path| resolve(Path::new("/"), p, &mut Vec::new());
        assert_eq!(resolve(&root.join("abs/y")), Some(root.join("real/sub/y")));
        assert_eq!(resolve(&root.join("abs/dangling/z")), Some(root.join("real/missing/z")));
        assert_eq!(resolve(&root.join("real/../real/sub")), Some(root.join("real/sub")));
        assert_eq!(resolve(&root.join("loop/x")), None);
    }

    #[test]
    fn a_path_another_sandbox_covered_meanwhile_is_covered_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut shield = Shield::default();
        // .git is missing when the first protected path below it is looked at...
        shield.protect(&root.join(".git/hooks"), &root);
        // ...and another sandbox's placeholder is there when the next one is.
        std::fs::write(root.join(".git"), "").unwrap();
        shield.protect(&root.join(".git/config"), &root);
        assert_eq!((shield.placeholders.clone(), shield.read_only.clone()), (vec![root.join(".git")], vec![]));
        // A folder pinned on the way to one path and protected itself is bound once, read-only.
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        shield.protect(&root.join("a/b/c"), &root);
        shield.protect(&root.join("a"), &root);
        assert_eq!((shield.pinned.clone(), shield.read_only.clone()), (vec![root.join("a/b")], vec![root.join("a")]));
    }
}
