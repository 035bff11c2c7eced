//! A temporary project with a policy, and a shell sandbox over it.
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use warden_shell::{ExecutionResult, ShellSandbox};

pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    /// `proj/` (rw, with a file), `docs/` (ro) and `outside/` (no mount) with a secret.
    pub fn new() -> Project {
        let p = Project { dir: tempfile::tempdir().unwrap() };
        p.file("proj/main.c", "int main(void) { return 0; }\n");
        p.file("docs/readme.md", "docs\n");
        p.file("outside/secret.txt", SECRET);
        p
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn file(&self, rel: &str, content: &str) -> &Project {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
        self
    }

    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel)).ok()
    }

    pub fn exists(&self, rel: &str) -> bool {
        std::fs::symlink_metadata(self.path(rel)).is_ok()
    }

    /// A sandbox from the default policy plus `shell_extra` lines under `sandbox:`.
    pub fn sandbox(&self, sandbox_extra: &str) -> ShellSandbox {
        let sandbox_extra = with_test_backend(sandbox_extra);
        let policy = format!(
            "version: 1\nsandbox:\n  paths:\n    proj: {{ root: ./proj, mode: rw }}\n    docs: {{ root: ./docs, mode: ro }}\n{sandbox_extra}"
        );
        std::fs::write(self.path("policy.yaml"), policy).unwrap();
        let policy = warden_policy::load(&self.path("policy.yaml")).unwrap();
        ShellSandbox::new(&policy, None).unwrap()
    }

    /// Runs `script` with `/bin/sh -c` under the default policy.
    pub fn sh(&self, script: &str) -> ExecutionResult {
        sh_in(&self.sandbox(""), script)
    }
}

/// `WARDEN_TEST_BACKEND=landlock` runs a suite under that backend: the
/// escape suite runs itself so (see `escapes.rs`).
fn with_test_backend(extra: &str) -> String {
    match std::env::var("WARDEN_TEST_BACKEND").ok().as_deref() {
        Some("landlock") if extra.contains("  shell: {") => extra.replacen("  shell: {", "  shell: { backend: landlock,", 1),
        Some("landlock") => format!("{extra}  shell: {{ backend: landlock }}\n"),
        _ => extra.to_owned(),
    }
}

pub fn sh_in(sandbox: &ShellSandbox, script: &str) -> ExecutionResult {
    sh_timeout(sandbox, script, Duration::from_secs(20))
}

pub fn sh_timeout(sandbox: &ShellSandbox, script: &str, timeout: Duration) -> ExecutionResult {
    let argv: Vec<OsString> = ["/bin/sh", "-c", script].iter().map(OsString::from).collect();
    let result = sandbox.execute_argv(&argv, None, timeout).unwrap();
    assert!(result.sandboxed, "no OS sandbox here: {}", result.stderr);
    result
}

pub const SECRET: &str = "TOP-SECRET-OUTSIDE";

pub fn assert_no_secret(result: &ExecutionResult) {
    assert!(!result.stdout.contains(SECRET) && !result.stderr.contains(SECRET), "the secret leaked: {result:?}");
}

pub fn host(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}

/// The places where a command could plant code that runs later on the host,
/// beyond the root's `.git/hooks` and `.git/config`: agents' and editors'
/// settings, Husky's hooks, pre-commit's config, submodules' git folders, and
/// a nested repository's hooks, config and settings. Each is tried, and each
/// must be unchanged (or absent) on the host after.
pub const PLANTED: &[&str] = &[
    ".claude/settings.json",
    ".codex/config.toml",
    ".cursor/mcp.json",
    ".husky/pre-commit",
    ".pre-commit-config.yaml",
    ".git/modules/lib/hooks/post-checkout",
    ".git/modules/lib/config",
    "apps/web/.git/hooks/pre-commit",
    "apps/web/.git/config",
    "apps/web/.vscode/tasks.json",
    "apps/web/.claude/settings.json",
    // Git takes config and hooks from the folder a commondir names.
    ".git/commondir",
    ".git/modules/lib/commondir",
    "apps/web/.git/commondir",
    "apps/web/.git/worktrees/x/commondir",
];

/// A project with a submodule's git folder, a nested repository, and a
/// `work/` folder for the control file, as `plant` expects. (Under Landlock
/// nothing new can be made at the top of a mount that holds protected paths.)
pub fn with_repositories(p: &Project, root: &str) {
    std::fs::create_dir_all(p.path(&format!("{root}/work"))).unwrap();
    p.file(&format!("{root}/.git/modules/lib/config"), "[core]\n");
    std::fs::create_dir_all(p.path(&format!("{root}/.git/modules/lib/hooks"))).unwrap();
    p.file(&format!("{root}/apps/web/.git/config"), "[core]\n");
    std::fs::create_dir_all(p.path(&format!("{root}/apps/web/.git/hooks"))).unwrap();
}

/// A script that tries to write every one of [`PLANTED`], then a control file.
pub fn plant() -> String {
    let tries: Vec<String> = PLANTED
        .iter()
        .map(|p| format!("mkdir -p \"$(dirname {p})\" 2>/dev/null; echo 'evil' >> {p} 2>/dev/null"))
        .collect();
    format!("{}; echo ran > work/control.txt", tries.join("; "))
}

/// Each of [`PLANTED`] below `root` on the host holds no `evil`.
pub fn assert_nothing_planted(p: &Project, root: &str) {
    for planted in PLANTED {
        let content = std::fs::read_to_string(p.path(&format!("{root}/{planted}"))).unwrap_or_default();
        assert!(!content.contains("evil"), "{planted} was planted: {content:?}");
    }
    assert_eq!(p.read(&format!("{root}/work/control.txt")).as_deref(), Some("ran\n"), "the command did not run");
}
