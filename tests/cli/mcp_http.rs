//! `warden mcp --http` as an HTTP client sees it: Origin and token checks,
//! the body limit, both protocol revisions, and a refusal to serve off
//! loopback without a token. The client is plain HTTP/1.1 over a socket.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use super::Fixture;

/// A running `warden mcp --http ADDR`, the address and port it took, the
/// token file it named, and what it writes on stderr after its first lines
/// (kept read, so that it never blocks).
pub(crate) struct Server {
    child: Child,
    ip: String,
    pub port: u16,
    pub token_file: std::path::PathBuf,
    /// The `Authorization` header sent with each request unless a test gives its own.
    pub auth: String,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Server {
    pub(crate) fn start(f: &Fixture, extra: &[&str]) -> Server {
        Server::start_at(f, "127.0.0.1", extra)
    }

    pub(crate) fn start_at(f: &Fixture, ip: &str, extra: &[&str]) -> Server {
        let policy = f.path("policy.yaml");
        let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(["mcp", "--policy", policy.to_str().unwrap(), "--http", &format!("{ip}:0")])
            .args(extra)
            .env("WARDEN_CACHE_DIR", f.path("cache"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let (port, token_file) = served_at(&mut stderr, ip);
        let token = std::fs::read_to_string(&token_file).unwrap().trim().to_owned();
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        Server { child, ip: ip.to_owned(), port, token_file, auth: format!("Bearer {token}"), log }
    }

    /// POSTs `body` to /mcp; returns the status, the headers (lowercase names) and the body.
    fn post(&self, headers: &[(&str, &str)], body: &str) -> (u16, Vec<(String, String)>, String) {
        self.send("POST", headers, body)
    }

    fn send(&self, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, Vec<(String, String)>, String) {
        let mut stream = TcpStream::connect((self.ip.as_str(), self.port)).unwrap();
        // The server's own Host and the token unless the test gives its own.
        let given = |header: &str| headers.iter().any(|(name, _)| name.eq_ignore_ascii_case(header));
        let host = if given("host") { String::new() } else { format!("Host: {}:{}\r\n", self.ip, self.port) };
        let auth = if given("authorization") { String::new() } else { format!("Authorization: {}\r\n", self.auth) };
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\n{host}{auth}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        // One write: a server that answers before reading the body (403, 401)
        // then finds nothing unread, so the connection closes without a reset.
        let _ = stream.write_all(request.as_bytes());
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        assert!(!raw.is_empty(), "no response; the server said: {}", self.log.lock().unwrap());
        parse_response(&raw)
    }

    /// A JSON-RPC request in a session (`session` from the `initialize` response) or
    /// stateless; returns the response message of the SSE or JSON body.
    fn rpc(&self, session: Option<&str>, message: Value) -> Value {
        let mut headers = vec![("MCP-Protocol-Version", "2025-11-25")];
        if let Some(id) = session {
            headers.push(("Mcp-Session-Id", id));
        }
        let (status, _, body) = self.post(&headers, &message.to_string());
        assert_eq!(status, 200, "{body}");
        messages(&body).pop().unwrap_or_else(|| panic!("no message in {body}"))
    }
}

/// Reads the server's first lines: where it serves, and where its token is.
pub(crate) fn served_at(stderr: &mut impl BufRead, ip: &str) -> (u16, std::path::PathBuf) {
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let port = line
        .strip_prefix(&format!("warden: serving MCP at http://{ip}:"))
        .and_then(|rest| rest.strip_suffix("/mcp\n"))
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .parse()
        .unwrap();
    line.clear();
    stderr.read_line(&mut line).unwrap();
    let file = line
        .strip_prefix("warden: token file: ")
        .and_then(|rest| rest.split_once(" (this user only)"))
        .unwrap_or_else(|| panic!("unexpected second line: {line}"))
        .0
        .to_owned();
    line.clear();
    stderr.read_line(&mut line).unwrap();
    assert!(line.starts_with("warden: for example: claude mcp add --transport http warden http://"), "{line}");
    (port, file.into())
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse_response(raw: &[u8]) -> (u16, Vec<(String, String)>, String) {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(": ")).map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned())).collect();
    let chunked = headers.iter().any(|(k, v)| k == "transfer-encoding" && v == "chunked");
    let body = if chunked { unchunk(body) } else { body.to_owned() };
    (status, headers, body)
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// The JSON-RPC messages of a JSON or SSE body.
fn messages(body: &str) -> Vec<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        return vec![v];
    }
    body.lines().filter_map(|l| l.strip_prefix("data: ")).filter_map(|d| serde_json::from_str(d).ok()).collect()
}

fn initialize() -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "http-test", "version": "1" } } })
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

