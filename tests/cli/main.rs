//! The `warden` command line as a contract: outputs, messages and exit statuses.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

mod approvals;
mod components;
mod containers;
mod exec;
mod landlock_in_podman;
mod mcp;
mod network;
mod oci;
mod mcp_http;
mod mcp_clients;
mod programs;
mod pty;
mod rules;
mod scaffold;
mod workers;

const POLICY: &str = "\
version: 1
sandbox:
  paths:
    portfolio: { root: ./portfolio, mode: rw, suffixes: [.md], max_file_bytes: 100 }
    pipeline:  { root: ./pipeline, mode: ro }
workers:
  analyzer: { allow_read: [/portfolio/reports], readonly: true }
";

struct Fixture {
    dir: TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let f = Fixture { dir };
        f.file("portfolio/notes.md", "hello notes");
        f.file("portfolio/reports/q3.md", "q3");
        f.file("pipeline/status.md", "ok");
        f.file("outside/secret.md", "SECRET");
        f.file("policy.yaml", POLICY);
        f
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn file(&self, rel: &str, content: &str) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    fn fs(&self, args: &[&str]) -> Run {
        self.fs_with_stdin(args, "")
    }

    fn fs_with_stdin(&self, args: &[&str], stdin: &str) -> Run {
        let policy = self.path("policy.yaml");
        let mut all = vec!["fs", "--policy", policy.to_str().unwrap()];
        all.extend_from_slice(args);
        warden(&all, stdin)
    }
}

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

fn warden(args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let Output { status, stdout, stderr } = child.wait_with_output().unwrap();
    Run {
        status: status.code().unwrap(),
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: String::from_utf8(stderr).unwrap(),
    }
}

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn read_prints_the_file_and_exits_0() {
    let r = Fixture::new().fs(&["read", "/portfolio/notes.md"]);
    assert_eq!((r.status, r.stdout.as_str(), r.stderr.as_str()), (0, "hello notes", ""));
}

#[test]
fn truncated_read_says_how_to_continue_on_stderr() {
    let r = Fixture::new().fs(&["read", "portfolio:notes.md", "--offset", "2", "--max-chars", "3"]);
    assert_eq!(r.status, 0);
    assert_eq!(r.stdout, "llo");
    assert_eq!(r.stderr, "[Truncated: showing characters 2-5 of 11. To read the rest, read again with offset 5.]\n");
}

#[test]
fn denial_exits_3_with_the_message_on_stderr() {
    let f = Fixture::new();
    let r = f.fs(&["read", "/portfolio/../../outside/secret.md"]);
    assert_eq!(r.status, 3);
    assert_eq!(r.stdout, "");
    assert_eq!(r.stderr, "Cannot access '/portfolio/../../outside/secret.md': path is outside sandbox.\nReadable paths: /portfolio, /pipeline\n");
    let r = f.fs_with_stdin(&["write", "/pipeline/x.md"], "x");
    assert_eq!((r.status, r.stderr.as_str()), (3, "Cannot write to '/pipeline/x.md': path is read-only.\nWritable paths: /portfolio\n"));
    assert!(!f.path("pipeline/x.md").exists());
}

#[test]
fn missing_file_exits_1() {
    let r = Fixture::new().fs(&["read", "/portfolio/nope.md"]);
    assert_eq!((r.status, r.stderr.as_str()), (1, "Cannot read '/portfolio/nope.md': no such file or folder.\n"));
}

#[test]
fn usage_errors_exit_2() {
    let f = Fixture::new();
    assert_eq!(f.fs(&["read"]).status, 2);
    assert_eq!(f.fs(&["frobnicate", "/x"]).status, 2);
    let r = f.fs(&["--worker", "ghost", "read", "/portfolio/notes.md"]);
    assert_eq!((r.status, r.stderr.as_str()), (2, "unknown worker 'ghost'; the policy defines: analyzer\n"));
    let r = f.fs(&["list", "/portfolio", "--glob", "a[b"]);
    assert_eq!(r.status, 2);
}

#[test]
fn invalid_policy_exits_2_with_line_and_column() {
    let f = Fixture::new();
    f.file("policy.yaml", "version: 1\nsandbox:\n  root: { root: ., mystery: 1 }\n");
    let r = f.fs(&["read", "/x.md"]);
    assert_eq!(r.status, 2);
    let policy = f.path("policy.yaml");
    assert_eq!(
        r.stderr,
        format!("invalid policy: {}:3:20: unknown field `mystery`, expected one of root, mode, readonly, suffixes, max_file_bytes, read_approval, write_approval\n", policy.display())
    );
    let r = warden(&["check", policy.to_str().unwrap()], "");
    assert_eq!(r.status, 2);
}

