//! `warden mcp --console`: the person's own page, over plain HTTP as a
//! browser sends it. Questions that reach it whatever the client can show,
//! the first answer winning, grants revoked, calls cancelled, and the
//! requests it refuses (no cookie, a foreign host or origin, no CSRF token,
//! a sandboxed command on the same loopback).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{accept, audit_lines, ok, refused, server_log, Client, Fixture, APPROVAL_POLICY, NEW, OLD};

/// A browser's session on a console.
pub(super) struct Page {
    pub(super) port: u16,
    cookie: String,
    csrf: String,
}

/// The login URL, from the private file whose path the server printed (the URL itself never is).
pub(super) fn login_url(f: &Fixture) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let log = server_log(f);
        if let Some(at) = log.find("one-time login URL is in ") {
            assert!(!log.contains("/login?token="), "the login URL on stderr: {log}");
            let file = log[at + "one-time login URL is in ".len()..].split(" (this user only)").next().unwrap().to_owned();
            use std::os::unix::fs::MetadataExt;
            assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
            return std::fs::read_to_string(file).unwrap().trim().to_owned();
        }
        assert!(Instant::now() < deadline, "no console URL file on stderr: {log}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends one request to 127.0.0.1:`port`; the status, the headers and the body.
pub(super) fn send(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let given = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let mut request = format!("{method} {path} HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    if !given("host") {
        request.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    let _ = stream.read_to_string(&mut raw);
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head.to_lowercase(), body.to_owned())
}

impl Page {
    /// Logged in to the console the server `f` started.
    fn log_in(f: &Fixture) -> Page {
        Page::log_in_at(&login_url(f))
    }

    /// Logged in with the one-time `url`.
    pub(super) fn log_in_at(url: &str) -> Page {
        let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
        let (port, path) = rest.split_once('/').unwrap();
        let port: u16 = port.parse().unwrap();
        let (status, head, _) = send(port, "GET", &format!("/{path}"), &[], "");
        assert_eq!(status, 303, "{head}");
        let cookie = head.lines().find_map(|l| l.strip_prefix("set-cookie: ")).unwrap().split(';').next().unwrap().to_owned();
        assert!(head.contains("httponly") && head.contains("samesite=strict"), "{head}");
        // The token is in the redirect's fragment, for the page alone.
        let location = head.lines().find_map(|l| l.strip_prefix("location: ")).unwrap();
        let csrf = location.strip_prefix("/#csrf=").unwrap_or_else(|| panic!("{location}")).trim().to_owned();
        Page { port, cookie, csrf }
    }

    pub(super) fn get(&self, path: &str) -> (u16, String) {
        let (status, _, body) = send(self.port, "GET", path, &[("Cookie", &self.cookie), ("X-Warden-CSRF", &self.csrf)], "");
        (status, body)
    }

    pub(super) fn state(&self) -> Value {
        let (status, body) = self.get("/api/state");
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    /// A change, as the page sends it: same origin, with the CSRF token.
    pub(super) fn post(&self, path: &str, body: &Value) -> (u16, String) {
        let origin = format!("http://127.0.0.1:{}", self.port);
        let headers = [("Cookie", self.cookie.as_str()), ("Origin", origin.as_str()), ("X-Warden-CSRF", self.csrf.as_str()), ("Content-Type", "application/json")];
        let (status, _, body) = send(self.port, "POST", path, &headers, &body.to_string());
        (status, body)
    }

    /// The pending questions, once there are `n` of them.
    pub(super) fn questions(&self, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let questions = self.state()["questions"].as_array().unwrap().clone();
            if questions.len() == n {
                return questions;
            }
            assert!(Instant::now() < deadline, "{} questions, not {n}", questions.len());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Nothing answered `question` (call `id` of `c`) but the person, who
    /// now denies it: the call is refused.
    fn still_pending_then_denied(&self, c: &mut Client, id: u64, question: &Value) {
        assert_eq!(self.questions(1)[0]["id"], question["id"], "the question was answered by someone else");
        self.answer(question, "deny");
        assert!(refused(&c.response_within(id, Duration::from_secs(20)).unwrap()["result"]).starts_with("Cannot write"));
    }

    pub(super) fn answer(&self, question: &Value, decision: &str) {
        let (status, body) = self.post(&format!("/api/questions/{}", question["id"]), &json!({ "decision": decision, "folder": 0 }));
        assert_eq!(status, 204, "{body}");
    }
}

fn with_console(f: &Fixture, revision: &str, capabilities: Value) -> (Client, Page) {
    let audit = f.path("audit.jsonl");
    let (c, _) = Client::connect_with(f, revision, &["--audit", audit.to_str().unwrap(), "--console", "127.0.0.1:0"], capabilities);
    let page = Page::log_in(f);
    (c, page)
}

fn write(name: &str) -> Value {
    json!({ "path": format!("/portfolio/drafts/{name}"), "content": "x" })
}

#[test]
fn a_client_without_forms_is_answered_at_the_console_in_both_revisions() {
    for revision in [OLD, NEW] {
        let f = Fixture::new();
        f.file("policy.yaml", APPROVAL_POLICY);
        let (mut c, page) = with_console(&f, revision, json!({}));
        let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("a.md") }));
        let question = &page.questions(1)[0];
        assert_eq!((question["tool"].as_str(), question["access"].as_str(), question["path"].as_str()), (Some("write_file"), Some("write"), Some("/portfolio/drafts/a.md")));
        assert_eq!(question["client"], "warden-tests #0");
        assert_eq!(question["folders"][0], "/portfolio/drafts");
        assert!(question["host_path"].as_str().unwrap().ends_with("/portfolio/drafts/a.md"), "{question}");
        page.answer(question, "once");
        let response = c.response_within(id, Duration::from_secs(20)).expect("the call ended");
        assert_eq!(ok(&response["result"])["result"], "Written 1 characters to /portfolio/drafts/a.md", "{revision}");
        assert_eq!(page.questions(0).len(), 0);
        let logged = audit_lines(&f);
        assert_eq!((logged[0]["decision"].as_str(), logged[0]["via"].as_str(), logged[0]["scope"].as_str()), (Some("allow"), Some("console"), Some("once")));
        // Deny: refused in the sandbox's words, nothing written.
        let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("b.md") }));
        page.answer(&page.questions(1)[0], "deny");
        let response = c.response_within(id, Duration::from_secs(20)).expect("the call ended");
        assert!(refused(&response["result"]).starts_with("Cannot write to '/portfolio/drafts/b.md'"), "{response}");
        assert!(!f.path("portfolio/drafts/b.md").exists());
        assert_eq!(audit_lines(&f)[1]["via"], "console");
    }
}