#[test]
fn both_revisions_work_over_http() {
    let f = Fixture::new();
    let server = Server::start(&f, &[]);
    let (status, headers, body) = server.post(&[], &initialize().to_string());
    assert_eq!(status, 200, "{body}");
    let session = header(&headers, "mcp-session-id").expect("a session id").to_owned();
    assert_eq!(messages(&body)[0]["result"]["serverInfo"]["name"], "warden");
    server.post(&[("Mcp-Session-Id", &session)], &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string());
    let read = server.rpc(
        Some(&session),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "read_file", "arguments": { "path": "/portfolio/notes.md" } } }),
    );
    assert_eq!(read["result"]["structuredContent"]["content"], "hello notes");
    // Ending the session answers 204 (clients warn on rmcp's 202); the id is then unknown.
    let ended = &[("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
    assert_eq!(server.send("DELETE", ended, "").0, 204);
    assert_eq!(server.post(ended, &json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/list" }).to_string()).0, 404);
    // 2026-07-28: no session, the protocol version and client in every request's _meta.
    let meta = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientInfo": { "name": "http-test", "version": "1" },
                       "io.modelcontextprotocol/clientCapabilities": {} });
    let (status, headers, body) = server.post(
        &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "write_file")],
        &json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": { "_meta": meta, "name": "write_file", "arguments": { "path": "/pipeline/x.md", "content": "x" } } })
        .to_string(),
    );
    assert_eq!(status, 200, "{body}");
    // A reply that is one message comes as plain JSON, not as an event stream.
    assert_eq!(header(&headers, "content-type"), Some("application/json"), "{body}");
    let result = &serde_json::from_str::<Value>(&body).unwrap()["result"];
    assert_eq!(result["isError"], true, "{body}");
    assert_eq!(result["content"][0]["text"], "Cannot write to '/pipeline/x.md': path is read-only.\nWritable paths: /portfolio");
}

#[test]
fn a_foreign_origin_gets_403_and_the_servers_own_passes() {
    let f = Fixture::new();
    let server = Server::start(&f, &[]);
    for origin in ["http://evil.example", "https://127.0.0.1:1", "null"] {
        let (status, _, body) = server.post(&[("Origin", origin)], &initialize().to_string());
        assert_eq!(status, 403, "{origin}: {body}");
    }
    let own = format!("http://localhost:{}", server.port);
    assert_eq!(server.post(&[("Origin", &own)], &initialize().to_string()).0, 200);
}

#[test]
fn a_host_other_than_loopback_gets_403_against_dns_rebinding() {
    // A page whose name the attacker re-points at 127.0.0.1 sends its own name as Host.
    let f = Fixture::new();
    let server = Server::start(&f, &[]);
    for host in ["evil.example", &format!("evil.example:{}", server.port), "10.0.0.1"] {
        let (status, _, body) = server.post(&[("Host", host)], &initialize().to_string());
        assert_eq!(status, 403, "{host}: {body}");
    }
    assert_eq!(server.post(&[("Host", &format!("localhost:{}", server.port))], &initialize().to_string()).0, 200);
}

#[test]
fn a_token_is_required_when_given_and_checked_whole() {
    let f = Fixture::new();
    f.file("token", "s3cret-token\n");
    let token = f.path("token");
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let server = Server::start(&f, &["--token-file", token.to_str().unwrap()]);
    assert_eq!(server.token_file, token.canonicalize().unwrap());
    for auth in ["", "Bearer wrong", "Bearer s3cret-toke", "s3cret-token", "Basic s3cret-token", "Bearer s3cret-token2"] {
        let (status, headers, _) = server.post(&[("Authorization", auth)], &initialize().to_string());
        assert_eq!((status, header(&headers, "www-authenticate")), (401, Some("Bearer")), "{auth:?}");
    }
    for auth in ["Bearer s3cret-token", "bearer s3cret-token", "BEARER s3cret-token"] {
        assert_eq!(server.post(&[("Authorization", auth)], &initialize().to_string()).0, 200, "{auth}");
    }
}

#[test]
fn loopback_needs_a_token_too_made_at_start_in_a_file_only_the_user_reads() {
    use std::os::unix::fs::MetadataExt;
    let f = Fixture::new();
    let mut server = Server::start(&f, &[]);
    // Whatever can reach the port (a sandboxed command, another user) gets nothing without it.
    let (status, _, body) = server.post(&[("Authorization", "")], &initialize().to_string());
    assert_eq!((status, body.as_str()), (401, "a valid Bearer token is required\n"));
    assert_eq!(server.post(&[], &initialize().to_string()).0, 200);
    let meta = std::fs::metadata(&server.token_file).unwrap();
    assert_eq!(meta.mode() & 0o777, 0o600, "{}", server.token_file.display());
    assert_eq!(server.auth.len(), "Bearer ".len() + 64, "256 bits in hex");
    assert!(!server.token_file.starts_with(f.dir.path()), "the token lives outside every mount");
    assert_eq!(server.token_file.parent().unwrap().metadata().unwrap().mode() & 0o777, 0o700);
    // Stopped (SIGTERM), the server takes its token file with it.
    rustix::process::kill_process(rustix::process::Pid::from_child(&server.child), rustix::process::Signal::TERM).unwrap();
    server.child.wait().unwrap();
    assert!(!server.token_file.exists());
}

