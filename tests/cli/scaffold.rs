//! `warden new`: every language's project is created, built by its own
//! build.sh and checked by its own test.sh, as an author would.
//!
//! The toolchains are the ones `guests/build.sh` installed into `.tools/`
//! (WARDEN_TOOLCHAIN), so no test downloads anything a second time; a Rust
//! project builds in the Rust guests' target folder, so that the standard
//! library it compiles for wasm32-wasip1 is compiled once.

use std::path::Path;
use std::process::Command;

use super::{repo, warden};

/// Creates, builds and tests a project in `lang`; returns its files.
/// The project's files, and what its build.sh said on stderr.
fn new_project_builds_and_passes_its_test(lang: &str, name: &str) -> (Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join(name);
    let r = warden(&["new", "--lang", lang, project.to_str().unwrap()], "");
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stdout.contains(&format!("cd {}\n  ./build.sh", project.display())), "{}", r.stdout);
    let (_, built) = script(&project, "build.sh");
    assert!(project.join(format!("{name}.wasm")).is_file());
    let (stdout, _) = script(&project, "test.sh");
    assert_eq!(stdout, format!("ok: {name} answers, and stays in its sandbox\n"));
    (names(&project), built)
}

fn script(project: &Path, name: &str) -> (String, String) {
    let out = Command::new("bash")
        .arg(project.join(name))
        .env("WARDEN_TOOLCHAIN", repo().join(".tools"))
        .env("WARDEN", env!("CARGO_BIN_EXE_warden"))
        .env("WARDEN_CACHE_DIR", repo().join("target/test-cwasm"))
        .env("CARGO_TARGET_DIR", repo().join("target/rust-guests"))
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{name} failed:\n{stdout}\n{stderr}");
    (stdout.into_owned(), stderr.into_owned())
}

/// Every file below `dir`, as sorted paths relative to it.
fn names(dir: &Path) -> Vec<String> {
    let mut files = walk(dir, dir);
    files.sort();
    files
}

fn walk(root: &Path, dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flat_map(|e| {
            let path = e.unwrap().path();
            if path.is_dir() { walk(root, &path) } else { vec![path.strip_prefix(root).unwrap().display().to_string()] }
        })
        .collect()
}

const COMMON: &[&str] = &[
    ".gitignore",
    "README.md",
    "build.sh",
    "data/hello.md",
    "out/README.md",
    "policy.yaml",
    "test.sh",
    "wit/deps/cli/cli.wit",
    "wit/tool.wit",
];

fn assert_has(files: &[String], expected: &[&str]) {
    for want in COMMON.iter().chain(expected) {
        assert!(files.iter().any(|f| f == want), "{want} is missing from {files:?}");
    }
}

#[test]
fn new_c_project_builds_and_passes_its_test() {
    let (files, _) = new_project_builds_and_passes_its_test("c", "count_c");
    assert_has(&files, &["tool.c", "include/tool_support.h", "include/json.h", "adapter/wasi_snapshot_preview1.reactor.wasm"]);
}

#[test]
fn new_python_project_builds_and_passes_its_test() {
    let (files, _) = new_project_builds_and_passes_its_test("python", "count_py");
    assert_has(&files, &["app.py", "warden_tool.py"]);
}

#[test]
fn new_js_project_builds_and_passes_its_test() {
    let (files, _) = new_project_builds_and_passes_its_test("js", "count-js");
    assert_has(&files, &["app.js", "warden_tool.js"]);
}

#[test]
fn new_rust_project_builds_and_passes_its_test() {
    let (files, built) = new_project_builds_and_passes_its_test("rust", "count-rs");
    // It says which compiler it took: rustup's target where there is one (not here), else Debian's.
    let rustup = std::process::Command::new("rustup").args(["target", "list", "--installed"]).output();
    let has_target = rustup.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).lines().any(|t| t == "wasm32-wasip1"));
    let said = if has_target { "building with rustup's wasm32-wasip1 target\n" } else { "building with Debian's rustc-web from " };
    assert!(built.contains(said), "{built}");
    assert_has(
        &files,
        &[
            "Cargo.toml",
            "Cargo.lock",
            "src/lib.rs",
            "wasi-toolchain.sh",
            "warden-tool/Cargo.toml",
            "warden-tool/src/lib.rs",
            "adapter/wasi_snapshot_preview1.reactor.wasm",
        ],
    );
}

#[test]
fn new_wat_project_builds_and_passes_its_test() {
    let (files, _) = new_project_builds_and_passes_its_test("wat", "echo_wat");
    assert_has(&files, &["tool.wat"]);
}

#[test]
fn new_refuses_an_existing_folder_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().join("existing");
    std::fs::create_dir(&existing).unwrap();
    std::fs::write(existing.join("keep.txt"), "mine").unwrap();
    let r = warden(&["new", "--lang", "python", existing.to_str().unwrap()], "");
    assert_eq!(r.status, 2);
    assert_eq!(r.stderr, format!("{} already exists; give a new folder\n", existing.display()));
    assert_eq!(names(&existing), ["keep.txt"]);
    assert_eq!(std::fs::read_to_string(existing.join("keep.txt")).unwrap(), "mine");
}

#[test]
fn new_refuses_a_name_that_is_no_tool_name() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["Upper", "9lives", "dot.ted", "a_name_that_is_longer_than_32_chars"] {
        let r = warden(&["new", "--lang", "c", dir.path().join(bad).to_str().unwrap()], "");
        assert_eq!(r.status, 2, "{bad}");
        assert!(r.stderr.starts_with(&format!("cannot name a tool '{bad}': use a lowercase letter")), "{}", r.stderr);
        assert!(!dir.path().join(bad).exists());
    }
}
