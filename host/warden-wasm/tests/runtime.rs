//! The runtime as a whole: loading, the compile cache, determinism,
//! concurrency, and refusing what it cannot enforce.

mod common;

use std::sync::Arc;

use common::*;
use warden_wasm::{CacheOutcome, ComponentKind, RunConfig, RunError, Runtime, RuntimeOptions};

#[test]
fn a_wat_preview1_module_is_wrapped_at_load_time() {
    let runtime = runtime();
    let loaded = load(&runtime, "hello.wasm");
    assert_eq!(loaded.kind, ComponentKind::Command);
    let (outcome, stdout) = run(&runtime, "hello.wasm", &RunConfig::default(), &["Warden"]);
    assert_eq!((outcome.exit_code, stdout.as_str()), (0, "hello, Warden!\n"));
}

#[test]
fn a_commands_exit_code_comes_back() {
    let (outcome, _) = run(&runtime(), "wc.wasm", &RunConfig::default(), &["/missing.txt"]);
    assert_eq!(outcome.exit_code, 1);
    assert_eq!(String::from_utf8_lossy(&outcome.report.stderr), "wc: /missing.txt: No such file or directory\n");
}

#[test]
fn garbage_is_a_load_error() {
    let err = runtime().load(b"\0asm but not really".to_vec()).err().expect("an error");
    assert!(matches!(err, RunError::Load { .. }), "{err}");
}

fn run_entropy(config: &RunConfig) -> (String, u64) {
    let (outcome, stdout) = run(&runtime(), "entropy.wasm", config, &["/d"]);
    assert_eq!(outcome.exit_code, 0);
    (stdout, outcome.report.fuel_consumed)
}

#[test]
fn deterministic_runs_give_identical_output_and_fuel() {
    let tree = Tree::new();
    for i in 0..40 {
        tree.file(&format!("d/file-{}", (i * 7919) % 97), "x");
    }
    let mut config = tree.config("version: 1\nsandbox:\n  paths:\n    d: { root: ./d }\n");
    config.deterministic = Some(7);
    config.limits = warden_wasm::RunLimits::resolve(Default::default(), true);
    let (first, fuel) = run_entropy(&config);
    for _ in 0..3 {
        assert_eq!(run_entropy(&config), (first.clone(), fuel));
    }
    assert!(first.starts_with("wall 946684800.000000000\nmonotonic step 1000000 ns\nrandom "), "{first}");
    let entries: Vec<_> = first.lines().filter_map(|l| l.strip_prefix("entry ")).skip(2).collect();
    let mut sorted = entries.clone();
    sorted.sort();
    assert_eq!(entries, sorted);
    // The control: without --deterministic the same guest differs run to run.
    config.deterministic = None;
    assert_ne!(run_entropy(&config).0, run_entropy(&config).0);
    // And another seed gives other random bytes.
    config.deterministic = Some(8);
    assert_ne!(run_entropy(&config).0, first);
}

#[test]
fn many_calls_at_once_do_not_cross() {
    let runtime = Arc::new(runtime());
    let loaded = Arc::new(load(&runtime, "textkit.wasm"));
    let trees: Vec<Tree> = (0..24).map(|_| Tree::new()).collect();
    let async_runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).build().unwrap();
    let results = async_runtime.block_on(async {
        let mut calls = Vec::new();
        for (i, tree) in trees.iter().enumerate() {
            tree.file("data/f.txt", &"w ".repeat(i + 1));
            let config = tree.config(DATA_RW);
            let input = r#"{"path":"/data/f.txt"}"#.to_owned();
            calls.push(tokio::spawn({
                let (runtime, loaded) = (runtime.clone(), loaded.clone());
                async move { runtime.call_async(loaded, config, "count".into(), input).await }
            }));
        }
        let mut out = Vec::new();
        for call in calls {
            out.push(call.await.unwrap().unwrap().result.unwrap());
        }
        out
    });
    for (i, result) in results.iter().enumerate() {
        let words = i + 1;
        assert_eq!(result, &format!(r#"{{"path":"/data/f.txt","lines":0,"words":{words},"bytes":{}}}"#, 2 * words));
    }
}

#[test]
fn a_corrupted_cache_file_is_recompiled_not_run() {
    let cache = tempfile::tempdir().unwrap();
    let options = RuntimeOptions { cache_dir: Some(cache.path().to_owned()), max_concurrent: 4, pooled: true };
    let runtime = Runtime::new(options.clone()).unwrap();
    assert_eq!(runtime.load_file(&guest("wc.wasm")).unwrap().cache, CacheOutcome::Compiled);
    assert_eq!(runtime.load_file(&guest("wc.wasm")).unwrap().cache, CacheOutcome::Hit);
    let file = cached_code(cache.path());
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let loaded = runtime.load_file(&guest("wc.wasm")).unwrap();
    assert_eq!(loaded.cache, CacheOutcome::Replaced);
    let (outcome, _) = run(&runtime, "wc.wasm", &RunConfig::default(), &[]);
    assert_eq!(outcome.exit_code, 0);
    assert_eq!(runtime.load_file(&guest("wc.wasm")).unwrap().cache, CacheOutcome::Hit);
}

/// The one compiled component in `cache` (its digest lies beside it).
fn cached_code(cache: &std::path::Path) -> std::path::PathBuf {
    let mut code = std::fs::read_dir(cache).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_str().is_some_and(|p| p.ends_with(".v3.cwasm")));
    let file = code.next().expect("a .v3.cwasm file");
    assert!(code.next().is_none(), "one .v3.cwasm file");
    file
}

