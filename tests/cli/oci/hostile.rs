//! A registry in the test for what a real one will not do: each route
//! answers as the test says (a blob that is not what its digest says, a body
//! that never ends, a redirect elsewhere, a byte a second, a digest header
//! that lies, a 401 until a token comes), and every request that reaches it
//! is recorded with its headers, so a test can say what was never asked and
//! which credentials went where.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::artifact::{Artifact, MANIFEST};
use super::sha256;

/// How a route answers.
#[derive(Clone)]
pub enum Reply {
    /// 200 with this body and its `Content-Length` (and an honest `Docker-Content-Digest`).
    Ok { content_type: String, body: Vec<u8> },
    /// 200 with this body in chunks, no length said beforehand.
    Chunked { content_type: String, body: Vec<u8> },
    /// 200 with chunks that never end (until the client goes).
    Endless { content_type: String },
    /// 200 announcing a `Content-Length` of `length`, then only `body` (shorter), and the connection closed.
    Truncated { content_type: String, length: u64, body: Vec<u8> },
    /// 200 with a `Content-Length` of `length` and that many spaces, streamed.
    Huge { content_type: String, length: u64 },
    /// 200 with this body and its `Content-Length`, one byte a second.
    Drip { content_type: String, body: Vec<u8> },
    /// A redirect (301, 302, 307, 308) to `location`.
    Redirect { status: u16, location: String },
    /// 200 with this body, and a `Docker-Content-Digest` of `digest` whatever the body is.
    SaysDigest { content_type: String, body: Vec<u8>, digest: String },
}

impl Reply {
    pub fn ok(content_type: &str, body: Vec<u8>) -> Reply {
        Reply::Ok { content_type: content_type.to_owned(), body }
    }
}

/// What the server answers, by request path (the query is ignored).
#[derive(Clone, Default)]
pub struct Routes {
    paths: HashMap<String, Reply>,
    /// `(authorization, challenge)`: every `/v2` path answers 401 with
    /// `WWW-Authenticate: challenge` unless `Authorization` is exactly `authorization`.
    guard: Option<(String, String)>,
}

impl Routes {
    pub fn new() -> Routes {
        Routes::default()
    }

    pub fn reply(mut self, path: String, reply: Reply) -> Routes {
        self.paths.insert(path, reply);
        self
    }

    /// Every `/v2` path wants `Authorization: authorization`; without it, 401 and `challenge`.
    pub fn guard(mut self, authorization: &str, challenge: &str) -> Routes {
        self.guard = Some((authorization.to_owned(), challenge.to_owned()));
        self
    }

    /// `body` as the manifest `reference` (a tag or a digest) of `repo`.
    pub fn manifest(self, repo: &str, reference: &str, media_type: &str, body: Vec<u8>) -> Routes {
        self.reply(manifest_path(repo, reference), Reply::ok(media_type, body))
    }

    /// `bytes` as the blob of `repo` with their own digest.
    pub fn blob(self, repo: &str, bytes: &[u8]) -> Routes {
        self.reply(blob_path(repo, &sha256(bytes)), Reply::ok("application/octet-stream", bytes.to_vec()))
    }

    /// The artifact honestly: its manifest by digest, and each of its blobs.
    pub fn artifact(self, repo: &str, artifact: &Artifact) -> Routes {
        let routes = self.manifest(repo, &artifact.digest(), MANIFEST, artifact.bytes());
        artifact.blobs.iter().fold(routes, |routes, blob| routes.blob(repo, blob))
    }
}

pub fn manifest_path(repo: &str, reference: &str) -> String {
    format!("/v2/{repo}/manifests/{reference}")
}

pub fn blob_path(repo: &str, digest: &str) -> String {
    format!("/v2/{repo}/blobs/{digest}")
}

