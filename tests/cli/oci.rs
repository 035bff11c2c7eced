//! Components from OCI registries (issue 28): `warden pull`, `warden lock`,
//! and `oci://` references wherever a component file may stand. A real
//! registry on loopback (Debian's `docker-registry`) for the round trips, a
//! registry in the test for what a real one will not do, and cosign
//! signatures made in the test. Every refusal leaves nothing in the cache.

mod artifact;
mod cosign;
mod hostile;
mod http;
mod mcp;
mod registry;

mod cache;
mod escapes;
mod keys;
mod pull;
mod redirects;
mod referrers;
mod refusals;
mod served;
mod signatures;
mod tags;
mod tokens;
mod transport;
mod watch;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use tempfile::TempDir;

use super::{Run, repo};

/// `sha256:<hex>` of `bytes`.
fn sha256(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    format!("sha256:{}", hex(digest.as_ref()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Standard base64 with padding, as cosign's annotation and Basic auth write it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The bytes of a built guest component.
fn guest(name: &str) -> Vec<u8> {
    let path = guest_path(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}: run guests/build.sh first"))
}

fn guest_path(name: &str) -> String {
    repo().join("guests/out").join(name).to_str().unwrap().to_owned()
}

/// A folder of its own for one test: `warden` runs in it, with its own
/// home (no ~/.docker/config.json of the user's) and cache.
struct Env {
    dir: TempDir,
}

/// The longest one `warden` command may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(180);

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        Env { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn file(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// `<cache dir>/oci`: where pulled components are kept.
    fn oci_cache(&self) -> PathBuf {
        self.path("cache/oci")
    }

    /// `warden ARGS` in this folder, with `WARDEN_CACHE_DIR` and `HOME` inside it.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_warden"));
        command.args(args).current_dir(self.dir.path()).env("HOME", self.path("home")).env("WARDEN_CACHE_DIR", self.path("cache"));
        for variable in ["DOCKER_CONFIG", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NO_PROXY", "no_proxy"] {
            command.env_remove(variable);
        }
        command
    }

    fn warden(&self, args: &[&str]) -> Run {
        run(self.command(args))
    }

    fn warden_with(&self, args: &[&str], vars: &[(&str, &Path)]) -> Run {
        let mut command = self.command(args);
        command.envs(vars.iter().copied());
        run(command)
    }

    /// Every entry under `<cache>/oci` that is not a folder.
    fn cached_files(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut folders = vec![self.oci_cache()];
        while let Some(folder) = folders.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else { continue };
            for entry in entries {
                let entry = entry.unwrap();
                if entry.file_type().unwrap().is_dir() {
                    folders.push(entry.path());
                } else {
                    found.push(entry.path());
                }
            }
        }
        found
    }

    #[track_caller]
    fn assert_nothing_cached(&self) {
        let found = self.cached_files();
        assert!(found.is_empty(), "a refused pull left files in the cache: {found:?}");
    }

    /// `warden pull` of `reference` was refused for `reason`, and nothing was kept.
    #[track_caller]
    fn assert_refused(&self, r: &Run, reference: &str, reason: &str) {
        assert_eq!((r.status, r.stdout.as_str()), (1, ""), "{}", r.stderr);
        let prefix = format!("warden: cannot pull {reference}: ");
        assert!(r.stderr.starts_with(&prefix), "expected {prefix:?} first, got: {}", r.stderr);
        assert!(r.stderr.contains(reason), "expected {reason:?} in: {}", r.stderr);
        self.assert_nothing_cached();
    }
}

/// Runs `command` with no input, killing it (and failing) past [`DEADLINE`].
fn run(mut command: Command) -> Run {
    let child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = rustix::process::Pid::from_child(&child);
    let (done, finished) = mpsc::channel::<()>();
    // A watchdog: the child is only reaped by wait_with_output below, so its pid is still its own here.
    let watchdog = std::thread::spawn(move || {
        let late = finished.recv_timeout(DEADLINE).is_err();
        if late {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        late
    });
    let output = child.wait_with_output().unwrap();
    let _ = done.send(());
    let late = watchdog.join().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned());
    assert!(!late, "warden ran past {DEADLINE:?}; stderr: {stderr}");
    Run { status: output.status.code().unwrap_or(-1), stdout, stderr }
}

/// The lines `warden pull` prints for a component it stored.
fn pulled(reference: &str, manifest: &str, wasm: &[u8], signature: &str) -> String {
    format!(
        "pulled {reference}\n  manifest   {manifest}\n  component  {}\n  blake3     blake3:{}\n  size       {} bytes\n  signature  {signature}\n",
        sha256(wasm),
        blake3::hash(wasm).to_hex(),
        wasm.len()
    )
}

const NOT_CHECKED: &str = "not checked (no --verify-key)";

#[test]
fn base64_encodes_as_the_standard_alphabet_does() {
    // RFC 4648's test vectors: the helper is what signatures and logins rest on.
    let cases = [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")];
    for (plain, encoded) in cases {
        assert_eq!(base64(plain.as_bytes()), encoded);
    }
    assert_eq!(sha256(b"{}"), "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
}