#[test]
fn a_sandboxed_command_that_reaches_the_port_gets_401_and_cannot_read_the_token() {
    // bubblewrap keeps the host's network under `network: true`: the command can reach the port;
    // under `read: all` it sees the host's files, but not Warden's folder with the token.
    let f = Fixture::new();
    f.file("policy.yaml", "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  network: true\n  shell: { read: all }\n");
    let server = Server::start(&f, &[]);
    let (_, headers, _) = server.post(&[], &initialize().to_string());
    let session = header(&headers, "mcp-session-id").unwrap().to_owned();
    server.post(&[("Mcp-Session-Id", &session)], &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string());
    let token_file = server.token_file.display().to_string();
    let script = format!(
        "curl -s -o /dev/null -w '%{{http_code}}\\n' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
         -d '{init}' http://127.0.0.1:{port}/mcp; \
         curl -s -o /dev/null -w '%{{http_code}}\\n' -H 'Authorization: Bearer guess' -d '{init}' http://127.0.0.1:{port}/mcp; \
         cat {token_file} 2>&1 | sed 's/^.*: //'; env | grep -ci 'token\\|bearer'",
        init = initialize(),
        port = server.port
    );
    let ran = server.rpc(Some(&session), json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "run_command", "arguments": { "command": script } } }));
    let result = &ran["result"]["structuredContent"];
    assert_eq!(result["sandboxed"], true, "{ran}");
    assert_eq!(result["stdout"], "401\n401\nNo such file or directory\n0\n", "{ran}");
}

#[test]
fn each_client_session_gets_a_container_of_its_own_removed_with_the_session() {
    let f = Fixture::new();
    f.file(
        "policy.yaml",
        "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  shell:\n    backend: container\n    container: { image: \"localhost/warden-busybox:1\", engine: podman }\n",
    );
    super::containers::give_to_user(&f, &["portfolio"]);
    let server = Server::start(&f, &[]);
    let open = || {
        let (_, headers, _) = server.post(&[], &initialize().to_string());
        let session = header(&headers, "mcp-session-id").unwrap().to_owned();
        server.post(&[("Mcp-Session-Id", &session)], &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string());
        session
    };
    let run = |session: &str, command: &str| -> Value {
        let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "run_command", "arguments": { "command": command } } });
        let answer = server.rpc(Some(session), call);
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        answer["result"]["structuredContent"].clone()
    };
    let (alice, bob) = (open(), open());
    // What one client leaves in /tmp, or runs, the other does not see.
    assert_eq!(run(&alice, "echo alice > /tmp/mine; cat /tmp/mine")["stdout"], "alice\n");
    assert_eq!(run(&bob, "cat /tmp/mine 2>&1; echo bob > /tmp/mine")["stdout"], "cat: can't open '/tmp/mine': No such file or directory\n");
    assert_eq!(run(&alice, "cat /tmp/mine")["stdout"], "alice\n");
    let ours = || -> Vec<String> {
        let out = Command::new("podman").args(["ps", "-a", "--format", "{{.Names}}"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().filter(|n| n.ends_with(&format!("-{}", server.child.id()))).map(str::to_owned).collect()
    };
    assert_eq!(ours().len(), 2, "{:?}", ours());
    // A session ended takes its container with it; the other stays.
    assert_eq!(server.send("DELETE", &[("Mcp-Session-Id", &alice), ("MCP-Protocol-Version", "2025-11-25")], "").0, 204);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while ours().len() != 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(ours().len(), 1, "{:?}", ours());
    assert_eq!(run(&bob, "cat /tmp/mine")["stdout"], "bob\n");
}

#[test]
fn a_token_file_others_may_read_or_inside_a_mount_is_refused() {
    let f = Fixture::new();
    let policy = f.path("policy.yaml");
    let serve = |token: &std::path::Path| super::warden(&["mcp", "--policy", policy.to_str().unwrap(), "--http", "127.0.0.1:0", "--token-file", token.to_str().unwrap()], "");
    f.file("token", "t0ken\n");
    let outside = f.path("token");
    std::fs::set_permissions(&outside, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let r = serve(&outside);
    let shown = outside.display();
    assert_eq!((r.status, r.stderr.as_str()), (2, format!("--token-file {shown} may be read by other users (mode 0640); make it yours alone: chmod 600 {shown}\n").as_str()));
    f.file("portfolio/token", "t0ken\n");
    let inside = f.path("portfolio/token");
    std::fs::set_permissions(&inside, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let r = serve(&inside);
    let root = f.path("portfolio").canonicalize().unwrap();
    assert_eq!(
        (r.status, r.stderr.as_str()),
        (
            2,
            format!(
                "--token-file {} is inside the mount /portfolio (host folder {}), where the sandbox's tools could read it; keep it outside every mount\n",
                inside.display(),
                root.display()
            )
            .as_str()
        )
    );
}

#[test]
fn a_loopback_address_other_than_127_0_0_1_answers_its_own_host() {
    let f = Fixture::new();
    let server = Server::start_at(&f, "127.0.0.2", &[]);
    let (status, _, body) = server.post(&[], &initialize().to_string());
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.post(&[("Host", "evil.example")], &initialize().to_string()).0, 403);
}

#[test]
fn sessions_are_capped_and_the_open_ones_go_on_serving() {
    let f = Fixture::new();
    let server = Server::start(&f, &["--max-sessions", "3"]);
    let mut open = Vec::new();
    for _ in 0..3 {
        let (status, headers, body) = server.post(&[], &initialize().to_string());
        assert_eq!(status, 200, "{body}");
        open.push(header(&headers, "mcp-session-id").unwrap().to_owned());
    }
    let (status, headers, body) = server.post(&[], &initialize().to_string());
    assert_eq!((status, header(&headers, "mcp-session-id")), (200, None), "{body}");
    let refused: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        refused,
        json!({ "jsonrpc": "2.0", "id": 1, "error": { "code": -32000, "message": "the server has 3 client sessions open, its limit (--max-sessions); end one (HTTP DELETE with its Mcp-Session-Id) or try again when an idle one has closed" } })
    );
    // Those open still serve.
    for session in &open {
        server.post(&[("Mcp-Session-Id", session)], &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string());
        let read = server.rpc(Some(session), json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "read_file", "arguments": { "path": "/portfolio/notes.md" } } }));
        assert_eq!(read["result"]["structuredContent"]["content"], "hello notes");
    }
    // One ended makes room for one more.
    assert_eq!(server.send("DELETE", &[("Mcp-Session-Id", &open[0]), ("MCP-Protocol-Version", "2025-11-25")], "").0, 204);
    let (_, headers, body) = server.post(&[], &initialize().to_string());
    assert!(header(&headers, "mcp-session-id").is_some(), "{body}");
}

