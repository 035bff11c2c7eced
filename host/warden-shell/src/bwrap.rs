//! The bubblewrap command line for a plan. Built as a list of arguments,
//! never through a shell, with `--` before the command so that nothing the
//! command says can be read as a bwrap option.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::plan::{ExecPlan, SYSTEM_READ};

/// Arguments for bwrap, and the mount points bwrap will create in the host's
/// writable folders (placeholders over protected paths that do not exist yet),
/// which are removed after the run.
pub struct BwrapArgs {
    pub args: Vec<OsString>,
    pub placeholders: Vec<PathBuf>,
}

pub fn args(plan: &ExecPlan, cwd: &Path, seccomp_fd: Option<i32>, status_fd: Option<i32>, command: &[OsString]) -> BwrapArgs {
    let mut a = Args(Vec::new());
    a.flags(&["--new-session", "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]);
    if !plan.network {
        a.flags(&["--unshare-net"]);
    }
    a.flags(&["--cap-drop", "ALL", "--hostname", "warden"]);
    if plan.read_all {
        a.bind("--ro-bind", Path::new("/"), Path::new("/"));
    } else {
        for dir in SYSTEM_READ.iter().map(Path::new) {
            match std::fs::symlink_metadata(dir) {
                Ok(m) if m.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(dir) {
                        a.bind("--symlink", &target, dir);
                    }
                }
                Ok(_) => a.bind("--ro-bind", dir, dir),
                Err(_) => {}
            }
        }
    }
    a.flags(&["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]);
    for bind in &plan.binds {
        a.bind(if bind.writable { "--bind" } else { "--ro-bind" }, &bind.host, &bind.host);
    }
    for path in &plan.denied {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => {
                a.path("--tmpfs", path);
                a.path("--remount-ro", path);
            }
            Ok(m) if m.is_file() => a.bind("--ro-bind", Path::new("/dev/null"), path),
            _ => {}
        }
    }
    // A folder holding a protected path is pinned by binding it onto itself:
    // a mount point cannot be renamed, so `.git` cannot be moved aside and
    // replaced by one with fresh hooks.
    let mut pinned: Vec<&Path> = Vec::new();
    for path in &plan.protected {
        let Some(bind) = plan.binds.iter().find(|b| path.starts_with(&b.host)) else { continue };
        for ancestor in path.ancestors().skip(1).take_while(|a| *a != bind.host) {
            let is_dir = std::fs::symlink_metadata(ancestor).is_ok_and(|m| m.is_dir());
            if is_dir && !pinned.contains(&ancestor) {
                pinned.push(ancestor);
            }
        }
    }
    pinned.sort_by_key(|p| p.components().count());
    for dir in pinned {
        a.bind("--bind", dir, dir);
    }
    let mut placeholders = Vec::new();
    for path in &plan.protected {
        let Some(bind) = plan.binds.iter().find(|b| path.starts_with(&b.host)) else { continue };
        // The shallowest part of the path that is not a folder: the path itself
        // when it exists, else what stands in the way (a missing component, or a
        // file such as a worktree's `.git`).
        let Some(blocker) = first_non_folder(path, &bind.host) else { continue };
        match std::fs::symlink_metadata(&blocker) {
            Ok(m) if m.file_type().is_symlink() => {}
            Ok(_) => a.bind("--ro-bind", &blocker, &blocker),
            Err(_) => {
                if !placeholders.contains(&blocker) {
                    a.bind("--ro-bind", Path::new("/dev/null"), &blocker);
                    placeholders.push(blocker);
                }
            }
        }
    }
    a.path("--chdir", cwd);
    if let Some(fd) = seccomp_fd {
        a.flags(&["--seccomp", &fd.to_string()]);
    }
    if let Some(fd) = status_fd {
        a.flags(&["--json-status-fd", &fd.to_string()]);
    }
    a.0.push("--".into());
    a.0.extend(command.iter().cloned());
    BwrapArgs { args: a.0, placeholders }
}

/// The shallowest of `path` and its ancestors below `root` that is not an existing
/// folder, or `path` itself when it is one.
fn first_non_folder(path: &Path, root: &Path) -> Option<PathBuf> {
    let below: Vec<&Path> = path.ancestors().take_while(|a| *a != root).collect();
    let found = below.iter().rev().find(|a| !std::fs::symlink_metadata(a).is_ok_and(|m| m.is_dir()));
    Some(found.copied().unwrap_or(path).to_owned())
}

struct Args(Vec<OsString>);

impl Args {
    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }

    fn path(&mut self, flag: &str, path: &Path) {
        self.0.push(flag.into());
        self.0.push(path.into());
    }

    fn bind(&mut self, flag: &str, from: &Path, to: &Path) {
        self.0.push(flag.into());
        self.0.push(from.into());
        self.0.push(to.into());
    }
}
