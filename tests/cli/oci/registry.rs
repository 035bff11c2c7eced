//! A real registry on loopback: Debian's `docker-registry` (the CNCF
//! distribution registry, 2.8), on a port of its own choosing, with its
//! storage in a temporary folder; killed when dropped. Pushes go over plain
//! HTTP the way distribution 2.8 takes them.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::artifact::{Artifact, MANIFEST};
use super::http::{Response, request};
use super::{base64, sha256};

/// The user, password and htpasswd line of the registry that wants a login.
/// bcrypt at cost 4 (the least the registry takes): it checks the line on
/// every request. Made with Python's `crypt.crypt("pull-secret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16))`.
pub const USER: &str = "warden";
pub const PASSWORD: &str = "pull-secret";
pub const BCRYPT: &str = "$2b$04$PmoGzpZnu7pT63dT5e.RoeFrGyPOpVsLoigWICfS84HPytri2YM5C";

pub struct Registry {
    child: Child,
    port: u16,
    /// `Basic …` for a registry that wants a login.
    authorization: Option<String>,
    log: Arc<Mutex<String>>,
    _storage: TempDir,
}

impl Registry {
    pub fn start() -> Registry {
        Registry::spawn(None)
    }

    /// A registry that answers 401 without `user`'s password (`bcrypt` is its htpasswd hash).
    pub fn start_with_auth(user: &str, password: &str, bcrypt: &str) -> Registry {
        Registry::spawn(Some((user, password, bcrypt)))
    }

    fn spawn(login: Option<(&str, &str, &str)>) -> Registry {
        let storage = tempfile::tempdir().unwrap();
        let dir = storage.path();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:0\n  secret: warden-tests\n",
            dir.join("data").display()
        );
        if let Some((user, _, bcrypt)) = login {
            std::fs::write(dir.join("htpasswd"), format!("{user}:{bcrypt}\n")).unwrap();
            config.push_str(&format!("auth:\n  htpasswd:\n    realm: warden-tests\n    path: {}\n", dir.join("htpasswd").display()));
        }
        std::fs::write(dir.join("config.yml"), config).unwrap();
        // No REGISTRY_* variable from the environment may override the config.
        let mut child = Command::new("docker-registry")
            .arg("serve")
            .arg(dir.join("config.yml"))
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start docker-registry ({e}); policies/setup.sh installs it"));
        let log = Arc::new(Mutex::new(String::new()));
        let lines = drain(child.stderr.take().unwrap(), log.clone());
        let authorization = login.map(|(user, password, _)| format!("Basic {}", base64(format!("{user}:{password}").as_bytes())));
        let mut registry = Registry { child, port: 0, authorization, log, _storage: storage };
        registry.port = registry.wait_for_port(lines);
        registry
    }

    /// The port from the log line `msg="listening on 127.0.0.1:PORT"`.
    fn wait_for_port(&self, lines: mpsc::Receiver<String>) -> u16 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(port) = line.split("listening on 127.0.0.1:").nth(1) {
                        let digits: String = port.chars().take_while(char::is_ascii_digit).collect();
                        return digits.parse().unwrap_or_else(|_| panic!("no port in the registry's line: {line}"));
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("docker-registry did not say where it listens within 30 s; its log:\n{}", self.log()),
                Err(RecvTimeoutError::Disconnected) => panic!("docker-registry stopped before it listened; its log:\n{}", self.log()),
            }
        }
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// `127.0.0.1:PORT`, as references and `registries:` name it.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `oci://127.0.0.1:PORT/REPO@DIGEST`.
    pub fn reference(&self, repo: &str, digest: &str) -> String {
        format!("oci://{}/{repo}@{digest}", self.host())
    }

    fn call(&self, method: &str, path_or_url: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
        let url = if path_or_url.starts_with('/') { format!("http://{}{path_or_url}", self.host()) } else { path_or_url.to_owned() };
        let mut all = headers.to_vec();
        if let Some(authorization) = &self.authorization {
            all.push(("Authorization", authorization.as_str()));
        }
        request(method, &url, &all, body)
    }

    /// Uploads a blob the way 2.8 takes it (POST for a session, then PUT
    /// its Location with `&digest=`); returns its digest.
    pub fn push_blob(&self, repo: &str, bytes: &[u8]) -> String {
        let digest = sha256(bytes);
        let session = self.call("POST", &format!("/v2/{repo}/blobs/uploads/"), &[], b"");
        assert_eq!(session.status, 202, "POST blobs/uploads/: {}\n{}", session.text(), self.log());
        let location = session.header("Location").expect("an upload session has a Location");
        let separator = if location.contains('?') { '&' } else { '?' };
        let url = format!("{location}{separator}digest={digest}");
        let put = self.call("PUT", &url, &[("Content-Type", "application/octet-stream")], bytes);
        assert_eq!(put.status, 201, "PUT {url}: {}\n{}", put.text(), self.log());
        digest
    }

    /// PUTs a manifest under `reference` (a tag or its digest); returns its digest.
    pub fn push_manifest(&self, repo: &str, reference: &str, media_type: &str, body: &[u8]) -> String {
        let put = self.call("PUT", &format!("/v2/{repo}/manifests/{reference}"), &[("Content-Type", media_type)], body);
        assert_eq!(put.status, 201, "PUT manifests/{reference}: {}\n{}", put.text(), self.log());
        let digest = sha256(body);
        assert_eq!(put.header("Docker-Content-Digest"), Some(digest.as_str()), "the registry stores manifests byte for byte");
        digest
    }

    /// Pushes the artifact's blobs, then its manifest under `tag` (by its digest if `None`).
    pub fn push(&self, repo: &str, tag: Option<&str>, artifact: &Artifact) -> String {
        for blob in &artifact.blobs {
            self.push_blob(repo, blob);
        }
        let digest = artifact.digest();
        self.push_manifest(repo, tag.unwrap_or(&digest), MANIFEST, &artifact.bytes())
    }

    /// Pushes `wasm` as a CNCF wasm artifact under `tag`; returns the manifest digest.
    pub fn push_component(&self, repo: &str, tag: &str, wasm: &[u8]) -> String {
        self.push(repo, Some(tag), &Artifact::component(wasm))
    }

    /// Pushes `wasm` in the older `…component.layer.v0+wasm` layout.
    pub fn push_legacy_component(&self, repo: &str, tag: &str, wasm: &[u8]) -> String {
        self.push(repo, Some(tag), &Artifact::legacy_component(wasm))
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads `stderr` to its end on a thread of its own, into `log` and, line by line, the receiver.
fn drain(stderr: impl std::io::Read + Send + 'static, log: Arc<Mutex<String>>) -> mpsc::Receiver<String> {
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            log.lock().unwrap().push_str(&format!("{line}\n"));
            let _ = send.send(line);
        }
    });
    lines
}
