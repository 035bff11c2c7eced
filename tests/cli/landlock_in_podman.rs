//! `warden exec` inside a podman container made with the engine's defaults
//! (its seccomp profile, no added capability), where bubblewrap cannot make
//! its sandbox: `auto` takes Landlock, and each escape is checked from the
//! host. The host's /usr and /lib are lent read-only, for Warden's libraries,
//! bwrap and python3; the image is the busybox one the container tests use.

use std::path::Path;
use std::process::{Command, Output};

use tempfile::TempDir;

const IMAGE: &str = "localhost/warden-busybox:1";
const SECRET: &str = "TOP-SECRET-IN-DOT-ENV";

struct Workspace {
    dir: TempDir,
}

impl Workspace {
    /// `/w/proj` (rw, with a `.env` denied and `build/`), `/w/docs` (ro), the policy.
    fn new(owner: u32, extra: &str) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let w = Workspace { dir };
        std::fs::create_dir_all(w.path("proj/build")).unwrap();
        std::fs::create_dir_all(w.path("docs")).unwrap();
        std::fs::write(w.path("proj/.env"), SECRET).unwrap();
        std::fs::write(w.path("docs/readme.md"), "docs\n").unwrap();
        let policy = format!(
            "version: 1\nsandbox:\n  paths:\n    proj: {{ root: ./proj, mode: rw }}\n    docs: {{ root: ./docs, mode: ro }}\n  shell: {{ deny_read: [.env] }}\n{extra}"
        );
        std::fs::write(w.path("policy.yaml"), policy).unwrap();
        let status = Command::new("chown").args(["-R", &format!("{owner}:{owner}"), w.path("proj").to_str().unwrap()]).status().unwrap();
        assert!(status.success());
        // The container sees the workspace at /w; its folder must be reachable for uid 1000.
        for path in [w.dir.path(), &w.path("docs")] {
            std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        w
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }

    /// `podman run` of `command` as `user`, with the engine's default confinement.
    fn podman(&self, user: &str, env: &[&str], command: &[&str]) -> Output {
        // `warden` hands every command but `exec` to `warden-full`, beside it.
        let (warden, full) = (env!("CARGO_BIN_EXE_warden"), env!("CARGO_BIN_EXE_warden-full"));
        let mut run = Command::new("podman");
        run.args(["run", "--rm", "--user", user]);
        for lent in ["/usr", "/lib", "/lib64"] {
            if Path::new(lent).exists() {
                run.args(["-v", &format!("{lent}:{lent}:ro")]);
            }
        }
        run.args(["-v", &format!("{warden}:/warden:ro"), "-v", &format!("{full}:/warden-full:ro"), "-v", &format!("{}:/w", self.dir.path().display())]);
        for e in env {
            run.args(["-e", e]);
        }
        run.arg(IMAGE).args(command);
        run.output().unwrap()
    }
}

fn text(output: &Output) -> (String, String) {
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn in_a_default_podman_container_bubblewrap_fails_and_auto_confines_commands_with_landlock() {
    for (user, owner) in [("0:0", 0), ("1000:1000", 1000)] {
        let w = Workspace::new(owner, "");
        let bwrap = w.podman(user, &[], &["/usr/bin/bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--proc", "/proc", "--dev", "/dev", "--", "/bin/true"]);
        let (_, bwrap_err) = text(&bwrap);
        assert!(!bwrap.status.success() && bwrap_err.contains("Operation not permitted"), "{user}: bwrap started: {bwrap_err}");

        let check = w.podman(user, &[], &["/warden", "check", "/w/policy.yaml"]);
        let (check_out, check_err) = text(&check);
        assert!(check_out.contains("shell commands: Landlock ABI") && check_out.contains("bubblewrap cannot start here: bwrap:"), "{user}: {check_out}{check_err}");

        let script = "echo built > build/out.o; echo x > /w/docs/new.md; echo x > /w/escaped; echo x > /etc/escaped; cat .env; \
                      python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), 2)' && echo connected; echo ran";
        // /etc is the container's own: looked at in the same container, after Warden.
        let then_look = "/warden exec --policy /w/policy.yaml -- sh -c \"$1\"; [ -e /etc/escaped ] && echo ETC-ESCAPED >&2; exit 0";
        let exec = w.podman(user, &[], &["sh", "-c", then_look, "sh", script]);
        let (out, err) = text(&exec);
        assert!(!err.contains("ETC-ESCAPED"), "{user}: a write to the container's /etc got through: {err}");
        assert!(out.contains("ran") && !out.contains("connected"), "{user}: {out}{err}");
        assert!(!out.contains(SECRET) && !err.contains(SECRET), "{user}: the denied file was read: {out}{err}");
        assert!(!err.contains("WITHOUT an OS sandbox"), "{user}: {err}");
        assert_eq!(std::fs::read_to_string(w.path("proj/build/out.o")).unwrap(), "built\n", "{user}: {err}");
        assert!(!w.path("docs/new.md").exists() && !w.path("escaped").exists(), "{user}: a write outside the writable mount got through: {err}");
        assert!(err.contains("Permission denied") && err.contains("PermissionError"), "{user}: {err}");
        // Root of the host's first user namespace, with no cgroup to make: the kernel gives it no process cap, and each result says so.
        assert_eq!(err.contains("warning: no process cap: Warden runs as root"), owner == 0, "{user}: {err}");
    }
    // The look at /etc can fail: without Warden, root in this container writes there.
    let w = Workspace::new(0, "");
    let unconfined = w.podman("0:0", &[], &["sh", "-c", "echo x > /etc/escaped; [ -e /etc/escaped ] && echo ETC-ESCAPED >&2; exit 0"]);
    assert!(text(&unconfined).1.contains("ETC-ESCAPED"));
}

#[test]
fn without_landlock_a_container_falls_back_visibly_or_is_refused() {
    let w = Workspace::new(0, "");
    let exec = w.podman("0:0", &["WARDEN_LANDLOCK_ABI=0"], &["/warden", "exec", "--policy", "/w/policy.yaml", "--", "sh", "-c", "echo ran"]);
    let (out, err) = text(&exec);
    assert!(out.contains("ran"), "{out}{err}");
    assert!(err.contains("this command ran WITHOUT an OS sandbox: bwrap:") && err.contains("this kernel has no Landlock"), "{err}");

    let strict = Workspace::new(0, "  require_os_sandbox: true\n");
    let exec = strict.podman("0:0", &["WARDEN_LANDLOCK_ABI=0"], &["/warden", "exec", "--policy", "/w/policy.yaml", "--", "sh", "-c", "echo ran > build/ran"]);
    let (out, err) = text(&exec);
    assert_eq!(exec.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("this kernel has no Landlock"), "{err}");
    assert!(!strict.path("proj/build/ran").exists());

    let old = w.podman("0:0", &["WARDEN_LANDLOCK_ABI=5"], &["/warden", "exec", "--policy", "/w/policy.yaml", "--", "sh", "-c", "echo ran"]);
    let (_, err) = text(&old);
    assert!(err.contains("this kernel's Landlock is ABI 5; Warden needs ABI 6"), "{err}");
}