#[test]
fn with_a_form_too_the_first_answer_wins_and_the_other_question_is_withdrawn() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let (mut c, page) = with_console(&f, OLD, json!({ "elicitation": { "form": {} } }));
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("a.md") }));
    let asked = c.wait_for("elicitation/create", Duration::from_secs(20)).expect("the client's form");
    page.answer(&page.questions(1)[0], "once");
    let withdrawn = c.wait_for("notifications/cancelled", Duration::from_secs(20)).expect("the form withdrawn");
    assert_eq!(withdrawn["params"]["requestId"], asked["id"]);
    let response = c.response_within(id, Duration::from_secs(20)).expect("the call ended");
    ok(&response["result"]);
    // Answered at the client: the console's question goes.
    let (result, forms) = c.call_answering("write_file", write("b.md"), &[accept("once", "/portfolio/drafts")]);
    assert_eq!(forms.len(), 1);
    ok(&result);
    assert_eq!(page.questions(0).len(), 0);
    let via: Vec<&str> = audit_lines(&f).iter().map(|l| l["via"].as_str().unwrap_or("")).collect::<Vec<_>>().into_iter().map(|v| if v == "console" { "console" } else if v == "client" { "client" } else { "?" }).collect();
    assert_eq!(via, ["console", "client"]);
}

#[test]
fn a_client_that_opens_urls_is_sent_the_questions_page_and_the_call_completes_after_the_click() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let (mut c, page) = with_console(&f, OLD, json!({ "elicitation": { "url": {} } }));
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("a.md") }));
    let asked = c.wait_for("elicitation/create", Duration::from_secs(20)).expect("the client is asked");
    let question = &page.questions(1)[0];
    assert_eq!(asked["params"]["mode"], "url", "{asked}");
    assert_eq!(asked["params"]["url"], format!("http://127.0.0.1:{}/?question={}", page.port, question["id"]));
    // No path reaches the client in URL mode: the page shows it to the person.
    assert_eq!(asked["params"]["message"], "Warden asks you about an access by this agent's tool; answer at Warden's console.");
    // The client took the person to the page: the answer comes from there.
    c.send(&json!({ "jsonrpc": "2.0", "id": asked["id"], "result": { "action": "accept" } }).to_string());
    assert!(c.response_within(id, Duration::from_millis(300)).is_none(), "the call finished before the person answered");
    page.answer(question, "once");
    ok(&c.response_within(id, Duration::from_secs(20)).expect("the call ended")["result"]);
    assert_eq!(audit_lines(&f)[0]["via"], "console");
}

