//! A real tree for tests: `portfolio/` (rw, .md/.pdf, 1000 bytes), `pipeline/`
//! (ro), and `outside/secret.md` beside them, which no test may reach.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;
use warden_fs::Sandbox;

pub const SECRET: &str = "TOP-SECRET-CONTENT";

pub const POLICY: &str = "\
version: 1
sandbox:
  paths:
    portfolio: { root: ./portfolio, mode: rw, suffixes: [.md, .pdf], max_file_bytes: 1000 }
    pipeline:  { root: ./pipeline, mode: ro }
workers:
  analyzer: { allow_read: [/portfolio/reports], readonly: true }
  writer:   { inherit: true, allow_write: [/portfolio/drafts] }
  drafter:  { allow_write: [/portfolio/drafts/plan.md] }
";

pub struct Tree {
    pub dir: TempDir,
}

impl Tree {
    pub fn new() -> Tree {
        Tree::with_policy(POLICY)
    }

    pub fn with_policy(policy: &str) -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let t = Tree { dir };
        t.file("portfolio/notes.md", "hello notes");
        t.file("portfolio/reports/q3.md", "q3 report");
        t.file("portfolio/drafts/plan.md", "plan");
        t.file("portfolio/data.txt", "hidden by suffix rule");
        t.file("pipeline/status.md", "ok");
        t.file("outside/secret.md", SECRET);
        fs::write(t.path("policy.yaml"), policy).unwrap();
        t
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn file(&self, rel: &str, content: &str) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn symlink(&self, target: impl AsRef<Path>, link: &str) {
        std::os::unix::fs::symlink(target, self.path(link)).unwrap();
    }

    pub fn policy(&self) -> warden_policy::Policy {
        warden_policy::load(&self.path("policy.yaml")).unwrap()
    }

    pub fn sandbox(&self) -> Sandbox {
        Sandbox::open(&self.policy()).unwrap()
    }

    pub fn worker(&self, name: &str) -> Sandbox {
        Sandbox::open_for(&self.policy(), Some(name)).unwrap()
    }

    /// The secret outside every mount is untouched.
    pub fn assert_secret_intact(&self) {
        assert_eq!(self.read("outside/secret.md"), SECRET);
    }
}

pub fn err<T: std::fmt::Debug>(r: warden_fs::Result<T>) -> String {
    r.unwrap_err().to_string()
}
