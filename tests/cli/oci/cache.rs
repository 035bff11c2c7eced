//! The cache is checked on every load: a blob changed after it was stored
//! is not the component that was pulled, whatever its size and times say.

use std::os::unix::fs::FileExt;
use std::time::Duration;

use super::registry::Registry;
use super::{Env, guest, hex};

#[test]
fn a_cached_layer_rewritten_in_place_with_its_times_set_back_is_not_run_offline() {
    // Catches a cache that trusts a blob because its size and modification
    // time are what they were: the change time cannot be set back.
    let (registry, env) = (Registry::start(), Env::new());
    let wasm = guest("echo.wasm");
    let digest = registry.push_component("tools/echo", "v1", &wasm);
    let reference = registry.reference("tools/echo", &digest);
    let r = env.warden(&["pull", "--insecure-registry", &registry.host(), &reference]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    drop(registry);
    let r = env.warden(&["call", "--offline", &reference, "echo", "--input", "{}"]);
    assert_eq!((r.status, r.stdout.trim_end()), (0, "{}"), "before the change the cached copy runs: {}", r.stderr);

    let layer = env.oci_cache().join("blobs/sha256").join(hex(ring::digest::digest(&ring::digest::SHA256, &wasm).as_ref()));
    let file = std::fs::File::options().read(true).write(true).open(&layer).unwrap_or_else(|e| panic!("{}: {e}", layer.display()));
    let before = file.metadata().unwrap();
    // The kernel's change time moves by clock ticks: past one, the rewrite shows in it.
    std::thread::sleep(Duration::from_millis(50));
    let at = (wasm.len() / 2) as u64;
    let mut byte = [0u8];
    file.read_exact_at(&mut byte, at).unwrap();
    file.write_all_at(&[byte[0] ^ 0x01], at).unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    let after = std::fs::metadata(&layer).unwrap();
    assert_eq!((after.len(), after.modified().unwrap()), (before.len(), before.modified().unwrap()), "the size and mtime are as they were");

    let r = env.warden(&["call", "--offline", &reference, "echo", "--input", "{}"]);
    assert_ne!(r.status, 0, "the changed component ran: {}", r.stdout);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains(&format!("{digest} is not in the cache and --offline was given")), "{}", r.stderr);
}