#[test]
fn a_grant_for_the_session_is_listed_and_revoked_and_the_next_write_asks_again() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let (mut c, page) = with_console(&f, OLD, json!({}));
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("a.md") }));
    page.answer(&page.questions(1)[0], "session");
    ok(&c.response_within(id, Duration::from_secs(20)).unwrap()["result"]);
    let grants = page.state()["grants"].as_array().unwrap().clone();
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!((grants[0]["access"].as_str(), grants[0]["path"].as_str(), grants[0]["client"].as_str()), (Some("write"), Some("/portfolio/drafts"), Some("warden-tests #0")));
    // Granted for the session: the next write asks nobody.
    ok(&c.call("write_file", write("b.md")));
    let (status, body) = page.post(&format!("/api/grants/{}/revoke", grants[0]["source"]), &json!({ "access": "write", "path": "/portfolio/drafts" }));
    assert_eq!(status, 204, "{body}");
    assert_eq!(page.state()["grants"].as_array().unwrap().len(), 0);
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("c.md") }));
    page.answer(&page.questions(1)[0], "deny");
    assert!(refused(&c.response_within(id, Duration::from_secs(20)).unwrap()["result"]).starts_with("Cannot write"));
    // The revocation is logged, with where it was made.
    let logged = audit_lines(&f);
    let revoked: Vec<&Value> = logged.iter().filter(|l| l["decision"] == "revoked").collect();
    assert_eq!(revoked.len(), 1, "{logged:?}");
    assert_eq!((revoked[0]["grant"].as_str(), revoked[0]["operation"].as_str(), revoked[0]["via"].as_str()), (Some("/portfolio/drafts"), Some("write"), Some("console")));
    assert_eq!(revoked[0]["session"], logged[0]["session"]);
    // The suggested policy lines name what was granted for the session, and not once it is revoked.
    let (status, audit) = page.get("/api/audit?decision=allow");
    assert_eq!(status, 200);
    let audit: Value = serde_json::from_str(&audit).unwrap();
    assert_eq!(audit["total"], 1, "{audit}");
    assert!(!audit["suggestions"][0]["policy"].as_str().unwrap().contains("/portfolio/drafts: write was granted"), "{audit}");
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("d.md") }));
    page.answer(&page.questions(1)[0], "session");
    ok(&c.response_within(id, Duration::from_secs(20)).unwrap()["result"]);
    let (_, audit) = page.get("/api/audit?decision=allow");
    let audit: Value = serde_json::from_str(&audit).unwrap();
    assert!(audit["suggestions"][0]["policy"].as_str().unwrap().contains("/portfolio/drafts: write was granted"), "{audit}");
}

/// A `warden mcp --http` server with a console, its stderr in the fixture's log.
pub(super) struct HttpServer {
    child: std::process::Child,
    port: u16,
    auth: String,
}

impl HttpServer {
    pub(super) fn start(f: &Fixture, extra: &[&str]) -> HttpServer {
        let policy = f.path("policy.yaml");
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(["mcp", "--policy", policy.to_str().unwrap(), "--http", "127.0.0.1:0", "--console", "127.0.0.1:0"])
            .args(extra)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(f.path("mcp-stderr.log")).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let (port, token_file) = loop {
            let log = server_log(f);
            let port = log.split("serving MCP at http://127.0.0.1:").nth(1).and_then(|r| r.split('/').next()).and_then(|p| p.parse().ok());
            let file = log.split("token file: ").nth(1).and_then(|r| r.split(" (this user only)").next()).map(str::to_owned);
            if let (Some(port), Some(file)) = (port, file) {
                break (port, file);
            }
            assert!(Instant::now() < deadline, "the server did not start: {log}");
            std::thread::sleep(Duration::from_millis(50));
        };
        let token = std::fs::read_to_string(token_file).unwrap().trim().to_owned();
        HttpServer { child, port, auth: format!("Bearer {token}") }
    }

