//! The bubblewrap command line for a plan. Built as a list of arguments,
//! never through a shell, with `--` before the command so that nothing the
//! command says can be read as a bwrap option.

use std::ffi::OsString;
use std::path::Path;

use warden_policy::Network;

use crate::egress::BRIDGE_IN_SANDBOX;
use crate::error::ShellError;
use crate::plan::{ExecPlan, SYSTEM_READ};
use crate::shield::Shield;

/// The bwrap arguments for `plan`, with the shield's mounts over the binds:
/// its [`options`], then `--` and `command`.
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
    let mut args = options(plan, shield, cwd, seccomp_fd, status_fd, bridge);
    args.push("--".into());
    args.extend(command.iter().cloned());
    args
}

/// bwrap's options for `plan`: the namespaces, the mounts, the working
/// folder and the descriptors it is handed. `bridge`: the network bridge
/// program, bound at [`BRIDGE_IN_SANDBOX`] when the plan has an allowlist
/// and the command starts with it.
pub fn options(plan: &ExecPlan, shield: &Shield, cwd: &Path, seccomp_fd: Option<i32>, status_fd: Option<i32>, bridge: Option<&Path>) -> Vec<OsString> {
    let mut a = Args(Vec::new());
    a.flags(&["--new-session", "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]);
    if plan.network != Network::Full {
        a.flags(&["--unshare-net"]);
    }
    a.flags(&["--cap-drop", "ALL", "--hostname", "warden"]);
    // Early, with the namespaces: a bwrap that got only the start of its options still has them.
    if let Some(fd) = seccomp_fd {
        a.flags(&["--seccomp", &fd.to_string()]);
    }
    if let Some(fd) = status_fd {
        a.flags(&["--json-status-fd", &fd.to_string()]);
    }
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
    a.0
}

/// `options` as bwrap reads them from `--args FD`, each ended by a NUL
/// byte. One that holds a NUL is refused: there it would end early, and what
/// follows would be read as options of bwrap's own (`--bind / /` in a
/// folder's name).
pub fn options_data(options: &[OsString]) -> Result<Vec<u8>, ShellError> {
    use std::os::unix::ffi::OsStrExt;
    let mut data = Vec::with_capacity(options.iter().map(|a| a.len() + 1).sum());
    for option in options {
        if option.as_bytes().contains(&0) {
            return Err(ShellError::Policy(format!(
                "the sandbox's settings hold a NUL byte, which no path or name can hold: {}; the command was not run",
                option.to_string_lossy().escape_debug()
            )));
        }
        data.extend_from_slice(option.as_bytes());
        data.push(0);
    }
    Ok(data)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn a_nul_byte_in_an_option_cannot_add_options_of_bwraps_own() {
        let options = vec![OsString::from("--chdir"), OsString::from_vec(b"/proj\0--bind\0/\0/".to_vec())];
        assert_eq!(
            options_data(&options).unwrap_err().to_string(),
            "the sandbox's settings hold a NUL byte, which no path or name can hold: /proj\\0--bind\\0/\\0/; the command was not run"
        );
    }

    #[test]
    fn each_option_is_ended_by_a_nul_byte() {
        let options = ["--chdir", "/a b", "--tmpfs", "/tmp", ""].map(OsString::from);
        assert_eq!(options_data(&options).unwrap(), b"--chdir\0/a b\0--tmpfs\0/tmp\0\0");
    }
}