pub struct Hostile {
    addr: SocketAddr,
    /// Each request's head as it came (request line and headers), or `not HTTP: …`.
    heads: Arc<Mutex<Vec<String>>>,
    /// Connections accepted, whether or not a byte came on them.
    connections: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Hostile {
    pub fn start(routes: Routes) -> Hostile {
        Hostile::start_on("127.0.0.1", routes)
    }

    /// On another loopback address (e.g. 127.0.0.2): another host to redirect to.
    pub fn start_on(ip: &str, routes: Routes) -> Hostile {
        Hostile::start_with(ip, |_| routes)
    }

    /// Routes that name the server's own `IP:PORT` (a token realm, an absolute
    /// redirect): `routes` is given it once the port is bound.
    pub fn start_with(ip: &str, routes: impl FnOnce(&str) -> Routes) -> Hostile {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let routes = routes(&addr.to_string());
        let heads = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(AtomicUsize::new(0));
        let (log, stopped, routes, accepted) = (heads.clone(), stop.clone(), Arc::new(routes), connections.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                accepted.fetch_add(1, Ordering::SeqCst);
                let (log, stopped, routes) = (log.clone(), stopped.clone(), routes.clone());
                std::thread::spawn(move || serve(stream, &routes, &log, &stopped));
            }
        });
        Hostile { addr, heads, connections, stop }
    }

    /// `IP:PORT`, as references name it.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `oci://IP:PORT/REPO@DIGEST`.
    pub fn reference(&self, repo: &str, digest: &str) -> String {
        format!("oci://{}/{repo}@{digest}", self.host())
    }

    /// `http://IP:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.host())
    }

    /// Each request so far, `METHOD TARGET`; a connection that did not
    /// speak HTTP shows as `not HTTP: ` and its first bytes in hex.
    pub fn requests(&self) -> Vec<String> {
        let line = |head: &String| match head.starts_with("not HTTP: ") {
            true => head.clone(),
            false => head.lines().next().unwrap_or_default().split(' ').take(2).collect::<Vec<_>>().join(" "),
        };
        self.heads().iter().map(line).collect()
    }

    /// How many connections were opened to the server so far, even silent ones.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Each request's head so far: its request line and headers, as sent.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }

    /// The heads of the requests for `path` (with any query).
    pub fn heads_for(&self, path: &str) -> Vec<String> {
        self.heads().into_iter().filter(|head| target_path(head) == Some(path)).collect()
    }

    /// Whether a request for `path` (with any query) reached the server.
    pub fn was_asked_for(&self, path: &str) -> bool {
        !self.heads_for(path).is_empty()
    }
}

/// The path of a request head's target, without its query.
fn target_path(head: &str) -> Option<&str> {
    head.lines().next()?.split(' ').nth(1)?.split('?').next()
}

/// The request target (path and query) of a request head.
pub fn target(head: &str) -> &str {
    head.lines().next().and_then(|line| line.split(' ').nth(1)).unwrap_or_default()
}

/// The value of header `name` (any case) in a request head.
pub fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().skip(1).filter_map(|line| line.split_once(':')).find(|(n, _)| n.trim().eq_ignore_ascii_case(name)).map(|(_, v)| v.trim())
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so that it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(mut stream: TcpStream, routes: &Routes, log: &Mutex<Vec<String>>, stop: &AtomicBool) {
    if stop.load(Ordering::SeqCst) {
        return;
    }
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let Some(head) = read_head(&mut stream) else { return };
    if !head.first().is_some_and(u8::is_ascii_uppercase) {
        let hex: Vec<String> = head.iter().take(3).map(|b| format!("{b:02x}")).collect();
        log.lock().unwrap().push(format!("not HTTP: {}", hex.join(" ")));
        return;
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    log.lock().unwrap().push(text.clone());
    let method = text.split(' ').next().unwrap_or_default();
    let path = target_path(&text).unwrap_or_default();
    if let Some((authorization, challenge)) = &routes.guard
        && path.starts_with("/v2")
        && header(&text, "authorization") != Some(authorization.as_str())
    {
        return answer_401(&mut stream, challenge);
    }
    let reply = match path {
        "/v2/" | "/v2" => Reply::ok("application/json", b"{}".to_vec()),
        path => match routes.paths.get(path) {
            Some(reply) => reply.clone(),
            None => return answer_404(&mut stream),
        },
    };
    let _ = answer(&mut stream, &reply, method == "HEAD", stop);
}

/// The request's head, up to its blank line (at most 64 KiB); `None` if the client went.
fn read_head(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 64 << 10 {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
        // A TLS hello has no blank line: its first bytes are enough.
        if head.len() == 3 && !head[0].is_ascii_uppercase() {
            break;
        }
    }
    (!head.is_empty()).then_some(head)
}

fn answer_404(stream: &mut TcpStream) {
    let body = br#"{"errors":[{"code":"NOT_FOUND","message":"not here"}]}"#;
    let head = format!("HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
    let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body));
}

