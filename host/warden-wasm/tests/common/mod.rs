//! Shared by the guest tests: built guests, a runtime, and temporary trees
//! with a policy in them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use warden_fs::Sandbox;
use warden_wasm::{preopens_for, Loaded, RunConfig, RunLimits, RunOutcome, Runtime, RuntimeOptions};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// A guest from `guests/out`, which `guests/build.sh` fills.
pub fn guest(name: &str) -> PathBuf {
    let path = repo().join("guests/out").join(name);
    assert!(path.exists(), "{} is missing: run guests/build.sh first", path.display());
    path
}

pub fn runtime() -> Runtime {
    let cache_dir = Some(repo().join("target/test-cwasm"));
    Runtime::new(RuntimeOptions { cache_dir, max_concurrent: 64, pooled: true }).unwrap()
}

pub fn load(runtime: &Runtime, name: &str) -> Loaded {
    runtime.load_file(&guest(name)).unwrap()
}

/// A temporary folder with files, and a policy at its top.
pub struct Tree {
    pub dir: tempfile::TempDir,
}

impl Tree {
    pub fn new() -> Tree {
        Tree { dir: tempfile::tempdir().unwrap() }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn file(&self, rel: &str, content: &str) -> &Tree {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
        self
    }

    pub fn folder(&self, rel: &str) -> &Tree {
        std::fs::create_dir_all(self.path(rel)).unwrap();
        self
    }

    pub fn symlink(&self, target: &str, rel: &str) -> &Tree {
        std::os::unix::fs::symlink(target, self.path(rel)).unwrap();
        self
    }

    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel)).ok()
    }

    /// A run configuration from `policy` (YAML, roots relative to the tree).
    pub fn config(&self, policy: &str) -> RunConfig {
        self.config_for(policy, None)
    }

    pub fn config_for(&self, policy: &str, worker: Option<&str>) -> RunConfig {
        std::fs::write(self.path("policy.yaml"), policy).unwrap();
        let policy = warden_policy::load(&self.path("policy.yaml")).unwrap();
        let sandbox = Sandbox::open_for(&policy, worker).unwrap();
        let (preopens, lists) = preopens_for(&sandbox).unwrap();
        RunConfig {
            preopens,
            lists,
            network: policy.network.clone(),
            env: policy.env.clone(),
            limits: RunLimits::resolve(policy.limits, false),
            ..RunConfig::default()
        }
    }
}

/// Runs a command guest with `args`; returns the outcome and stdout as text.
pub fn run(runtime: &Runtime, name: &str, config: &RunConfig, args: &[&str]) -> (RunOutcome, String) {
    let loaded = load(runtime, name);
    let mut config = config.clone();
    config.args = std::iter::once(name).chain(args.iter().copied()).map(String::from).collect();
    let outcome = runtime.run(&loaded, &config).unwrap_or_else(|e| panic!("{name} failed to run: {e}"));
    let stdout = String::from_utf8_lossy(&outcome.report.stdout).into_owned();
    (outcome, stdout)
}

pub const SECRET: &str = "TOP-SECRET-OUTSIDE";

/// `secret.txt` outside the mounts, and `/data` (rw) with a file and a folder.
pub fn escape_tree() -> Tree {
    let tree = Tree::new();
    tree.file("secret.txt", SECRET).file("data/inside.txt", "inside\n").folder("data/sub");
    tree
}

pub const DATA_RW: &str = "version: 1\nsandbox:\n  paths:\n    data: { root: ./data, mode: rw }\n";

/// Fails unless the guest's one allowed access (`control`, proving the guest
/// really works) went through and every other probe was refused.
pub fn assert_contained(stdout: &str, control: &str) {
    let allowed = |line: &str| line.starts_with(&format!("LEAK read {control}:")) || line == format!("WROTE {control}");
    assert!(stdout.lines().any(allowed), "the control access to {control} failed:\n{stdout}");
    for line in stdout.lines().filter(|l| !allowed(l)) {
        assert!(!line.starts_with("LEAK") && !line.starts_with("WROTE"), "escaped: {line}\n---\n{stdout}");
    }
    assert!(!stdout.contains(SECRET), "the secret leaked:\n{stdout}");
}