    /// A 2026-07-28 call by the client `name`, which takes no forms, from a thread: its result.
    pub(super) fn call(&self, name: &str, tool: &str, arguments: Value) -> std::thread::JoinHandle<Value> {
        let meta = json!({ "io.modelcontextprotocol/protocolVersion": NEW,
                           "io.modelcontextprotocol/clientInfo": { "name": name, "version": "1" },
                           "io.modelcontextprotocol/clientCapabilities": {} });
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "_meta": meta, "name": tool, "arguments": arguments } }).to_string();
        let (port, auth, tool) = (self.port, self.auth.clone(), tool.to_owned());
        std::thread::spawn(move || {
            let headers = [
                ("Authorization", auth.as_str()),
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", NEW),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", tool.as_str()),
            ];
            let (status, _, body) = send(port, "POST", "/mcp", &headers, &body);
            if status != 200 {
                return json!({ "http": status, "body": body });
            }
            serde_json::from_str::<Value>(&body).unwrap_or_else(|e| panic!("{e}: {body}"))["result"].clone()
        })
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn two_clients_questions_are_shown_apart_and_answering_one_leaves_the_other() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let audit = f.path("audit.jsonl");
    let server = HttpServer::start(&f, &["--audit", audit.to_str().unwrap()]);
    let page = Page::log_in(&f);
    let one = server.call("first", "write_file", write("one.md"));
    let two = server.call("second", "write_file", write("two.md"));
    let questions = page.questions(2);
    let of = |name: &str| questions.iter().find(|q| q["client"].as_str().unwrap().starts_with(name)).unwrap_or_else(|| panic!("{questions:?}")).clone();
    page.answer(&of("first"), "once");
    ok(&one.join().unwrap());
    let left = page.questions(1);
    assert!(left[0]["client"].as_str().unwrap().starts_with("second"), "{left:?}");
    assert!(f.path("portfolio/drafts/one.md").exists() && !f.path("portfolio/drafts/two.md").exists());
    page.answer(&left[0], "deny");
    assert!(refused(&two.join().unwrap()).starts_with("Cannot write"));
}

