//! Git repositories inside a writable mount besides the one at its root: a
//! nested repository (a project folder of a workspace, a vendored checkout)
//! and the submodules under `.git/modules`. Their hooks and config run code
//! when someone uses git there later, on the host, as do the editor and agent
//! settings of their working folders. Looked for when the shield is worked
//! out: before each command under bubblewrap, when a container starts.

use std::path::{Path, PathBuf};

use crate::error::ShellError;

/// What stays read-only at the root of a nested repository's working folder.
pub const IN_A_REPOSITORY: &[&str] = &[
    ".git/hooks",
    ".git/config",
    ".git/worktrees",
    ".gitmodules",
    ".vscode",
    ".idea",
    ".claude",
    ".codex",
    ".cursor",
    ".husky",
    ".pre-commit-config.yaml",
    ".devcontainer",
    ".gemini",
    ".envrc",
    ".mcp.json",
];

/// How deep below a mount's root repositories are looked for.
const DEPTH: usize = 3;
/// How many folders are looked into at most, per mount: a mount with more
/// within [`DEPTH`] is refused rather than searched in part.
const FOLDERS: usize = 10_000;
/// Folders that hold dependencies or builds, not projects of their own.
const SKIPPED: &[&str] = &["node_modules", "target", ".venv", "venv", "__pycache__", "dist", "build"];

/// The paths to keep read-only in the repositories below `root` (a writable
/// mount), other than those of a repository at `root` itself, which the
/// policy's list covers: each nested repository's [`IN_A_REPOSITORY`], and the
/// hooks and config of every submodule's git folder, its own and theirs. A
/// mount too large to search is an error: a repository never looked at would
/// stay writable.
pub fn protected_below(root: &Path, vpath: &str) -> Result<Vec<PathBuf>, ShellError> {
    let mut out = Vec::new();
    let mut budget = FOLDERS;
    let mut level = vec![root.to_path_buf()];
    let unreadable = |path: &Path, e: std::io::Error| {
        let inside = path.strip_prefix(root).unwrap_or(path);
        let shown = if inside.as_os_str().is_empty() { vpath.to_owned() } else { format!("{}/{}", vpath.trim_end_matches('/'), inside.display()) };
        ShellError::Unprotectable(format!(
            "Warden cannot look at {shown} in the writable mount {vpath} ({e}), and a git repository there would keep \
             its hooks writable; the command was not run. Make the folder readable, or mount one without it"
        ))
    };
    for depth in 0..=DEPTH {
        let mut next = Vec::new();
        for folder in level {
            let git = folder.join(".git");
            if let Some(is_dir) = kind(&git).map_err(|e| unreadable(&git, e))? {
                if depth > 0 {
                    out.extend(IN_A_REPOSITORY.iter().map(|p| folder.join(p)));
                }
                if is_dir {
                    submodules(&git.join("modules"), &mut out).map_err(|(path, e)| unreadable(&path, e))?;
                }
            }
            if depth < DEPTH {
                next.extend(subfolders(&folder, &mut budget, vpath).map_err(|stop| match stop {
                    Stop::TooLarge(e) => e,
                    Stop::Unreadable(e) => unreadable(&folder, e),
                })?);
            }
        }
        level = next;
    }
    Ok(out)
}