fn answer_401(stream: &mut TcpStream, challenge: &str) {
    let body = br#"{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}"#;
    let head = format!(
        "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: {challenge}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body));
}

fn answer(stream: &mut TcpStream, reply: &Reply, head_only: bool, stop: &AtomicBool) -> std::io::Result<()> {
    const COMMON: &str = "Docker-Distribution-Api-Version: registry/2.0\r\nConnection: close\r\n";
    let ok = |content_type: &str, length: Option<u64>| match length {
        Some(n) => format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {n}\r\n{COMMON}"),
        None => format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n{COMMON}"),
    };
    let head = match reply {
        Reply::Ok { content_type, body } => {
            format!("{}Docker-Content-Digest: {}\r\n\r\n", ok(content_type, Some(body.len() as u64)), sha256(body))
        }
        Reply::Drip { content_type, body } => format!("{}\r\n", ok(content_type, Some(body.len() as u64))),
        Reply::Huge { content_type, length } | Reply::Truncated { content_type, length, .. } => {
            format!("{}\r\n", ok(content_type, Some(*length)))
        }
        Reply::Chunked { content_type, .. } | Reply::Endless { content_type } => format!("{}\r\n", ok(content_type, None)),
        Reply::Redirect { status, location } => {
            format!("HTTP/1.1 {status} Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\n{COMMON}\r\n")
        }
        Reply::SaysDigest { content_type, body, digest } => {
            format!("{}Docker-Content-Digest: {digest}\r\n\r\n", ok(content_type, Some(body.len() as u64)))
        }
    };
    stream.write_all(head.as_bytes())?;
    if head_only {
        return Ok(());
    }
    let spaces = vec![b' '; 64 << 10];
    match reply {
        Reply::Ok { body, .. } | Reply::Truncated { body, .. } | Reply::SaysDigest { body, .. } => stream.write_all(body)?,
        Reply::Chunked { body, .. } => {
            for chunk in body.chunks(4096) {
                stream.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())?;
                stream.write_all(chunk)?;
                stream.write_all(b"\r\n")?;
            }
            stream.write_all(b"0\r\n\r\n")?;
        }
        // Until the client goes, or 16 GiB as a backstop.
        Reply::Endless { .. } => {
            for _ in 0..(256 << 10) {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                stream.write_all(format!("{:x}\r\n", spaces.len()).as_bytes())?;
                stream.write_all(&spaces)?;
                stream.write_all(b"\r\n")?;
            }
        }
        Reply::Huge { length, .. } => {
            let mut left = *length;
            while left > 0 && !stop.load(Ordering::SeqCst) {
                let n = left.min(spaces.len() as u64);
                stream.write_all(&spaces[..n as usize])?;
                left -= n;
            }
        }
        // The pacing is the point of this reply, not a synchronisation.
        Reply::Drip { body, .. } => {
            for byte in body {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                stream.write_all(std::slice::from_ref(byte))?;
                stream.flush()?;
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        Reply::Redirect { .. } => {}
    }
    stream.flush()
}