/// hello.wasm compiled into a new cache folder: the folder, the runtime, and the code's file.
fn hello_cached() -> (tempfile::TempDir, Runtime, std::path::PathBuf) {
    let cache = tempfile::tempdir().unwrap();
    let options = RuntimeOptions { cache_dir: Some(cache.path().to_owned()), max_concurrent: 4, pooled: false };
    let runtime = Runtime::new(options).unwrap();
    assert_eq!(runtime.load_file(&guest("hello.wasm")).unwrap().cache, CacheOutcome::Compiled);
    let file = cached_code(cache.path());
    (cache, runtime, file)
}

#[test]
fn a_cache_file_without_its_digest_is_recompiled_not_run() {
    let (_cache, runtime, file) = hello_cached();
    std::fs::remove_file(file.with_extension("blake3")).unwrap();
    assert_eq!(runtime.load_file(&guest("hello.wasm")).unwrap().cache, CacheOutcome::Replaced);
    assert_eq!(runtime.load_file(&guest("hello.wasm")).unwrap().cache, CacheOutcome::Hit);
    // An empty file with the empty file's digest is not code either.
    std::fs::write(&file, b"").unwrap();
    std::fs::write(file.with_extension("blake3"), blake3::hash(b"").as_bytes()).unwrap();
    assert_eq!(runtime.load_file(&guest("hello.wasm")).unwrap().cache, CacheOutcome::Replaced);
}

#[test]
fn a_cache_file_that_is_a_link_is_not_followed() {
    let (_cache, runtime, file) = hello_cached();
    let elsewhere = tempfile::tempdir().unwrap();
    // The very code, with its digest still beside the link: only the link is wrong.
    let moved = elsewhere.path().join("hello.cwasm");
    std::fs::rename(&file, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &file).unwrap();
    assert_eq!(runtime.load_file(&guest("hello.wasm")).unwrap().cache, CacheOutcome::Replaced);
    assert!(std::fs::symlink_metadata(&file).unwrap().is_file(), "the link was replaced by a file");
    // The same for its digest: the right digest, behind a link.
    let digest = file.with_extension("blake3");
    std::fs::rename(&digest, elsewhere.path().join("hello.blake3")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("hello.blake3"), &digest).unwrap();
    assert_eq!(runtime.load_file(&guest("hello.wasm")).unwrap().cache, CacheOutcome::Replaced);
    assert!(std::fs::symlink_metadata(&digest).unwrap().is_file(), "the link was replaced by a file");
}

#[test]
fn a_cached_preview1_module_is_a_hit_and_a_changed_one_is_compiled_anew() {
    let cache = tempfile::tempdir().unwrap();
    let options = RuntimeOptions { cache_dir: Some(cache.path().to_owned()), max_concurrent: 4, pooled: false };
    let runtime = Runtime::new(options).unwrap();
    let module = std::fs::read(guest("hello.wasm")).unwrap();
    assert!(module.starts_with(b"\0asm\x01\0\0\0"), "hello.wasm is a core module");
    assert_eq!(runtime.load(module.clone()).unwrap().cache, CacheOutcome::Compiled);
    assert_eq!(runtime.load(module.clone()).unwrap().cache, CacheOutcome::Hit);
    // The same module with a custom section added: another module, compiled anew.
    let mut changed = module.clone();
    changed.extend_from_slice(&[0, 4, 1, b'x', 1, 2]);
    assert_eq!(runtime.load(changed).unwrap().cache, CacheOutcome::Compiled);
    let (outcome, stdout) = run(&runtime, "hello.wasm", &RunConfig::default(), &["cached"]);
    assert_eq!((outcome.exit_code, stdout.as_str()), (0, "hello, cached!\n"));
}

