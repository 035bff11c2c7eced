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

pub fn args(plan: &ExecPlan, cwd: &Path, seccomp_fd: Option<i32>, status_fd: i32, command: &[OsString]) -> BwrapArgs {
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
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => {}
            Ok(_) => a.bind("--ro-bind", path, path),
            Err(_) => {
                let missing = first_missing(path);
                if !placeholders.contains(&missing) {
                    a.bind("--ro-bind", Path::new("/dev/null"), &missing);
                    placeholders.push(missing);
                }
            }
        }
    }
    a.path("--chdir", cwd);
    if let Some(fd) = seccomp_fd {
        a.flags(&["--seccomp", &fd.to_string()]);
    }
    a.flags(&["--json-status-fd", &status_fd.to_string()]);
    a.0.push("--".into());
    a.0.extend(command.iter().cloned());
    BwrapArgs { args: a.0, placeholders }
}

/// The shallowest component of `path` that does not exist.
fn first_missing(path: &Path) -> PathBuf {
    let mut missing = path.to_owned();
    while let Some(parent) = missing.parent() {
        if parent.exists() {
            break;
        }
        missing = parent.to_owned();
    }
    missing
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