#[test]
fn cancel_at_the_console_ends_a_running_command() {
    let f = Fixture::new();
    f.file("policy.yaml", &format!("{APPROVAL_POLICY}  shell: {{}}\n"));
    let (mut c, page) = with_console(&f, OLD, json!({}));
    let started = Instant::now();
    let id = c.start_request("tools/call", json!({ "name": "run_command", "arguments": { "command": "sleep 61.25" } }));
    let deadline = Instant::now() + Duration::from_secs(20);
    let call = loop {
        let calls = page.state()["calls"].as_array().unwrap().clone();
        if let Some(call) = calls.into_iter().find(|c| c["tool"] == "run_command") {
            break call;
        }
        assert!(Instant::now() < deadline, "the command never showed");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(call["detail"].as_str().unwrap().contains("sleep 61.25"), "{call}");
    let (status, body) = page.post(&format!("/api/calls/{}/cancel", call["id"]), &json!({}));
    assert_eq!(status, 204, "{body}");
    // The same cancellation as `notifications/cancelled`: the command is killed.
    let response = c.response_within(id, Duration::from_secs(20)).expect("the cancelled call answers");
    assert!(started.elapsed() < Duration::from_secs(20), "not ended by the cancel");
    let text = response["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("cancelled"), "{response}");
    let left = std::process::Command::new("pgrep").args(["-f", "sleep 61.25"]).output().unwrap();
    assert!(left.stdout.is_empty(), "the command still runs");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !page.state()["calls"].as_array().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the cancelled call is still listed");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_console_refuses_no_cookie_a_foreign_host_or_origin_and_a_forged_csrf_token() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let (mut c, page) = with_console(&f, OLD, json!({}));
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("a.md") }));
    let question = page.questions(1)[0].clone();
    let path = format!("/api/questions/{}", question["id"]);
    let body = json!({ "decision": "once", "folder": 0 }).to_string();
    let port = page.port;
    let origin = format!("http://127.0.0.1:{port}");
    let cookie = page.cookie.as_str();
    let csrf = page.csrf.as_str();
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16);
    let cases: [Case; 6] = [
        ("no cookie", vec![("Origin", &origin), ("X-Warden-CSRF", csrf)], 401),
        ("a foreign Host (DNS rebinding)", vec![("Host", "evil.example:80"), ("Cookie", cookie), ("Origin", "http://evil.example:80"), ("X-Warden-CSRF", csrf)], 403),
        ("a cross-origin post", vec![("Cookie", cookie), ("Origin", "http://evil.example"), ("X-Warden-CSRF", csrf)], 403),
        ("no Origin", vec![("Cookie", cookie), ("X-Warden-CSRF", csrf)], 403),
        ("a forged CSRF token", vec![("Cookie", cookie), ("Origin", &origin), ("X-Warden-CSRF", "00")], 403),
        ("a form post without the token", vec![("Cookie", cookie), ("Origin", &origin), ("Content-Type", "application/x-www-form-urlencoded")], 403),
    ];
    for (what, headers, expected) in cases {
        let (status, _, answer) = send(port, "POST", &path, &headers, &body);
        assert_eq!(status, expected, "{what}: {answer}");
    }
    assert_eq!(send(port, "GET", "/api/state", &[], "").0, 401);
    // A refused request keeps no connection open, even one that asked to keep it.
    let mut kept = TcpStream::connect(("127.0.0.1", port)).unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    kept.write_all(format!("GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: keep-alive\r\n\r\n").as_bytes()).unwrap();
    let mut answer = String::new();
    kept.read_to_string(&mut answer).expect("the connection was kept open after a refusal");
    assert!(answer.starts_with("HTTP/1.1 401") && answer.to_lowercase().contains("connection: close"), "{answer}");
    // The cookie alone (a page on another port of 127.0.0.1 is sent it too) reads nothing but the static page.
    for path in ["/api/state", "/api/events", "/api/audit"] {
        assert_eq!(send(port, "GET", path, &[("Cookie", cookie)], "").0, 403, "{path}");
    }
    assert_eq!(send(port, "GET", "/", &[("Cookie", cookie)], "").0, 200);
    // A cookie planted beside the real one does not lock the person out.
    assert_eq!(send(port, "GET", "/api/state", &[("Cookie", &format!("warden_console=planted; {cookie}")), ("X-Warden-CSRF", csrf)], "").0, 200);
    assert_eq!(send(port, "GET", "/", &[("Host", "localhost.evil.example")], "").0, 403);
    // The login URL works once.
    let url = login_url(&f);
    assert_eq!(send(port, "GET", url.strip_prefix(&format!("http://127.0.0.1:{port}")).unwrap(), &[], "").0, 401);
    // Nothing was answered: the question is still pending, then answered by the person.
    page.still_pending_then_denied(&mut c, id, &question);
}

#[test]
fn a_file_named_like_markup_reaches_the_page_as_text_only() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let (mut c, page) = with_console(&f, OLD, json!({}));
    let name = "<img src=x onerror=alert(1)>.md";
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write(name) }));
    let question = &page.questions(1)[0];
    assert_eq!(question["path"], format!("/portfolio/drafts/{name}"));
    // The page itself holds no data: it is fetched as JSON and set as text.
    let (status, html) = page.get("/");
    assert_eq!(status, 200);
    assert!(!html.contains("onerror"), "{html}");
    let (_, script) = page.get("/app.js");
    assert!(!script.contains("innerHTML") && !script.contains("insertAdjacentHTML") && !script.contains("document.write"), "the page's script parses HTML");
    let (_, head, _) = send(page.port, "GET", "/", &[("Cookie", &page.cookie)], "");
    assert!(head.contains("content-security-policy: default-src 'none'; script-src 'self'"), "{head}");
    page.answer(question, "deny");
    let _ = c.response_within(id, Duration::from_secs(20));
}

