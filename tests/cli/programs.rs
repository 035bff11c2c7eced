//! The two programs: `warden` runs `warden exec` itself and hands every other
//! command line to `warden-full` beside it.

use std::path::Path;
use std::process::Command;

use crate::warden;

fn holds(program: &str, text: &str) -> bool {
    let bytes = std::fs::read(program).unwrap();
    bytes.windows(text.len()).any(|w| w == text.as_bytes())
}

#[test]
fn the_program_that_runs_exec_links_no_webassembly_compiler() {
    // A program that links Cranelift names its sources in its panic messages.
    assert!(holds(env!("CARGO_BIN_EXE_warden-full"), "cranelift-codegen"));
    assert!(!holds(env!("CARGO_BIN_EXE_warden"), "cranelift-codegen"), "`warden` links the WebAssembly compiler");
}

#[test]
fn a_command_handed_over_reads_as_warden_in_its_usage() {
    let run = warden(&["check"], "");
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("Usage: warden check"), "{}", run.stderr);
    assert!(!run.stderr.contains("warden-full"), "{}", run.stderr);
}

#[test]
fn without_warden_full_beside_it_exec_still_runs_and_the_rest_say_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("bin/warden");
    std::fs::create_dir_all(alone.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_warden"), &alone).unwrap();
    let out = Command::new(&alone).arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let full = dir.path().join("bin/warden-full");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "warden: cannot start {}, which runs every command but `warden exec` and belongs beside this program: \
             No such file or directory (os error 2)\n",
            full.display()
        )
    );
    std::fs::create_dir(dir.path().join("w")).unwrap();
    std::fs::write(dir.path().join("policy.yaml"), "version: 1\nsandbox:\n  paths:\n    w: { root: ./w, mode: rw }\n").unwrap();
    let out = Command::new(&alone)
        .args(["exec", "--policy", "policy.yaml", "--cwd", "/w", "--", "/bin/sh", "-c", "echo ran > made && cat made"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!((out.status.code(), String::from_utf8_lossy(&out.stdout).as_ref()), (Some(0), "ran\n"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(Path::new(&dir.path().join("w/made")).exists());
}

#[test]
fn a_warden_full_that_others_could_have_written_is_not_started() {
    let dir = tempfile::tempdir().unwrap();
    let (warden, full) = (dir.path().join("warden"), dir.path().join("warden-full"));
    std::fs::copy(env!("CARGO_BIN_EXE_warden"), &warden).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_warden-full"), &full).unwrap();
    let version = || {
        let out = Command::new(&warden).arg("--version").output().unwrap();
        (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let refused = |why: &str| {
        format!(
            "warden: will not start {}: {why}; it must be a regular file of this program's owner that no one may write who may not write this program\n",
            full.display()
        )
    };
    let mode = |bits: u32| std::fs::set_permissions(&full, std::os::unix::fs::PermissionsExt::from_mode(bits)).unwrap();
    let (status, stdout, _) = version();
    assert_eq!((status, stdout.starts_with("warden ")), (0, true));
    mode(0o775);
    assert_eq!(version(), (2, String::new(), refused("others than its owner may write it (mode 775)")));
    mode(0o757);
    assert_eq!(version(), (2, String::new(), refused("others than its owner may write it (mode 757)")));
    // Under a umask of 002 both are group-writable: whoever may write the one may write the other.
    std::fs::set_permissions(&warden, std::os::unix::fs::PermissionsExt::from_mode(0o775)).unwrap();
    mode(0o775);
    assert_eq!(version().0, 0);
    mode(0o777);
    assert_eq!(version(), (2, String::new(), refused("others than its owner may write it (mode 777)")));
    mode(0o755);
    std::fs::set_permissions(&warden, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    if rustix::process::geteuid().is_root() {
        // Not even root's: a root-owned program linked beside a user's `warden` is not its own.
        for owner in [65534, 0] {
            std::os::unix::fs::chown(&warden, Some(if owner == 0 { 65534 } else { 0 }), None).unwrap();
            std::os::unix::fs::chown(&full, Some(owner), None).unwrap();
            assert_eq!(version(), (2, String::new(), refused(&format!("it belongs to uid {owner}"))));
        }
        std::os::unix::fs::chown(&warden, Some(0), None).unwrap();
        std::os::unix::fs::chown(&full, Some(0), None).unwrap();
        // Group-writable both, but by different groups: that group may not write `warden`.
        std::fs::set_permissions(&warden, std::os::unix::fs::PermissionsExt::from_mode(0o775)).unwrap();
        mode(0o775);
        std::os::unix::fs::chown(&full, None, Some(65534)).unwrap();
        assert_eq!(version(), (2, String::new(), refused("others than its owner may write it (mode 775)")));
        mode(0o755);
        std::fs::set_permissions(&warden, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    // A link beside it to a program elsewhere is not followed.
    std::fs::remove_file(&full).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_warden-full"), &full).unwrap();
    assert_eq!(version(), (2, String::new(), refused("it is not a regular file")));
}