#[test]
fn a_thousand_sessions_opened_and_left_do_not_run_the_server_out_of_descriptors() {
    let f = Fixture::new();
    let server = Server::start(&f, &[]);
    let (_, headers, _) = server.post(&[], &initialize().to_string());
    let first = header(&headers, "mcp-session-id").unwrap().to_owned();
    server.post(&[("Mcp-Session-Id", &first)], &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string());
    let read = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "read_file", "arguments": { "path": "/portfolio/notes.md" } } });
    let mut refused = 0;
    for _ in 0..1000 {
        let (status, headers, body) = server.post(&[], &initialize().to_string());
        assert_eq!(status, 200, "{body}");
        match header(&headers, "mcp-session-id") {
            Some(session) => {
                let session = session.to_owned();
                server.post(&[("Mcp-Session-Id", &session)], &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string());
                assert_eq!(server.rpc(Some(&session), read.clone())["result"]["structuredContent"]["content"], "hello notes");
            }
            None => refused += 1,
        }
    }
    assert_eq!(refused, 1000 - 63, "the default cap is 64 sessions");
    assert_eq!(server.rpc(Some(&first), read)["result"]["structuredContent"]["content"], "hello notes");
    let fds = std::fs::read_dir(format!("/proc/{}/fd", server.child.id())).unwrap().count();
    assert!(fds < 64 * 6 + 64, "{fds} descriptors open");
}

#[test]
fn a_body_over_4_mib_gets_413_and_the_server_goes_on() {
    let f = Fixture::new();
    let server = Server::start(&f, &[]);
    let big = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "padding": "x".repeat(5 << 20) } });
    assert_eq!(server.post(&[], &big.to_string()).0, 413);
    assert_eq!(server.post(&[], &initialize().to_string()).0, 200);
}

#[test]
fn serving_off_loopback_needs_a_token() {
    let f = Fixture::new();
    let policy = f.path("policy.yaml");
    let r = super::warden(&["mcp", "--policy", policy.to_str().unwrap(), "--http", "0.0.0.0:0"], "");
    assert_eq!(
        (r.status, r.stderr.as_str()),
        (2, "--http 0.0.0.0:0: not a loopback address; serving it needs --token-file\n")
    );
}
