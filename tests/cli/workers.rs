//! Workers through the CLI: the example policy's own workers get exactly the
//! folders they name, and a worker that cannot be derived is an unusable
//! policy (exit 2, the same message) for every command.

use std::fs;
use std::path::Path;

use super::{warden, Fixture};

/// A scratch copy of `policies/example`, so that writes never touch the repository.
fn example() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&super::repo().join("policies/example"), dir.path());
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn the_example_writer_gets_its_drafts_folder_and_nothing_else() {
    let dir = example();
    let policy = dir.path().join("policy.yaml");
    let policy = policy.to_str().unwrap();
    let r = warden(&["check", policy], "");
    assert_eq!(r.status, 0, "{}", r.stderr);
    let root = dir.path().canonicalize().unwrap();
    let writer = r.stdout.split("worker writer:\n").nth(1).unwrap();
    assert_eq!(
        writer,
        format!(
            "  /portfolio/drafts  rw  {}/portfolio/drafts  suffixes=.md,.pdf  max_file_bytes=10000000  write_approval\n",
            root.display()
        )
    );
    let r = warden(&["fs", "--policy", policy, "--worker", "writer", "--approve", "write:/portfolio", "write", "/portfolio/a.md"], "x");
    assert_eq!(
        (r.status, r.stderr.as_str()),
        (3, "Cannot access '/portfolio/a.md': path is outside sandbox.\nReadable paths: /portfolio/drafts\n")
    );
    let r = warden(&["fs", "--policy", policy, "--worker", "writer", "read", "/pipeline/status.md"], "");
    assert_eq!(r.status, 3, "{}", r.stderr);
    assert!(!dir.path().join("portfolio/a.md").exists());
    let r = warden(&["fs", "--policy", policy, "--worker", "writer", "--approve", "write:/portfolio/drafts", "write", "/portfolio/drafts/a.md"], "x");
    assert_eq!((r.status, r.stdout.as_str()), (0, "created /portfolio/drafts/a.md (1 bytes)\n"), "{}", r.stderr);
}

#[test]
fn check_shows_a_write_only_folder_as_wo() {
    let f = Fixture::new();
    f.file("portfolio/drafts/d.md", "d");
    f.file(
        "policy.yaml",
        "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\nworkers:\n  \
         w: { allow_read: [/portfolio/reports], allow_write: [/portfolio/drafts] }\n",
    );
    let policy = f.path("policy.yaml");
    let r = warden(&["check", policy.to_str().unwrap()], "");
    let root = f.dir.path().canonicalize().unwrap();
    assert_eq!(
        r.stdout.split("worker w:\n").nth(1).unwrap(),
        format!("  /portfolio/reports  ro  {r}/portfolio/reports\n  /portfolio/drafts   wo  {r}/portfolio/drafts\n", r = root.display())
    );
    let r = f.fs(&["--worker", "w", "read", "/portfolio/drafts/d.md"]);
    assert_eq!(
        (r.status, r.stderr.as_str()),
        (3, "Cannot read '/portfolio/drafts/d.md': path is write-only.\nReadable paths: /portfolio/reports\n")
    );
}

#[test]
fn a_worker_that_cannot_be_derived_is_exit_2_with_one_message_everywhere() {
    let f = Fixture::new();
    std::os::unix::fs::symlink(f.path("outside/secret.md"), f.path("portfolio/out.md")).unwrap();
    let cases = [
        ("allow_write: [/portfolio/new]", "workers.w.allow_write[0]: '/portfolio/new' does not exist or cannot be opened;"),
        (
            "allow_read: [/portfolio, /portfolio/out.md]",
            "workers.w.allow_read[1]: SandboxPermissionEscalationError: cannot grant read access to '/portfolio/out.md': it leads out",
        ),
    ];
    for (lists, message) in cases {
        f.file(
            "policy.yaml",
            &format!("version: 1\nsandbox:\n  paths:\n    portfolio: {{ root: ./portfolio, mode: rw }}\nworkers:\n  w: {{ {lists} }}\n"),
        );
        let policy = f.path("policy.yaml");
        let policy = policy.to_str().unwrap();
        let expected = format!("invalid policy: {policy}:6:6: {message}");
        let check = warden(&["check", policy], "");
        let fs_read = warden(&["fs", "--policy", policy, "--worker", "w", "read", "/portfolio/notes.md"], "");
        let exec = warden(&["exec", "--policy", policy, "--worker", "w", "--", "/bin/true"], "");
        for (name, r) in [("check", &check), ("fs", &fs_read), ("exec", &exec)] {
            assert_eq!(r.status, 2, "{name}: {}", r.stderr);
            assert!(r.stderr.starts_with(&expected), "{name}: {}", r.stderr);
        }
        assert_eq!(check.stderr, fs_read.stderr);
        assert!(!f.path("portfolio/new").exists());
    }
}
