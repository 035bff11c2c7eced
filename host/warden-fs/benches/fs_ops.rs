//! Sandboxed operations against their plain `std::fs` baselines, side by side.
//! `benches/report.py` turns the medians into the benchmarks chapter's (docs/src/benchmarks.md) table.

use std::fs;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion};
use warden_fs::{ReadOptions, Sandbox};

struct Bench {
    _dir: tempfile::TempDir,
    root: PathBuf,
    sandbox: Sandbox,
}

fn setup() -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("data");
    fs::create_dir_all(&root).unwrap();
    fs::write(root.join("4k.md"), "a".repeat(4 << 10)).unwrap();
    fs::write(root.join("1m.md"), "a".repeat(1 << 20)).unwrap();
    for d in 0..100 {
        let sub = root.join(format!("tree/d{d:03}"));
        fs::create_dir_all(&sub).unwrap();
        for f in 0..100 {
            fs::write(sub.join(format!("f{f:03}.md")), "x").unwrap();
        }
    }
    let policy = dir.path().join("policy.yaml");
    fs::write(&policy, "version: 1\nsandbox:\n  paths:\n    data: { root: ./data, mode: rw, suffixes: [.md] }\n").unwrap();
    let sandbox = Sandbox::open(&warden_policy::load(&policy).unwrap()).unwrap();
    Bench { _dir: dir, root, sandbox }
}

fn plain_walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let is_dir = entry.file_type().unwrap().is_dir();
        out.push(entry.path());
        if is_dir {
            plain_walk(&entry.path(), out);
        }
    }
}

fn reads(c: &mut Criterion) {
    let b = setup();
    for size in ["4k", "1m"] {
        let mut group = c.benchmark_group(format!("read_{size}"));
        let host = b.root.join(format!("{size}.md"));
        let virt = format!("/data/{size}.md");
        group.bench_function("std_fs_read", |x| x.iter(|| fs::read(&host).unwrap()));
        group.bench_function("warden_read_bytes", |x| x.iter(|| b.sandbox.read_bytes(&virt).unwrap()));
        group.bench_function("std_fs_read_to_string", |x| x.iter(|| fs::read_to_string(&host).unwrap()));
        group.bench_function("warden_read_text", |x| x.iter(|| b.sandbox.read(&virt, ReadOptions::default()).unwrap()));
        group.finish();
    }
    let mut group = c.benchmark_group("list_10k");
    group.sample_size(20);
    let tree = b.root.join("tree");
    group.bench_function("plain_walk", |x| {
        x.iter(|| {
            let mut out = Vec::new();
            plain_walk(&tree, &mut out);
            assert_eq!(out.len(), 10_100);
        })
    });
    group.bench_function("warden_list_files", |x| {
        x.iter(|| assert_eq!(b.sandbox.list_files(Some("/data/tree"), None).unwrap().len(), 10_100))
    });
    group.finish();
}

criterion_group!(benches, reads);
criterion_main!(benches);