#[test]
fn a_cache_folder_others_can_write_is_neither_read_nor_written() {
    use std::os::unix::fs::PermissionsExt;
    let cache = tempfile::tempdir().unwrap();
    let options = RuntimeOptions { cache_dir: Some(cache.path().to_owned()), max_concurrent: 4, pooled: true };
    let runtime = Runtime::new(options.clone()).unwrap();
    assert_eq!(runtime.load_file(&guest("hello.wasm")).unwrap().cache, CacheOutcome::Compiled);
    // Another user could now have put native code there, with its digest.
    std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(runtime.load_file(&guest("hello.wasm")).unwrap().cache, CacheOutcome::Untrusted);
    assert_eq!(runtime.load_file(&guest("wc.wasm")).unwrap().cache, CacheOutcome::Untrusted);
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 2, "nothing is stored in an untrusted folder (one component, one digest)");
    std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(runtime.load_file(&guest("hello.wasm")).unwrap().cache, CacheOutcome::Hit);
    // A link to a folder is not the folder.
    let link = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(cache.path(), link.path().join("cache")).unwrap();
    let linked = Runtime::new(RuntimeOptions { cache_dir: Some(link.path().join("cache")), max_concurrent: 4, pooled: true }).unwrap();
    assert_eq!(linked.load_file(&guest("hello.wasm")).unwrap().cache, CacheOutcome::Untrusted);
}

#[test]
fn a_cache_file_or_digest_that_is_a_fifo_is_not_waited_on() {
    let (_cache, runtime, file) = hello_cached();
    let runtime = std::sync::Arc::new(runtime);
    for fifo in [file.with_extension("blake3"), file.clone()] {
        std::fs::remove_file(&fifo).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let (done, finished) = std::sync::mpsc::channel();
        let loading = runtime.clone();
        std::thread::spawn(move || done.send(loading.load_file(&guest("hello.wasm")).map(|l| l.cache).ok()));
        let outcome = finished.recv_timeout(std::time::Duration::from_secs(30)).expect("the load waits on a FIFO");
        assert_eq!(outcome, Some(CacheOutcome::Replaced), "{}", fifo.display());
    }
}

#[test]
fn a_foreign_cache_file_is_recompiled() {
    let (_cache, runtime, file) = hello_cached();
    // A well-formed cache file (its digest matches) whose code no engine of
    // ours produced: wasmtime's own check refuses it, and the cache compiles.
    let code = b"\x7fELF not code from this engine";
    std::fs::write(&file, code).unwrap();
    std::fs::write(file.with_extension("blake3"), blake3::hash(code).as_bytes()).unwrap();
    assert_eq!(runtime.load_file(&guest("hello.wasm")).unwrap().cache, CacheOutcome::Replaced);
}

#[test]
fn approval_rules_are_refused_rather_than_skipped() {
    let tree = Tree::new();
    tree.folder("data");
    std::fs::write(tree.path("policy.yaml"), "version: 1\nsandbox:\n  paths:\n    data: { root: ./data, mode: rw, write_approval: true }\n").unwrap();
    let policy = warden_policy::load(&tree.path("policy.yaml")).unwrap();
    let sandbox = warden_fs::Sandbox::open(&policy).unwrap();
    let err = warden_wasm::preopens_for(&sandbox).err().expect("refused");
    assert_eq!(
        err.to_string(),
        "Cannot run a component in this sandbox: /data needs a person's approval for writes. \
         Give the component the sandbox in effect of an approval session instead."
    );
}

#[test]
fn the_sandbox_in_effect_of_an_approval_session_is_accepted() {
    let tree = Tree::new();
    tree.folder("data");
    std::fs::write(tree.path("policy.yaml"), "version: 1\nsandbox:\n  paths:\n    data: { root: ./data, mode: rw, write_approval: true }\n").unwrap();
    let policy = warden_policy::load(&tree.path("policy.yaml")).unwrap();
    let session = warden_fs::approval::ApprovalSession::open(&policy, None, Box::new(warden_fs::approval::DenyAll), None).unwrap();
    let (_, lists) = warden_wasm::preopens_for(&session.sandbox().unwrap()).unwrap();
    assert_eq!((lists.readable.as_str(), lists.writable.as_str()), ("/data", "none"));
}

#[test]
fn trapped_runs_give_their_instance_slots_back() {
    // Two slots in the pool: a store kept alive after a trap would exhaust it.
    let options = RuntimeOptions { cache_dir: Some(repo().join("target/test-cwasm")), max_concurrent: 2, pooled: true };
    let runtime = Runtime::new(options).unwrap();
    let loaded = runtime.load_file(&guest("hostile/loop.wasm")).unwrap();
    let mut config = RunConfig::default();
    config.limits.fuel = Some(10_000);
    for _ in 0..50 {
        let err = runtime.run(&loaded, &config).unwrap_err();
        assert!(matches!(err, RunError::OutOfFuel { limit: 10_000 }), "{err}");
    }
}

#[test]
fn a_pooled_slot_used_again_holds_nothing_of_the_last_run() {
    // One instance at a time: every run takes the slot the last one left.
    let options = RuntimeOptions { cache_dir: Some(repo().join("target/test-cwasm")), max_concurrent: 1, pooled: true };
    let runtime = Runtime::new(options).unwrap();
    let loaded = runtime.load_file(&guest("hostile/remember.wasm")).unwrap();
    for run in 0..5 {
        let outcome = runtime.run(&loaded, &RunConfig::default()).unwrap();
        assert_eq!(outcome.exit_code, 0, "run {run} found the mark an earlier run left in memory");
    }
}
