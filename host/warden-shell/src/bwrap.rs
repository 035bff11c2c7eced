//! The bubblewrap command line for a plan. Built as a list of arguments,
//! never through a shell, with `--` before the command so that nothing the
//! command says can be read as a bwrap option.

use std::ffi::OsString;
use std::path::Path;

use warden_policy::Network;

use crate::egress::BRIDGE_IN_SANDBOX;
use crate::plan::{ExecPlan, SYSTEM_READ};
use crate::shield::Shield;

/// The bwrap arguments for `plan`, with the shield's mounts over the binds.
/// `bridge`: the network bridge program, bound at [`BRIDGE_IN_SANDBOX`]
/// when the plan has an allowlist and `command` starts with it.
#[allow(clippy::too_many_arguments)]
pub fn args(
    plan: &ExecPlan,
    shield: &Shield,
    cwd: &Path,
    seccomp_fd: Option<i32>,
    status_fd: Option<i32>,
    bridge: Option<&Path>,
    command: &[OsString],
) -> Vec<OsString> {
    let mut a = Args(Vec::new());
    a.flags(&["--new-session", "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]);
    if plan.network != Network::Full {
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
    if let Some(program) = bridge {
        a.bind("--ro-bind", program, Path::new(BRIDGE_IN_SANDBOX));
    }
    for bind in &plan.binds {
        a.bind(if bind.writable { "--bind" } else { "--ro-bind" }, &bind.host, &bind.host);
    }
    for dir in &shield.pinned {
        a.bind("--bind", dir, dir);
    }
    for path in &shield.read_only {
        a.bind("--ro-bind", path, path);
    }
    for path in &shield.placeholders {
        let source = if crate::placeholders::bound_onto_itself(path) { path.as_path() } else { Path::new("/dev/null") };
        a.bind("--ro-bind", source, path);
    }
    // Last: a bind of a folder above a denied path (a protected `.codex/`
    // holding a denied `auth.json`) brings the host's copy back with it.
    for path in &shield.hidden_dirs {
        a.path("--tmpfs", path);
        a.path("--remount-ro", path);
    }
    for path in &shield.hidden_files {
        a.bind("--ro-bind", Path::new("/dev/null"), path);
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
    a.0
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
