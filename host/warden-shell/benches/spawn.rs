//! Spawning `/bin/true`, side by side in one run:
//! - `plain`: no sandbox at all;
//! - `raw_bwrap`: bwrap with exactly the mounts and flags Warden uses, minus
//!   its seccomp program and status pipe, started by hand;
//! - `warden_exec`: `ShellSandbox::execute_argv` (bwrap, seccomp, status pipe,
//!   pids cgroup, environment, output capture, clean-up).
//!
//! bwrap creates the placeholders over missing protected paths in the project
//! folder; Warden removes them after each command, and so does the raw case,
//! untimed, so that both always start from the same folder.
//!
//! Goal: `warden_exec` ≤ 1.15× `raw_bwrap` at the median. Figures: benches/report.py.

use std::ffi::OsString;
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use warden_shell::{bwrap_args, bwrap_path, ShellSandbox, Shield};

fn spawn(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("proj")).unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, "version: 1\nsandbox:\n  paths:\n    proj: { root: ./proj, mode: rw }\n    docs: { root: ./docs }\n").unwrap();
    let policy = warden_policy::load(&policy).unwrap();
    let sandbox = ShellSandbox::new(&policy, None).unwrap();
    let command = vec![OsString::from("/bin/true")];
    let shield = Shield::for_plan(sandbox.plan()).unwrap();
    let raw = bwrap_args(sandbox.plan(), &shield, &sandbox.plan().default_cwd, None, None, None, &command);

    let mut group = c.benchmark_group("spawn_true");
    group.sample_size(60).measurement_time(Duration::from_secs(8));
    group.bench_function("plain", |b| {
        b.iter(|| assert!(Command::new("/bin/true").stdout(Stdio::null()).status().unwrap().success()))
    });
    // Warden makes the placeholders bwrap binds over missing protected paths.
    for p in &shield.placeholders {
        std::fs::write(p, "").unwrap();
    }
    group.bench_function("raw_bwrap", |b| {
        b.iter(|| assert!(Command::new(bwrap_path()).args(&raw).stdout(Stdio::null()).status().unwrap().success()))
    });
    for p in &shield.placeholders {
        std::fs::remove_file(p).unwrap();
    }
    group.bench_function("warden_exec", |b| {
        let first = sandbox.execute_argv(&command, None, Duration::from_secs(10)).unwrap();
        assert!(first.ok() && first.sandboxed, "{first:?}");
        b.iter(|| assert!(sandbox.execute_argv(&command, None, Duration::from_secs(10)).unwrap().ok()))
    });
    group.finish();
}

criterion_group!(benches, spawn);
criterion_main!(benches);