#[test]
fn write_takes_stdin_and_edit_replaces_text() {
    let f = Fixture::new();
    let r = f.fs_with_stdin(&["write", "/portfolio/drafts/new.md"], "draft one");
    assert_eq!((r.status, r.stdout.as_str()), (0, "created /portfolio/drafts/new.md (9 bytes)\n"));
    let r = f.fs(&["edit", "/portfolio/drafts/new.md", "--old", "one", "--new", "two"]);
    assert_eq!((r.status, r.stdout.as_str()), (0, "edited /portfolio/drafts/new.md\n"));
    assert_eq!(fs::read_to_string(f.path("portfolio/drafts/new.md")).unwrap(), "draft two");
    let r = f.fs(&["edit", "/portfolio/drafts/new.md", "--old", "absent", "--new", "x"]);
    assert_eq!((r.status, r.stderr.as_str()), (1, "Cannot edit '/portfolio/drafts/new.md': text to replace not found.\n"));
}

#[test]
fn oversized_write_is_denied_and_keeps_the_file() {
    let f = Fixture::new();
    let r = f.fs_with_stdin(&["write", "/portfolio/notes.md"], &"x".repeat(101));
    assert_eq!((r.status, r.stderr.as_str()), (3, "Cannot write to '/portfolio/notes.md': content too large (101 bytes).\nMaximum allowed: 100 bytes\n"));
    assert_eq!(fs::read_to_string(f.path("portfolio/notes.md")).unwrap(), "hello notes");
}

#[test]
fn list_prints_sorted_paths_with_folders_marked() {
    let r = Fixture::new().fs(&["list"]);
    assert_eq!(r.status, 0);
    assert_eq!(r.stdout, "/pipeline/\n/pipeline/status.md\n/portfolio/\n/portfolio/notes.md\n/portfolio/reports/\n/portfolio/reports/q3.md\n");
    let r = Fixture::new().fs(&["list", "/portfolio", "--glob", "*.md"]);
    assert_eq!(r.stdout, "/portfolio/notes.md\n/portfolio/reports/q3.md\n");
}

#[test]
fn worker_sees_only_its_derived_area() {
    let f = Fixture::new();
    let r = f.fs(&["--worker", "analyzer", "list"]);
    assert_eq!(r.stdout, "/portfolio/\n/portfolio/reports/\n/portfolio/reports/q3.md\n");
    let r = f.fs(&["--worker", "analyzer", "read", "/portfolio/notes.md"]);
    assert_eq!((r.status, r.stderr.as_str()), (3, "Cannot access '/portfolio/notes.md': path is outside sandbox.\nReadable paths: /portfolio/reports\n"));
}

