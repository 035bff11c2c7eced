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
    for depth in 0..=DEPTH {
        let mut next = Vec::new();
        for folder in level {
            let git = folder.join(".git");
            if depth > 0 && std::fs::symlink_metadata(&git).is_ok() {
                out.extend(IN_A_REPOSITORY.iter().map(|p| folder.join(p)));
            }
            if std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
                submodules(&git.join("modules"), &mut out);
            }
            if depth == DEPTH {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&folder) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                // A symlink is not followed: what it leads to is covered where it is, or not in the mount.
                if name == ".git" || SKIPPED.contains(&name.as_ref()) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                if budget == 0 {
                    return Err(ShellError::Unprotectable(format!(
                        "the writable mount {vpath} holds more than {FOLDERS} folders within {DEPTH} levels of its root, \
                         too many to look for the git repositories whose hooks must stay read-only; the command was not run. \
                         Mount a smaller folder, or move dependencies into node_modules, target or build"
                    )));
                }
                budget -= 1;
                next.push(entry.path());
            }
        }
        level = next;
    }
    Ok(out)
}

/// The hooks and config of each submodule's git folder below `modules`, and
/// of theirs (`modules/a/modules/b`).
fn submodules(modules: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(modules) else { return };
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let module = entry.path();
        out.extend(["hooks", "config", "worktrees"].map(|p| module.join(p)));
        submodules(&module.join("modules"), out);
    }
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
}