#[test]
fn a_sandboxed_command_on_the_same_loopback_reads_nothing_and_answers_nothing() {
    let f = Fixture::new();
    f.file("policy.yaml", "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw, write_approval: true }\n  network: true\n  shell: {}\n");
    let (mut c, page) = with_console(&f, OLD, json!({}));
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("a.md") }));
    let question = page.questions(1)[0].clone();
    let port = page.port;
    let probe = format!(
        "import urllib.request as u\n\
         for method, path, body in [('GET', '/api/state', None), ('GET', '/', None), ('POST', '/api/questions/{id}', b'{{\"decision\":\"once\",\"folder\":0}}')]:\n\
         \x20   r = u.Request('http://127.0.0.1:{port}' + path, data=body, method=method, headers={{'Origin': 'http://127.0.0.1:{port}', 'Content-Type': 'application/json'}})\n\
         \x20   try:\n\
         \x20       print(method, path, u.urlopen(r).status)\n\
         \x20   except Exception as e:\n\
         \x20       print(method, path, getattr(e, 'code', e))\n",
        id = question["id"]
    );
    f.file("portfolio/probe.py", &probe);
    let ran = c.call("run_command", json!({ "command": "python3 probe.py" }));
    let text = ran["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(text.contains("GET /api/state 401") && text.contains("GET / 401") && text.contains(&format!("POST /api/questions/{} 401", question["id"])), "{ran}");
    page.still_pending_then_denied(&mut c, id, &question);
}

#[test]
fn a_client_that_is_not_asked_hears_by_progress_that_a_person_is_asked_at_the_console() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let (mut c, page) = with_console(&f, OLD, json!({}));
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("a.md"), "_meta": { "progressToken": "p-1" } }));
    let told = c.wait_for("notifications/progress", Duration::from_secs(20)).expect("a progress notification");
    assert_eq!((told["params"]["progressToken"].as_str(), told["params"]["message"].as_str()), (Some("p-1"), Some("a person is being asked at Warden's console")));
    let later = c.wait_for("notifications/progress", Duration::from_secs(20)).expect("progress while the person is asked");
    assert!(later["params"]["message"].as_str().unwrap().starts_with("waiting for a person to answer at Warden's console ("), "{later}");
    assert!(later["params"]["progress"].as_f64() > told["params"]["progress"].as_f64(), "{later}");
    page.answer(&page.questions(1)[0], "once");
    ok(&c.response_within(id, Duration::from_secs(20)).expect("the call ended")["result"]);
}

#[test]
fn approvals_via_console_never_asks_the_clients_form_and_via_client_never_the_console() {
    let f = Fixture::new();
    f.file("policy.yaml", &format!("{APPROVAL_POLICY}  approvals: {{ via: console }}\n"));
    let (mut c, page) = with_console(&f, OLD, json!({ "elicitation": { "form": {}, "url": {} } }));
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("a.md") }));
    let question = page.questions(1)[0].clone();
    // The question is on the page before the client would be asked: the client never is.
    assert!(c.wait_for("elicitation/create", Duration::from_millis(500)).is_none(), "the client was asked");
    page.answer(&question, "once");
    ok(&c.response_within(id, Duration::from_secs(20)).expect("the call ended")["result"]);
    assert_eq!(audit_lines(&f)[0]["via"], "console");
    drop(c);
    // `--ask-via client` over the policy: the console lists the call but never asks; the client's form answers.
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let audit = f.path("audit.jsonl");
    let (mut c, _) = Client::connect_with(&f, OLD, &["--audit", audit.to_str().unwrap(), "--console", "127.0.0.1:0", "--ask-via", "client"], json!({ "elicitation": { "form": {} } }));
    let page = Page::log_in(&f);
    let (result, forms) = c.call_answering("write_file", write("b.md"), &[accept("once", "/portfolio/drafts")]);
    assert_eq!(forms.len(), 1);
    ok(&result);
    assert_eq!(page.state()["questions"].as_array().unwrap().len(), 0);
    assert!(audit_lines(&f).iter().all(|l| l["via"] != "console"));
}