#[test]
fn stat_prints_json() {
    let r = Fixture::new().fs(&["stat", "/pipeline/status.md"]);
    assert_eq!(r.status, 0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!((v["kind"].as_str(), v["size"].as_u64(), v["writable"].as_bool()), (Some("file"), Some(2), Some(false)));
    assert_eq!(v["path"], "/pipeline/status.md");
}

#[test]
fn tree_operations_report_what_they_did() {
    let f = Fixture::new();
    assert_eq!(f.fs(&["mkdir", "/portfolio/a/b"]).stdout, "created folder /portfolio/a/b\n");
    assert_eq!(f.fs(&["copy", "/pipeline/status.md", "/portfolio/a/b/status.md"]).stdout, "copied /pipeline/status.md to /portfolio/a/b/status.md\n");
    assert_eq!(f.fs(&["move", "/portfolio/a/b/status.md", "/portfolio/s.md"]).stdout, "moved /portfolio/a/b/status.md to /portfolio/s.md\n");
    assert_eq!(fs::read_to_string(f.path("portfolio/s.md")).unwrap(), "ok");
    assert_eq!(f.fs(&["delete", "/portfolio/s.md"]).stdout, "deleted /portfolio/s.md\n");
    let r = f.fs(&["copy", "/pipeline/status.md", "/portfolio/notes.md"]);
    assert_eq!((r.status, r.stderr.as_str()), (1, "Cannot copy to '/portfolio/notes.md': destination already exists.\n"));
}

#[test]
fn check_prints_program_and_worker_mounts() {
    let f = Fixture::new();
    let policy = f.path("policy.yaml");
    let r = warden(&["check", policy.to_str().unwrap()], "");
    assert_eq!(r.status, 0, "{}", r.stderr);
    let root = f.dir.path().canonicalize().unwrap();
    let expected = format!(
        "{p}: valid\nnetwork: off\nprogram:\n  /portfolio  rw  {r}/portfolio  suffixes=.md  max_file_bytes=100\n  /pipeline   ro  {r}/pipeline\nworker analyzer:\n  /portfolio/reports  ro  {r}/portfolio/reports  suffixes=.md  max_file_bytes=100\n",
        p = policy.display(),
        r = root.display()
    );
    assert_eq!(r.stdout, expected);
}

#[test]
fn check_accepts_the_shipped_example_policies() {
    for p in ["policies/example/policy.yaml", "policies/example/root.yaml"] {
        let r = warden(&["check", repo().join(p).to_str().unwrap()], "");
        assert_eq!(r.status, 0, "{p}: {}", r.stderr);
    }
}

#[test]
fn check_refuses_the_users_home_and_runtime_folder_as_roots() {
    // The user's home itself and $XDG_RUNTIME_DIR (where agent and engine
    // sockets live) are the user's, so they are found through the environment.
    let f = Fixture::new();
    let home = f.path("home");
    let runtime = f.path("xdg");
    fs::create_dir_all(home.join("project")).unwrap();
    fs::create_dir_all(runtime.join("podman")).unwrap();
    let check = |root: &Path| {
        f.file("p.yaml", &format!("version: 1\nsandbox:\n  paths:\n    a: {{ root: {} }}\n", root.display()));
        let out = Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(["check", f.path("p.yaml").to_str().unwrap()])
            .env("HOME", &home)
            .env("XDG_RUNTIME_DIR", &runtime)
            .output()
            .unwrap();
        (out.status.code().unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    let invalid = |why: String| format!("invalid policy: {}:4:8: sandbox.paths.a.root: {why}; it cannot be mounted\n", f.path("p.yaml").display());
    assert_eq!(
        check(&home),
        (2, invalid(format!("'{h}' is your whole home folder {h} (keys, credentials, agent sockets; mount a project folder inside it)", h = home.display())))
    );
    assert_eq!(check(&home.join("project")).0, 0);
    let sockets = runtime.join("podman");
    assert_eq!(
        check(&sockets),
        (2, invalid(format!("'{}' is inside your runtime folder {}, where agent, engine and session sockets live", sockets.display(), runtime.display())))
    );
    // A folder holding the runtime folder would hold its sockets too.
    assert_eq!(
        check(f.dir.path()),
        (2, invalid(format!("'{}' is a folder that holds your runtime folder {}, where agent, engine and session sockets live", f.dir.path().display(), runtime.display())))
    );
}

#[test]
fn check_refuses_a_root_that_holds_or_lies_in_the_compile_cache() {
    // Native code there is what Warden loads and runs: a tool that could
    // write it would run outside every sandbox.
    let f = Fixture::new();
    let cache = f.path("cache");
    fs::create_dir_all(cache.join("oci")).unwrap();
    let check = |root: &Path, env: (&str, &Path)| {
        f.file("p.yaml", &format!("version: 1\nsandbox:\n  paths:\n    a: {{ root: {} }}\n", root.display()));
        let out = Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(["check", f.path("p.yaml").to_str().unwrap()])
            .env_remove("WARDEN_CACHE_DIR")
            .env_remove("XDG_CACHE_HOME")
            .env(env.0, env.1)
            .output()
            .unwrap();
        (out.status.code().unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    let invalid = |why: String| format!("invalid policy: {}:4:8: sandbox.paths.a.root: {why}; it cannot be mounted\n", f.path("p.yaml").display());
    let inside = cache.join("oci");
    assert_eq!(
        check(&inside, ("WARDEN_CACHE_DIR", &cache)),
        (2, invalid(format!("'{}' is inside Warden's compile cache {} (native code Warden itself loads and runs)", inside.display(), cache.display())))
    );
    assert_eq!(
        check(f.dir.path(), ("WARDEN_CACHE_DIR", &cache)),
        (2, invalid(format!("'{}' is a folder that holds Warden's compile cache {} (native code Warden itself loads and runs)", f.dir.path().display(), cache.display())))
    );
    // The default place, below $XDG_CACHE_HOME, is found too; a sibling folder is fine.
    let xdg = f.path("xdg-cache");
    fs::create_dir_all(xdg.join("warden")).unwrap();
    assert_eq!(check(&xdg, ("XDG_CACHE_HOME", &xdg)).0, 2);
    assert_eq!(check(&f.path("portfolio"), ("WARDEN_CACHE_DIR", &cache)).0, 0);
}

#[test]
fn schema_is_json_schema() {
    let r = warden(&["schema"], "");
    assert_eq!(r.status, 0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["$schema"], "https://json-schema.org/draft/2020-12/schema");
}

#[test]
fn help_documents_exit_statuses() {
    let r = warden(&["--help"], "");
    assert_eq!(r.status, 0);
    assert!(r.stdout.contains("Exit status: 0 success, 1 failure"), "{}", r.stdout);
}

#[test]
fn no_message_leaks_a_host_path() {
    let f = Fixture::new();
    let host = f.dir.path().to_str().unwrap().to_owned();
    for args in [vec!["read", "/portfolio/nope.md"], vec!["read", "/etc/passwd"], vec!["delete", "/portfolio/reports"], vec!["stat", "/portfolio/../../x"]] {
        let r = f.fs(&args);
        assert_ne!(r.status, 0);
        assert!(!r.stderr.contains(&host), "{args:?}: {}", r.stderr);
    }
}