/// Whether `path` is a folder; `None` when nothing is there. Any other
/// failure is an error: what cannot be looked at cannot be covered.
fn kind(path: &Path) -> std::io::Result<Option<bool>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta.is_dir())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The folders in `folder` to look into next (a symlink is not followed:
/// what it leads to is covered where it is, or not in the mount), each
/// taken from `budget`. A folder gone meanwhile has none.
fn subfolders(folder: &Path, budget: &mut usize, vpath: &str) -> Result<Vec<PathBuf>, Stop> {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Stop::Unreadable(e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(Stop::Unreadable)?;
        let name = entry.file_name();
        if name == ".git" || SKIPPED.iter().any(|s| name == *s) || !entry.file_type().map_err(Stop::Unreadable)?.is_dir() {
            continue;
        }
        if *budget == 0 {
            return Err(Stop::TooLarge(ShellError::Unprotectable(format!(
                "the writable mount {vpath} holds more than {FOLDERS} folders within {DEPTH} levels of its root, \
                 too many to look for the git repositories whose hooks must stay read-only; the command was not run. \
                 Mount a smaller folder, or move dependencies into node_modules, target or build"
            ))));
        }
        *budget -= 1;
        found.push(entry.path());
    }
    Ok(found)
}

/// Why a folder's subfolders were not all listed.
enum Stop {
    TooLarge(ShellError),
    Unreadable(std::io::Error),
}

/// The hooks and config of each submodule's git folder below `modules`, and
/// of theirs (`modules/a/modules/b`); the folder that could not be read, if one.
fn submodules(modules: &Path, out: &mut Vec<PathBuf>) -> Result<(), (PathBuf, std::io::Error)> {
    let entries = match std::fs::read_dir(modules) {
        Ok(entries) => entries,
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => return Ok(()),
        Err(e) => return Err((modules.to_owned(), e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| (modules.to_owned(), e))?;
        if !entry.file_type().map_err(|e| (entry.path(), e))?.is_dir() {
            continue;
        }
        let module = entry.path();
        out.extend(["hooks", "config", "worktrees"].map(|p| module.join(p)));
        submodules(&module.join("modules"), out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_repositories_and_submodules_are_found_and_dependencies_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for folder in [".git/modules/lib/hooks", ".git/modules/lib/modules/inner", "apps/web/.git/hooks", "a/b/c/.git", "a/b/c/d/.git", "node_modules/x/.git"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        std::fs::create_dir_all(root.join("tools")).unwrap();
        std::fs::write(root.join("tools/.git"), "gitdir: ../.git/modules/tools\n").unwrap();
        let found = protected_below(root, "/w").unwrap();
        let has = |p: &str| found.contains(&root.join(p));
        for expected in [".git/modules/lib/hooks", ".git/modules/lib/config", ".git/modules/lib/worktrees", "apps/web/.git/worktrees", ".git/modules/lib/modules/inner/hooks", "apps/web/.git/hooks", "apps/web/.claude", "a/b/c/.git/config", "tools/.git/hooks"] {
            assert!(has(expected), "{expected} not in {found:?}");
        }
        // Deeper than three folders, or among dependencies: not looked for.
        assert!(!has("a/b/c/d/.git/hooks") && !has("node_modules/x/.git/hooks"), "{found:?}");
        // The root's own repository is the policy's list's.
        assert!(!has(".git/hooks") && !has(".claude"), "{found:?}");
    }

    #[test]
    fn a_mount_too_large_to_search_is_refused_not_searched_in_part() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..=FOLDERS {
            std::fs::create_dir(dir.path().join(format!("d{i}"))).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("zz/.git/hooks")).unwrap();
        let refused = protected_below(dir.path(), "/w").unwrap_err().to_string();
        assert!(refused.starts_with("the writable mount /w holds more than 10000 folders within 3 levels of its root"), "{refused}");
    }

    /// Run by [`a_folder_warden_cannot_read_is_refused_not_skipped`] as
    /// another user (root reads any folder): searches the mount it is given.
    #[test]
    #[ignore = "run as another user by the test below"]
    fn search_as_another_user() {
        let Some(root) = std::env::var_os("WARDEN_TEST_SEARCH_ROOT") else { return };
        match protected_below(Path::new(&root), "/w") {
            Ok(found) => println!("found {found:?}"),
            Err(e) => println!("refused: {e}"),
        }
    }

    #[test]
    fn a_folder_warden_cannot_read_is_refused_not_skipped() {
        use std::os::unix::fs::PermissionsExt;
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub/.git/hooks")).unwrap();
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
        // What a command may do in its writable mount, before the next one runs.
        std::fs::set_permissions(root.join("sub"), std::fs::Permissions::from_mode(0o000)).unwrap();
        let search = |uid: u32| {
            let mut me = std::process::Command::new(std::env::current_exe().unwrap());
            me.args(["--exact", "repos::tests::search_as_another_user", "--ignored", "--nocapture"]).env("WARDEN_TEST_SEARCH_ROOT", root);
            if uid != 0 {
                let gid = if uid == 65534 { 65534 } else { rustix::process::getegid().as_raw() };
                me.uid(uid).gid(gid);
            }
            String::from_utf8(me.output().unwrap().stdout).unwrap()
        };
        let mine = rustix::process::geteuid().as_raw();
        let other = if mine == 0 { 65534 } else { mine };
        let output = search(other);
        assert!(
            output.contains(
                "refused: Warden cannot look at /w/sub/.git in the writable mount /w (Permission denied (os error 13)), and a git \
                 repository there would keep its hooks writable; the command was not run"
            ),
            "{output}"
        );
        std::fs::set_permissions(root.join("sub"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(search(other).contains(&format!("{:?}", root.join("sub/.git/hooks"))), "readable again, the nested repository is found");
    }
}