#[test]
fn a_component_with_network_access_to_the_consoles_port_reads_nothing() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let f = Fixture::new();
    f.file(
        "policy.yaml",
        &format!(
            "{APPROVAL_POLICY}  network: {{ allow: [\"127.0.0.1:{port}\"] }}\ntools:\n  http: {{ component: {} }}\n",
            super::guest("httpget.wasm")
        ),
    );
    let audit = f.path("audit.jsonl");
    let (mut c, _) = Client::connect_with(&f, OLD, &["--audit", audit.to_str().unwrap(), "--console", &format!("127.0.0.1:{port}")], json!({}));
    let page = Page::log_in(&f);
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("a.md") }));
    let question = page.questions(1)[0].clone();
    for path in ["/api/state", "/", "/api/audit", &format!("/?question={}", question["id"])] {
        let got = c.call("http__get", json!({ "authority": format!("127.0.0.1:{port}"), "path": path }));
        let said: Value = serde_json::from_str(got["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(said["status"], 401, "{path}: {got}");
    }
    page.still_pending_then_denied(&mut c, id, &question);
}

#[test]
fn a_2026_client_that_opens_urls_is_sent_the_questions_page_in_the_result_and_the_call_completes_after_the_click() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let (mut c, page) = with_console(&f, NEW, json!({ "elicitation": { "url": {} } }));
    let arguments = write("a.md");
    let asked = c.call("write_file", arguments.clone());
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let request = &asked["inputRequests"]["approval"];
    let question = page.questions(1)[0].clone();
    assert_eq!((request["method"].as_str(), request["params"]["mode"].as_str()), (Some("elicitation/create"), Some("url")), "{request}");
    assert_eq!(request["params"]["url"], format!("http://127.0.0.1:{}/?question={}", page.port, question["id"]));
    assert_eq!(request["params"]["message"], "Warden asks you about an access by this agent's tool; answer at Warden's console.");
    assert_eq!(question["path"], "/portfolio/drafts/a.md");
    let state = asked["requestState"].clone();
    // The client took the person to the page and calls again: the call waits for the click.
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": arguments, "requestState": state, "inputResponses": { "approval": { "action": "accept" } } }));
    assert!(c.response_within(id, Duration::from_millis(300)).is_none(), "the call finished before the person answered");
    page.answer(&question, "once");
    let done = c.response_within(id, Duration::from_secs(20)).expect("the call ended");
    assert_eq!(ok(&done["result"])["result"], "Written 1 characters to /portfolio/drafts/a.md");
    assert_eq!(audit_lines(&f)[0]["via"], "console");
    // Answered once, the state is spent; a denial at the console refuses the next call.
    let again = c.request("tools/call", json!({ "name": "write_file", "arguments": write("a.md"), "requestState": state, "inputResponses": { "approval": { "action": "accept" } } }));
    assert_eq!(refused(&again), "this call's approval state is not valid; call the tool again without it");
    let asked = c.call("write_file", write("b.md"));
    page.answer(&page.questions(1)[0], "deny");
    let denied = c.request("tools/call", json!({ "name": "write_file", "arguments": write("b.md"), "requestState": asked["requestState"], "inputResponses": { "approval": { "action": "accept" } } }));
    assert!(refused(&denied).starts_with("Cannot write to '/portfolio/drafts/b.md'"), "{denied}");
    assert!(!f.path("portfolio/drafts/b.md").exists());
}

#[test]
fn a_command_a_rule_asks_about_is_answered_at_the_console_in_both_revisions() {
    for revision in [OLD, NEW] {
        let f = Fixture::new();
        f.file(
            "policy.yaml",
            "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  shell:\n    rules:\n      \
             - { prefix: [touch], decision: ask, justification: \"it writes a file\" }\n",
        );
        let (mut c, page) = with_console(&f, revision, json!({}));
        let id = c.start_request("tools/call", json!({ "name": "run_command", "arguments": { "command": "touch a.md" } }));
        let question = &page.questions(1)[0];
        let shown: Vec<&str> = ["tool", "access", "path", "reason"].iter().map(|k| question[k].as_str().unwrap()).collect();
        assert_eq!(shown, ["run_command", "run", "touch a.md", "the rule 'touch ...' asks: it writes a file"], "{revision}");
        page.answer(question, "once");
        let response = c.response_within(id, Duration::from_secs(20)).expect("the call ended");
        assert_eq!(ok(&response["result"])["exit_code"], 0, "{revision}");
        assert!(f.path("portfolio/a.md").exists());
        let id = c.start_request("tools/call", json!({ "name": "run_command", "arguments": { "command": "touch b.md" } }));
        page.answer(&page.questions(1)[0], "deny");
        let response = c.response_within(id, Duration::from_secs(20)).expect("the call ended");
        assert_eq!(refused(&response["result"]), "Cannot run 'touch b.md': the user declined it.");
        assert!(!f.path("portfolio/b.md").exists());
        let via: Vec<Value> = audit_lines(&f).iter().map(|l| l["via"].clone()).collect();
        assert_eq!(via, [json!("console"), json!("console")], "{revision}");
    }
}
