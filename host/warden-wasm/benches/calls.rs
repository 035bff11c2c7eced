//! In-process costs of the runtime, each beside its baseline in one run:
//! - `warm_call/echo`: instantiate the trivial C tool, call it, drop the store
//!   (goal: median ≤ 50 µs);
//! - `warm_call/python_search`, `warm_call/js_search`, `warm_call/rust_search`:
//!   the same for the ~18 MB Python, ~13 MB JavaScript and ~0.2 MB Rust
//!   `notes` tools, searching one small file (goals: median ≤ 5 ms and ≤ 3 ms
//!   for Python and JavaScript; none set for Rust);
//! - `read_64mib`: a guest reading a 64 MiB file through WASI against a native
//!   read of the same file in the same 1 MiB chunks (goal: ≤ 2×), and the
//!   floor of any host of the component model: the same reads plus the one
//!   copy into guest memory that lowering a `list<u8>` makes, in plain Rust.
//!
//! Needs the guests: run guests/build.sh first. Figures: benches/report.py.

use std::io::Read;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion};
use warden_fs::Sandbox;
use warden_wasm::{preopens_for, RunConfig, Runtime, RuntimeOptions};

fn guest(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guests/out").join(name);
    assert!(path.exists(), "{} is missing: run guests/build.sh first", path.display());
    path
}

fn runtime() -> Runtime {
    let cache_dir = Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-cwasm"));
    Runtime::new(RuntimeOptions { cache_dir, max_concurrent: 16, pooled: true }).unwrap()
}

fn warm_call(c: &mut Criterion) {
    let runtime = runtime();
    let loaded = runtime.load_file(&guest("echo.wasm")).unwrap();
    let config = RunConfig::default();
    c.bench_function("warm_call/echo", |b| {
        b.iter(|| runtime.call(&loaded, &config, "echo", r#"{"n":1}"#).unwrap().result.unwrap())
    });

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::fs::write(dir.path().join("d/notes.md"), "# Notes\nthe risk memo\n").unwrap();
    let config = config_for(dir.path(), "d: { root: ./d, mode: ro }");
    let notes = [("warm_call/python_search", "notes_py.wasm"), ("warm_call/js_search", "notes_js.wasm"), ("warm_call/rust_search", "notes_rs.wasm")];
    for (name, file) in notes {
        let loaded = runtime.load_file(&guest(file)).unwrap();
        c.bench_function(name, |b| {
            b.iter(|| {
                let answer = runtime.call(&loaded, &config, "search", r#"{"pattern":"risk","path":"/d"}"#).unwrap().result;
                assert_eq!(answer.as_deref(), Ok("/d/notes.md:2: the risk memo\n1 match"));
            })
        });
    }
}

/// A run configuration for a policy with one mount line, in `dir`.
fn config_for(dir: &Path, mount: &str) -> RunConfig {
    let policy = dir.join("policy.yaml");
    std::fs::write(&policy, format!("version: 1\nsandbox:\n  paths:\n    {mount}\n")).unwrap();
    let sandbox = Sandbox::open(&warden_policy::load(&policy).unwrap()).unwrap();
    let (preopens, lists) = preopens_for(&sandbox).unwrap();
    RunConfig { preopens, lists, ..Default::default() }
}

fn read_64mib(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let file = dir.path().join("d/big.bin");
    let data: Vec<u8> = (0..64u32 << 20).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    std::fs::write(&file, &data).unwrap();
    let runtime = runtime();
    let loaded = runtime.load_file(&guest("readall.wasm")).unwrap();
    let config = RunConfig { args: vec!["readall".into(), "/d/big.bin".into()], ..config_for(dir.path(), "d: { root: ./d }") };

    let mut group = c.benchmark_group("read_64mib");
    group.sample_size(20);
    group.bench_function("guest_wasi", |b| {
        b.iter(|| {
            let outcome = runtime.run(&loaded, &config).unwrap();
            assert_eq!(outcome.exit_code, 0);
            outcome.report.stdout
        })
    });
    group.bench_function("native_read", |b| {
        b.iter(|| {
            let mut f = std::fs::File::open(&file).unwrap();
            let mut chunk = vec![0u8; 1 << 20];
            let (mut total, mut sum) = (0u64, 0u64);
            loop {
                let n = f.read(&mut chunk).unwrap();
                if n == 0 {
                    break;
                }
                total += n as u64;
                sum += chunk[..n].iter().step_by(4096).map(|&b| u64::from(b)).sum::<u64>();
            }
            (total, sum)
        })
    });
    group.bench_function("two_copies_floor", |b| {
        b.iter(|| {
            let f = std::fs::File::open(&file).unwrap();
            let mut guest_memory = vec![0u8; 1 << 20];
            let mut position = 0u64;
            loop {
                let mut chunk: Vec<u8> = Vec::with_capacity(1 << 20);
                let n = rustix::io::pread(&f, rustix::buffer::spare_capacity(&mut chunk), position).unwrap();
                if n == 0 {
                    break;
                }
                position += n as u64;
                guest_memory[..n].copy_from_slice(&chunk);
            }
            guest_memory[0]
        })
    });
    group.finish();
}

criterion_group!(benches, warm_call, read_64mib);
criterion_main!(benches);
