//! The official WASI preview1 filesystem conformance tests (../shared/wasi-testsuite),
//! run through `warden run` the way the suite's README asks: a fresh copy of
//! the root for each test, `--dir ROOT::/`, its args and env, and the expected
//! exit code and output.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const EXPECTED_TESTS: usize = 50;

fn suite() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/wasi-testsuite/tests");
    assert!(dir.is_dir(), "{} is missing: the suite comes with ../shared", dir.display());
    dir
}

#[derive(serde::Deserialize, Default)]
struct Spec {
    root: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    exit_code: i32,
    stdout: Option<String>,
    stderr: Option<String>,
}

fn modules() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for language in std::fs::read_dir(suite()).unwrap() {
        let dir = language.unwrap().path().join("testsuite/wasm32-wasip1");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "wasm") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if kind.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Runs one module; `Err` says how it differed from its spec.
fn run_one(module: &Path, cache: &Path) -> Result<(), String> {
    let spec_file = module.with_extension("json");
    let spec: Spec = match std::fs::read_to_string(&spec_file) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(_) => Spec::default(),
    };
    let scratch = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.arg("run").arg("--cache-dir").arg(cache);
    if let Some(root) = &spec.root {
        let copy = scratch.path().join("root");
        copy_tree(&module.parent().unwrap().join(root), &copy);
        cmd.arg("--dir").arg(format!("{}::/", copy.display()));
    }
    for (k, v) in &spec.env {
        cmd.arg("--env").arg(format!("{k}={v}"));
    }
    cmd.arg(module).args(&spec.args).stdin(Stdio::null());
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(spec.exit_code) {
        return Err(format!("exit {:?}, expected {}: {stderr}", out.status.code(), spec.exit_code));
    }
    if spec.stdout.as_deref().is_some_and(|s| s.as_bytes() != out.stdout) {
        return Err(format!("stdout differs: {}", String::from_utf8_lossy(&out.stdout)));
    }
    if spec.stderr.as_deref().is_some_and(|s| s != stderr) {
        return Err(format!("stderr differs: {stderr}"));
    }
    Ok(())
}

#[test]
fn every_wasi_testsuite_module_passes_through_warden_run() {
    let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-cwasm");
    let modules = modules();
    assert_eq!(modules.len(), EXPECTED_TESTS, "the suite should hold {EXPECTED_TESTS} modules");
    let failures: Vec<String> = modules
        .iter()
        .filter_map(|m| run_one(m, &cache).err().map(|e| format!("{}: {e}", m.file_name().unwrap().to_string_lossy())))
        .collect();
    assert!(failures.is_empty(), "{} of {EXPECTED_TESTS} failed:\n{}", failures.len(), failures.join("\n"));
}
