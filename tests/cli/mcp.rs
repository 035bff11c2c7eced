//! `warden mcp` over stdio, as an MCP client sees it, in both protocol
//! revisions: the handshake or discovery, the tool list, each file tool,
//! each kind of refusal, and bad input that leaves the server serving. The
//! tests that mean the same over streamable HTTP run again over it
//! (`over_http`, at the end).

mod approvals;
mod console;
mod rules;
mod console_browser;
mod standalone_console;
mod transport;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{json, Value};

use super::Fixture;

/// A client of one `warden mcp` process.
struct Client {
    child: Child,
    /// `None` once closed, as a client that goes away closes it (and over HTTP).
    stdin: Option<ChildStdin>,
    /// Over HTTP: how to POST.
    http: Option<transport::HttpLink>,
    /// The server's stdout, line by line, from a thread of its own.
    lines: Receiver<String>,
    next_id: u64,
    /// `Some` for 2026-07-28: the `_meta` every request carries.
    meta: Option<Value>,
}

const NEW: &str = "2026-07-28";

/// A child's output, line by line, from a thread of its own.
fn lines_of(output: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (send, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                return;
            }
        }
    });
    lines
}

/// What the server wrote on stderr so far.
fn server_log(f: &Fixture) -> String {
    std::fs::read_to_string(f.path("mcp-stderr.log")).unwrap_or_default()
}

fn guest(name: &str) -> String {
    super::repo().join("guests/out").join(name).canonicalize().unwrap().to_str().unwrap().to_owned()
}

/// The fixture's policy with `extra` added at the top level.
fn policy_with(f: &Fixture, extra: &str) {
    f.file("policy.yaml", &format!("{}{extra}", super::POLICY));
}
const OLD: &str = "2025-11-25";

impl Client {
    fn start(f: &Fixture, extra: &[&str]) -> Client {
        let policy = f.path("policy.yaml");
        let mut command = Command::new(env!("CARGO_BIN_EXE_warden"));
        command.args(["mcp", "--policy", policy.to_str().unwrap()]).args(extra).env("WARDEN_CACHE_DIR", f.path("cache"));
        if transport::OVER_HTTP.with(|h| h.get()) {
            let (send, lines) = std::sync::mpsc::channel();
            let (child, link) = transport::HttpLink::start(command, &f.path("mcp-stderr.log"), send);
            return Client { child, stdin: None, http: Some(link), lines, next_id: 1, meta: None };
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(f.path("mcp-stderr.log")).unwrap())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = lines_of(child.stdout.take().unwrap());
        Client { child, stdin: Some(stdin), http: None, lines, next_id: 1, meta: None }
    }

    /// Starts a server and opens a session in `revision`.
    fn connect(f: &Fixture, revision: &str, extra: &[&str]) -> (Client, Value) {
        Client::connect_with(f, revision, extra, json!({}))
    }

    /// As [`Client::connect`], declaring `capabilities`.
    fn connect_with(f: &Fixture, revision: &str, extra: &[&str], capabilities: Value) -> (Client, Value) {
        let mut c = Client::start(f, extra);
        if let Some(http) = &mut c.http {
            http.protocol = revision.to_owned();
        }
        let info = if revision == NEW {
            c.meta = Some(json!({
                "io.modelcontextprotocol/protocolVersion": NEW,
                "io.modelcontextprotocol/clientInfo": { "name": "warden-tests", "version": "1" },
                "io.modelcontextprotocol/clientCapabilities": capabilities,
            }));
            c.request("server/discover", json!({}))
        } else {
            let info = c.request(
                "initialize",
                json!({ "protocolVersion": OLD, "capabilities": capabilities, "clientInfo": { "name": "warden-tests", "version": "1" } }),
            );
            c.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string());
            info
        };
        (c, info)
    }

    fn send(&mut self, line: &str) {
        if let Some(http) = &self.http {
            return http.post(line);
        }
        let stdin = self.stdin.as_mut().expect("the client is still connected");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message; a test fails, rather than hangs, when none comes.
    fn read(&mut self) -> Value {
        self.read_within(Duration::from_secs(60)).expect("no message from the server in 60 s")
    }

    fn read_within(&mut self, wait: Duration) -> Option<Value> {
        match self.lines.recv_timeout(wait) {
            Ok(line) => Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"))),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
        }
    }

    /// Reads until the response to request `id` comes, within `wait`.
    fn response_within(&mut self, id: u64, wait: Duration) -> Option<Value> {
        let until = std::time::Instant::now() + wait;
        while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
            match self.read_within(left) {
                Some(message) if message["id"] == json!(id) => return Some(message),
                Some(_) => {}
                None => return None,
            }
        }
        None
    }

    /// Reads until a message with `method` comes, within `wait`.
    fn wait_for(&mut self, method: &str, wait: Duration) -> Option<Value> {
        let until = std::time::Instant::now() + wait;
        while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
            match self.read_within(left) {
                Some(message) if message["method"] == method => return Some(message),
                Some(_) => {}
                None => return None,
            }
        }
        None
    }

    /// Sends a request and returns its whole response (result or error).
    fn exchange(&mut self, method: &str, mut params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        if let Some(meta) = &self.meta {
            params["_meta"] = meta.clone();
        }
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string());
        loop {
            let message = self.read();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.exchange(method, params);
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// Sends a request without waiting; returns its id.
    fn start_request(&mut self, method: &str, mut params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        if let Some(meta) = &self.meta {
            params["_meta"] = meta.clone();
        }
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string());
        id
    }

    /// Cancels request `id`: over stateless HTTP by closing its connection,
    /// else by `notifications/cancelled`.
    fn cancel(&mut self, id: u64) {
        if let Some(http) = self.http.as_ref().filter(|_| self.meta.is_some()) {
            return http.abandon(id);
        }
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": id, "reason": "test" } }).to_string());
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({ "name": tool, "arguments": arguments }))
    }

    /// A call during which the server may ask the person
    /// (`elicitation/create`, 2025-11-25): each form is answered with the next of
    /// `answers` and kept. Returns the call's result and the forms.
    fn call_answering(&mut self, tool: &str, arguments: Value, answers: &[Value]) -> (Value, Vec<Value>) {
        let id = self.start_request("tools/call", json!({ "name": tool, "arguments": arguments }));
        let mut forms = Vec::new();
        loop {
            let message = self.read();
            if message["method"] == "elicitation/create" {
                let answer = answers.get(forms.len()).cloned().unwrap_or(json!({ "action": "cancel" }));
                forms.push(message["params"].clone());
                self.send(&json!({ "jsonrpc": "2.0", "id": message["id"], "result": answer }).to_string());
            } else if message["id"] == json!(id) {
                return (message["result"].clone(), forms);
            }
        }
    }
}

/// An accepted form: `decision` (once, session, deny) for `folder`.
fn accept(decision: &str, folder: &str) -> Value {
    json!({ "action": "accept", "content": { "decision": decision, "folder": folder } })
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A successful call's structured result; its text mirror says the same.
fn ok(result: &Value) -> &Value {
    assert_eq!(result["isError"], false, "{result}");
    let mirror: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(mirror, result["structuredContent"]);
    &result["structuredContent"]
}

/// A refused call's text: the same words the CLI prints.
fn refused(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap()
}

#[test]
fn both_revisions_start_and_list_the_file_tools_with_honest_hints() {
    let f = Fixture::new();
    for revision in [OLD, NEW] {
        let (mut c, info) = Client::connect(&f, revision, &[]);
        if revision == OLD {
            assert_eq!((info["protocolVersion"].as_str(), info["serverInfo"]["name"].as_str()), (Some(OLD), Some("warden")));
        } else {
            assert!(info["supportedVersions"].as_array().unwrap().contains(&json!(NEW)), "{info}");
        }
        assert_eq!(
            info["instructions"],
            "Warden sandbox. Paths are virtual: '/mount/path'. Readable paths: /portfolio, /pipeline. Writable paths: /portfolio."
        );
        let tools = c.request("tools/list", json!({}))["tools"].as_array().unwrap().clone();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["read_file", "write_file", "edit_file", "list_files", "delete_file", "move_file", "copy_file"]);
        for tool in &tools {
            let hints = &tool["annotations"];
            let reads_only = matches!(tool["name"].as_str(), Some("read_file" | "list_files"));
            assert_eq!((hints["readOnlyHint"] == true, hints["openWorldHint"] == false), (reads_only, true), "{tool}");
            assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
            assert_eq!(tool["inputSchema"]["additionalProperties"], false, "{tool}");
        }
        let read = &tools[0]["inputSchema"];
        assert_eq!((read["required"].clone(), read["properties"]["max_chars"]["default"].clone()), (json!(["path"]), json!(20000)));
    }
}

#[test]
fn each_file_tool_does_its_job_with_the_reference_result_shapes() {
    let f = Fixture::new();
    for revision in [OLD, NEW] {
        let (mut c, _) = Client::connect(&f, revision, &[]);
        let read = c.call("read_file", json!({ "path": "/portfolio/notes.md", "offset": 2, "max_chars": 3 }));
        assert_eq!(ok(&read), &json!({ "content": "llo", "truncated": true, "total_chars": 11, "offset": 2, "chars_read": 3 }));
        let written = c.call("write_file", json!({ "path": "/portfolio/new.md", "content": "héllo" }));
        assert_eq!(ok(&written), &json!({ "result": "Written 5 characters to /portfolio/new.md" }));
        let edited = c.call("edit_file", json!({ "path": "/portfolio/new.md", "old_text": "é", "new_text": "e" }));
        assert_eq!(ok(&edited), &json!({ "result": "Edited /portfolio/new.md: replaced 1 chars with 1 chars" }));
        assert_eq!(std::fs::read_to_string(f.path("portfolio/new.md")).unwrap(), "hello");
        let copied = c.call("copy_file", json!({ "source": "/pipeline/status.md", "destination": "/portfolio/c/status.md" }));
        assert_eq!(ok(&copied), &json!({ "result": "Copied /pipeline/status.md to /portfolio/c/status.md" }));
        let moved = c.call("move_file", json!({ "source": "/portfolio/c/status.md", "destination": "/portfolio/s.md" }));
        assert_eq!(ok(&moved), &json!({ "result": "Moved /portfolio/c/status.md to /portfolio/s.md" }));
        let listed = c.call("list_files", json!({}));
        assert_eq!(
            ok(&listed),
            &json!({ "result": ["/pipeline/status.md", "/portfolio/new.md", "/portfolio/notes.md", "/portfolio/reports/q3.md", "/portfolio/s.md"] })
        );
        let listed = c.call("list_files", json!({ "path": "/portfolio", "pattern": "*.md" }));
        assert_eq!(ok(&listed)["result"].as_array().unwrap().len(), 4);
        for path in ["/portfolio/s.md", "/portfolio/new.md"] {
            assert_eq!(ok(&c.call("delete_file", json!({ "path": path }))), &json!({ "result": format!("Deleted {path}") }));
        }
        assert!(!f.path("portfolio/s.md").exists() && !f.path("portfolio/new.md").exists());
    }
}

#[test]
fn refusals_are_tool_errors_in_the_sandboxs_words_and_the_server_goes_on() {
    let f = Fixture::new();
    let (mut c, _) = Client::connect(&f, OLD, &[]);
    let cases = [
        ("write_file", json!({ "path": "/pipeline/x.md", "content": "x" }), "Cannot write to '/pipeline/x.md': path is read-only.\nWritable paths: /portfolio"),
        (
            "read_file",
            json!({ "path": "/portfolio/../../outside/secret.md" }),
            "Cannot access '/portfolio/../../outside/secret.md': path is outside sandbox.\nReadable paths: /portfolio, /pipeline",
        ),
        ("read_file", json!({ "path": "/portfolio/notes.txt" }), "Cannot access '/portfolio/notes.txt': suffix '.txt' not allowed.\nAllowed suffixes: .md"),
        ("read_file", json!({ "path": "/portfolio/nope.md" }), "Cannot read '/portfolio/nope.md': no such file or folder."),
        ("read_file", json!({ "path": 5 }), "Invalid arguments for read_file: path: invalid type: integer `5`, expected a string"),
        ("read_file", json!({ "path": "/portfolio/notes.md", "offset": -1 }), "Invalid arguments for read_file: offset: invalid value: integer `-1`, expected usize"),
        ("write_file", json!({ "path": "/portfolio/a.md" }), "Invalid arguments for write_file: missing field `content`"),
        ("list_files", json!({ "pattern": "../*" }), "Invalid arguments for list_files: pattern: must not contain '..'"),
        ("edit_file", json!({ "path": "/portfolio/notes.md", "old_text": "zzz", "new_text": "y" }), "Cannot edit '/portfolio/notes.md': text to replace not found."),
    ];
    for (tool, arguments, text) in cases {
        assert_eq!(refused(&c.call(tool, arguments.clone())), text, "{tool} {arguments}");
    }
    // The escapes: a home path, a host path, /proc, a NUL, a symlink out, moves and copies out.
    std::os::unix::fs::symlink(f.path("outside/secret.md"), f.path("portfolio/link.md")).unwrap();
    let secret = f.path("outside/secret.md");
    let escapes = [
        ("read_file", json!({ "path": "~/.ssh/id_rsa.md" }), "Cannot access '~/.ssh/id_rsa.md': '~' paths are not available in this sandbox.\nReadable paths: /portfolio, /pipeline".to_owned()),
        ("read_file", json!({ "path": secret }), format!("Cannot access '{}': path is outside sandbox.\nReadable paths: /portfolio, /pipeline", secret.display())),
        ("read_file", json!({ "path": "/proc/self/environ" }), "Cannot access '/proc/self/environ': path is outside sandbox.\nReadable paths: /portfolio, /pipeline".to_owned()),
        ("read_file", json!({ "path": "/portfolio/notes.md\0.md" }), "Cannot access '/portfolio/notes.md\\0.md': path contains a NUL byte.\nReadable paths: /portfolio, /pipeline".to_owned()),
        ("read_file", json!({ "path": "/portfolio/link.md" }), "Cannot access '/portfolio/link.md': path is outside sandbox.\nReadable paths: /portfolio, /pipeline".to_owned()),
        ("copy_file", json!({ "source": "/portfolio/link.md", "destination": "/portfolio/copy.md" }), "Cannot access '/portfolio/link.md': path is outside sandbox.\nReadable paths: /portfolio, /pipeline".to_owned()),
        ("move_file", json!({ "source": "/portfolio/notes.md", "destination": "/pipeline/notes.md" }), "Cannot write to '/pipeline/notes.md': path is read-only.\nWritable paths: /portfolio".to_owned()),
        (
            "copy_file",
            json!({ "source": "/portfolio/notes.md", "destination": "/portfolio/../../outside/copy.md" }),
            "Cannot access '/portfolio/../../outside/copy.md': path is outside sandbox.\nReadable paths: /portfolio, /pipeline".to_owned(),
        ),
        ("list_files", json!({ "path": "/portfolio/link.md" }), "Cannot access '/portfolio/link.md': path is outside sandbox.\nReadable paths: /portfolio, /pipeline".to_owned()),
        ("delete_file", json!({ "path": "/pipeline/status.md" }), "Cannot write to '/pipeline/status.md': path is read-only.\nWritable paths: /portfolio".to_owned()),
    ];
    for (tool, arguments, text) in escapes {
        assert_eq!(refused(&c.call(tool, arguments.clone())), text, "{tool} {arguments}");
    }
    let unknown = c.exchange("tools/call", json!({ "name": "grant_access", "arguments": {} }));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(ok(&c.call("read_file", json!({ "path": "/portfolio/notes.md" })))["content"], "hello notes");
    assert!(!f.path("pipeline/x.md").exists() && !f.path("pipeline/notes.md").exists() && !f.path("outside/copy.md").exists());
    assert!(!f.path("portfolio/copy.md").exists() && f.path("pipeline/status.md").exists());
}

#[test]
fn malformed_messages_get_json_rpc_errors_and_the_server_goes_on() {
    let f = Fixture::new();
    let (mut c, _) = Client::connect(&f, OLD, &[]);
    c.send("{this is not json");
    assert_eq!(c.read(), json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": "Parse error: key must be a string at line 1 column 2" } }));
    c.send(r#"{"id": 41, "hello": "there"}"#);
    let e = c.read();
    assert_eq!((e["id"].clone(), e["error"]["code"].clone()), (json!(41), json!(-32600)), "{e}");
    // A malformed *response* (the client answering a request of the server's)
    // gets an error with no id: its id names a request of the server's, not the client's.
    for response in [r#"{"jsonrpc": "2.0", "id": 8, "error": "not an object"}"#, r#"{"jsonrpc": "2.0", "id": 9, "error": {"code": "x"}}"#] {
        c.send(response);
        let e = c.read();
        assert_eq!((e["id"].clone(), e["error"]["code"].clone()), (json!(null), json!(-32600)), "{response}: {e}");
    }
    // A 100 MB line is refused without being held in memory: the server's
    // peak resident size grows by less than a tenth of it.
    let peak_before = peak_resident_bytes(c.child.id());
    c.send(&format!(r#"{{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{{"name":"{}"}}}}"#, "a".repeat(100 << 20)));
    assert_eq!(c.read()["error"]["message"], "Invalid request: the message is longer than 4194304 bytes");
    let growth = peak_resident_bytes(c.child.id()) - peak_before;
    assert!(growth < 10 << 20, "the server's peak resident size grew by {growth} bytes");
    assert_eq!(ok(&c.call("read_file", json!({ "path": "/portfolio/notes.md" })))["content"], "hello notes");
}

/// `VmHWM` of a process: the most memory it has held resident.
fn peak_resident_bytes(pid: u32) -> i64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<i64>().unwrap() * 1024
}

#[test]
fn a_worker_gets_its_narrower_view_and_the_policy_can_turn_file_tools_off() {
    let f = Fixture::new();
    let (mut c, info) = Client::connect(&f, NEW, &["--worker", "analyzer"]);
    assert_eq!(
        info["instructions"],
        "Warden sandbox. Paths are virtual: '/mount/path'. Readable paths: /portfolio/reports. Writable paths: none."
    );
    assert_eq!(
        refused(&c.call("read_file", json!({ "path": "/portfolio/notes.md" }))),
        "Cannot access '/portfolio/notes.md': path is outside sandbox.\nReadable paths: /portfolio/reports"
    );
    f.file("policy.yaml", &format!("{}mcp: {{ file_tools: false }}\n", super::POLICY));
    let (mut c, _) = Client::connect(&f, OLD, &[]);
    assert_eq!(c.request("tools/list", json!({}))["tools"], json!([]));
    assert_eq!(c.exchange("tools/call", json!({ "name": "read_file", "arguments": { "path": "/portfolio/notes.md" } }))["error"]["code"], -32602);
}

#[test]
fn answers_in_advance_lift_an_approval_rule_and_nothing_else_does() {
    let f = Fixture::new();
    f.file(
        "policy.yaml",
        "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw, write_approval: true }\n",
    );
    let (mut c, _) = Client::connect(&f, OLD, &[]);
    assert_eq!(
        refused(&c.call("write_file", json!({ "path": "/portfolio/a.md", "content": "a" }))),
        "Cannot write to '/portfolio/a.md': access needs the user's approval, which may be requested.\nWritable paths: none"
    );
    let audit = f.path("audit.jsonl");
    let (mut c, _) = Client::connect(&f, OLD, &["--approve", "write:/portfolio", "--audit", audit.to_str().unwrap()]);
    assert_eq!(ok(&c.call("write_file", json!({ "path": "/portfolio/a.md", "content": "a" })))["result"], "Written 1 characters to /portfolio/a.md");
    let line: Value = serde_json::from_str(std::fs::read_to_string(&audit).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!((line["tool"].as_str(), line["decision"].as_str(), line["grant"].as_str()), (Some("write_file"), Some("allow"), Some("/portfolio")));
}

#[test]
fn an_unusable_worker_stops_the_server_before_it_serves() {
    let f = Fixture::new();
    let policy = f.path("policy.yaml");
    let r = super::warden(&["mcp", "--policy", policy.to_str().unwrap(), "--worker", "ghost"], "");
    assert_eq!((r.status, r.stdout.as_str()), (2, ""));
    assert_eq!(r.stderr, "unknown worker 'ghost'; the policy defines: analyzer\n");
}

#[test]
fn component_tools_are_named_key_tool_with_their_schemas_confined_to_their_worker() {
    let f = Fixture::new();
    policy_with(&f, &format!("tools:\n  textkit: {{ component: {}, worker: analyzer }}\n", guest("textkit.wasm")));
    for revision in [OLD, NEW] {
        let (mut c, _) = Client::connect(&f, revision, &[]);
        let tools = c.request("tools/list", json!({}))["tools"].as_array().unwrap().clone();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).skip(7).collect();
        assert_eq!(names, ["textkit__grep", "textkit__count", "textkit__report"]);
        let grep = &tools[7];
        assert_eq!(grep["inputSchema"]["required"], json!(["pattern", "path"]));
        // The analyzer worker cannot write: the hints say so.
        let hints = &grep["annotations"];
        assert_eq!((hints["readOnlyHint"].clone(), hints["destructiveHint"].clone(), hints["openWorldHint"].clone()), (json!(true), json!(false), json!(false)));
        let found = c.call("textkit__grep", json!({ "pattern": "q3", "path": "/portfolio/reports" }));
        assert_eq!((found["isError"].clone(), found["content"][0]["text"].clone()), (json!(false), json!("/portfolio/reports/q3.md:1: q3\n1 match\n")));
        assert_eq!(
            refused(&c.call("textkit__count", json!({ "path": "/portfolio/notes.md" }))),
            "Cannot access '/portfolio/notes.md': path is outside sandbox.\nReadable paths: /portfolio/reports"
        );
        // Arguments are checked against the tool's schema before it runs, naming the field.
        assert_eq!(refused(&c.call("textkit__count", json!({}))), "Invalid arguments for textkit__count: \"path\" is a required property");
        assert_eq!(
            refused(&c.call("textkit__grep", json!({ "pattern": 42, "path": "/portfolio/reports" }))),
            "Invalid arguments for textkit__grep: pattern: 42 is not of type \"string\""
        );
        assert_eq!(
            refused(&c.call("textkit__grep", json!({ "pattern": "q3", "path": "/portfolio/reports", "max_matches": 0 }))),
            "Invalid arguments for textkit__grep: max_matches: 0 is less than the minimum of 1"
        );
    }
}

#[test]
fn limits_and_traps_are_tool_errors_and_the_server_goes_on() {
    let f = Fixture::new();
    let stuck = guest("hostile/stuck.wasm");
    policy_with(
        &f,
        &format!("tools:\n  stuck: {{ component: {stuck}, limits: {{ timeout: 300ms, memory: 64MiB }} }}\n  tight: {{ component: {stuck}, limits: {{ fuel: 1000000, output: 1KiB }} }}\n"),
    );
    let (mut c, _) = Client::connect(&f, NEW, &[]);
    assert_eq!(refused(&c.call("stuck__spin", json!({}))), "warden: the tool ran past its time limit of 300ms");
    assert_eq!(refused(&c.call("tight__spin", json!({}))), "warden: the tool ran out of fuel (limit: 1000000)");
    assert_eq!(refused(&c.call("tight__chatter", json!({}))), "warden: the tool wrote more than the output limit of 1024 bytes to stdout");
    assert_eq!(refused(&c.call("stuck__hog", json!({}))), "warden: the tool tried to use more than the memory limit of 67108864 bytes");
    assert_eq!(refused(&c.call("stuck__trap", json!({}))), "warden: the tool trapped: wasm trap: wasm `unreachable` instruction executed");
    assert_eq!(ok(&c.call("read_file", json!({ "path": "/portfolio/notes.md" })))["content"], "hello notes");
}

#[test]
fn a_digest_that_does_not_match_refuses_that_component_and_only_it() {
    let f = Fixture::new();
    let zeros = "0".repeat(64);
    let good = blake3::hash(&std::fs::read(guest("textkit.wasm")).unwrap()).to_hex().to_string();
    policy_with(
        &f,
        &format!(
            "tools:\n  bad: {{ component: {t}, digest: \"blake3:{zeros}\" }}\n  good: {{ component: {t}, digest: \"blake3:{good}\" }}\n",
            t = guest("textkit.wasm")
        ),
    );
    let (mut c, _) = Client::connect(&f, OLD, &[]);
    let tools = c.request("tools/list", json!({}))["tools"].as_array().unwrap().clone();
    assert!(tools.iter().all(|t| !t["name"].as_str().unwrap().starts_with("bad__")));
    assert!(tools.iter().any(|t| t["name"] == "good__grep"));
    assert!(
        server_log(&f).contains(&format!("warden: tools.bad: refused: {} has digest blake3:{good}, and the policy says blake3:{zeros}", guest("textkit.wasm"))),
        "{}",
        server_log(&f)
    );
    let policy = f.path("policy.yaml");
    let r = super::warden(&["check", policy.to_str().unwrap()], "");
    assert_eq!(
        (r.status, r.stderr.trim_end()),
        (2, format!("invalid policy: {}: tools.bad: refused: {} has digest blake3:{good}, and the policy says blake3:{zeros}", policy.display(), guest("textkit.wasm")).as_str())
    );
}

#[test]
fn check_lists_what_each_component_offers_under_which_worker_and_limits() {
    let f = Fixture::new();
    let good = blake3::hash(&std::fs::read(guest("textkit.wasm")).unwrap()).to_hex().to_string();
    policy_with(
        &f,
        &format!(
            "tools:\n  textkit: {{ component: {}, worker: analyzer, digest: \"blake3:{good}\", limits: {{ timeout: 5s, memory: 32MiB }} }}\n  notes: {{ component: {} }}\n",
            guest("textkit.wasm"),
            guest("notes_rs.wasm")
        ),
    );
    let r = super::warden(&["check", f.path("policy.yaml").to_str().unwrap()], "");
    assert_eq!(r.status, 0, "{}", r.stderr);
    let listed = &r.stdout[r.stdout.find("tools (warden mcp):\n").expect(&r.stdout)..];
    assert_eq!(
        listed,
        format!(
            "tools (warden mcp):\n  textkit  {}  worker analyzer  digest blake3:{good} (matches)  limits timeout 5s, memory 32MiB\n\
             \x20   offers textkit__grep: Find lines containing a fixed string in a file, or in every file below a folder.\n\
             \x20   offers textkit__count: Count the lines, words and bytes of a file.\n\
             \x20   offers textkit__report: Write a Markdown report of line and word counts of every file below a folder.\n\
             \x20 notes  {}  worker (program)\n\
             \x20   offers notes__search: Find the lines containing a text (case-insensitive) in a file or a folder of files.\n\
             \x20   offers notes__summarize: Write a Markdown summary (lines, words, first heading of each file) of a folder to a file.\n",
            guest("textkit.wasm"),
            guest("notes_rs.wasm")
        )
    );
}

#[test]
fn a_component_whose_input_schema_is_not_an_object_stops_the_server_and_check() {
    // Some clients drop a server's whole tool list over one such schema.
    let f = Fixture::new();
    policy_with(&f, &format!("tools:\n  bad: {{ component: {} }}\n", guest("hostile/schemas.wasm")));
    let why = "tools.bad: the tool 'text' has an input schema of type \"string\"; MCP needs `\"type\": \"object\"` (some clients drop the whole tool list otherwise)";
    let policy = f.path("policy.yaml");
    let r = super::warden(&["check", policy.to_str().unwrap()], "");
    assert_eq!((r.status, r.stderr.as_str()), (2, format!("invalid policy: {}: {why}\n", policy.display()).as_str()));
    let r = super::warden(&["mcp", "--policy", policy.to_str().unwrap()], "");
    assert_eq!((r.status, r.stdout.as_str()), (2, ""));
    assert!(r.stderr.ends_with(&format!("{why}\n")), "{}", r.stderr);
}

#[test]
fn a_tool_name_model_apis_refuse_stops_the_server_before_it_serves() {
    let f = Fixture::new();
    let key = "k".repeat(60);
    policy_with(&f, &format!("tools:\n  {key}: {{ component: {} }}\n", guest("textkit.wasm")));
    let policy = f.path("policy.yaml");
    let r = super::warden(&["mcp", "--policy", policy.to_str().unwrap()], "");
    assert_eq!((r.status, r.stdout.as_str()), (2, ""));
    assert!(
        r.stderr.contains(&format!("tools.{key}: the tool 'grep' would be offered as '{key}__grep', which model APIs refuse")),
        "{}",
        r.stderr
    );
    // `warden check` loads the components too, and stops at the same name.
    let r = super::warden(&["check", policy.to_str().unwrap()], "");
    assert_eq!(r.status, 2, "{}", r.stdout);
    assert!(r.stderr.contains(&format!("tools.{key}: the tool 'grep' would be offered as '{key}__grep', which model APIs refuse")), "{}", r.stderr);
    f.file("policy.yaml", &format!("{}tools:\n  a__b: {{ component: {} }}\n", super::POLICY, guest("textkit.wasm")));
    let r = super::warden(&["check", policy.to_str().unwrap()], "");
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("tools.a__b: 'a__b' is not a usable key"), "{}", r.stderr);
}

#[test]
fn run_command_runs_in_the_os_sandbox_under_the_policys_time_limit() {
    let f = Fixture::new();
    f.file("policy.yaml", &super::POLICY.replace("sandbox:\n", "sandbox:\n  shell: { max_output: 1KiB }\n  limits: { timeout: 5s }\n"));
    let (mut c, _) = Client::connect(&f, OLD, &[]);
    let tools = c.request("tools/list", json!({}))["tools"].as_array().unwrap().clone();
    let run = tools.iter().find(|t| t["name"] == "run_command").expect("run_command is offered");
    assert_eq!((run["annotations"]["destructiveHint"].clone(), run["annotations"]["openWorldHint"].clone()), (json!(true), json!(false)));
    let done = c.call("run_command", json!({ "command": "echo hi > made.md; cat made.md; ls /root; exit 3" }));
    let result = ok(&done);
    assert_eq!((result["stdout"].clone(), result["exit_code"].clone(), result["sandboxed"].clone()), (json!("hi\n"), json!(3), json!(true)));
    assert_eq!(result["sandbox"], "bwrap", "{result}");
    assert!(result["stderr"].as_str().unwrap().starts_with("ls: cannot access '/root': No such file or directory"), "{result}");
    assert_eq!(std::fs::read_to_string(f.path("portfolio/made.md")).unwrap(), "hi\n");
    let slow = c.call("run_command", json!({ "command": "sleep 30", "timeout_s": 0.3 }));
    assert_eq!((slow["isError"].clone(), slow["structuredContent"]["exit_code"].clone()), (json!(true), json!(124)));
    // Output past the cap is cut, marked, and an error: the model must not take it for the whole.
    let flood = c.call("run_command", json!({ "command": "yes flood | head -c 100000" }));
    assert_eq!((flood["isError"].clone(), flood["structuredContent"]["truncated"].clone()), (json!(true), json!(true)));
    assert!(flood["structuredContent"]["stdout"].as_str().unwrap().ends_with("\n[warden: output truncated after 1024 bytes]\n"), "{flood}");
    let pwd = c.call("run_command", json!({ "command": "pwd", "cwd": "/pipeline" }));
    assert_eq!(ok(&pwd)["stdout"], format!("{}\n", f.dir.path().canonicalize().unwrap().join("pipeline").display()));
    assert_eq!(refused(&c.call("run_command", json!({ "command": "true", "timeout_s": -1 }))), "Invalid arguments for run_command: timeout_s: -1 is not a positive number of seconds");
    // Without `shell:` there is no run_command.
    f.file("policy.yaml", super::POLICY);
    let (mut c, _) = Client::connect(&f, OLD, &[]);
    assert!(c.request("tools/list", json!({}))["tools"].as_array().unwrap().iter().all(|t| t["name"] != "run_command"));
}

#[test]
fn run_command_uses_one_container_for_the_clients_life() {
    let f = Fixture::new();
    let container = "  shell:\n    backend: container\n    container: { image: \"localhost/warden-busybox:1\", engine: podman }\n";
    f.file("policy.yaml", &super::POLICY.replace("sandbox:\n", &format!("sandbox:\n{container}")));
    super::containers::give_to_user(&f, &["portfolio", "pipeline"]);
    let (mut c, _) = Client::connect(&f, OLD, &[]);
    let name = format!("warden-mcp-c0-{}", c.child.id());
    let first = c.call("run_command", json!({ "command": "echo kept > /tmp/state; pwd; echo x > /pipeline/x.md" }));
    let result = ok(&first);
    assert_eq!((result["stdout"].clone(), result["exit_code"].clone(), result["sandboxed"].clone()), (json!("/portfolio\n"), json!(1), json!(true)));
    assert_eq!(result["sandbox"], "container", "{result}");
    assert_eq!(result["stderr"], "/bin/sh: can't create /pipeline/x.md: Read-only file system\n\nNote: writable paths in this sandbox are /portfolio\n");
    assert_eq!(ok(&c.call("run_command", json!({ "command": "cat /tmp/state" })))["stdout"], "kept\n");
    assert_eq!(ok(&c.call("run_command", json!({ "command": "pwd", "cwd": "/pipeline" })))["stdout"], "/pipeline\n");
    let exists = |name: &str| Command::new("podman").args(["container", "exists", name]).status().unwrap().success();
    assert!(exists(&name), "{}", server_log(&f));
    // The client goes away: the server ends, and the client's container with it.
    c.stdin = None;
    let _ = c.child.wait();
    assert!(!exists(&name), "left behind: {}", server_log(&f));
}

const APPROVAL_POLICY: &str = "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw, write_approval: true }\n";

fn audit_lines(f: &Fixture) -> Vec<Value> {
    std::fs::read_to_string(f.path("audit.jsonl")).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_2025_client_is_asked_by_elicitation_once_session_deny_and_cancel() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let audit = f.path("audit.jsonl");
    let (mut c, _) = Client::connect_with(&f, OLD, &["--audit", audit.to_str().unwrap()], json!({ "elicitation": { "form": {} } }));
    let write = |name: &str| json!({ "path": format!("/portfolio/drafts/{name}"), "content": "x" });
    // Once: this write only.
    let (result, forms) = c.call_answering("write_file", write("a.md"), &[accept("once", "/portfolio/drafts")]);
    assert_eq!(ok(&result)["result"], "Written 1 characters to /portfolio/drafts/a.md");
    assert_eq!(forms.len(), 1);
    let message = forms[0]["message"].as_str().unwrap();
    assert!(message.starts_with("write_file asks to write /portfolio/drafts/a.md (host path "), "{message}");
    let schema = &forms[0]["requestedSchema"]["properties"];
    let decisions: Vec<(Value, Value)> =
        schema["decision"]["oneOf"].as_array().unwrap().iter().map(|o| (o["const"].clone(), o["title"].clone())).collect();
    assert_eq!(decisions, [(json!("once"), json!("Allow once")), (json!("session"), json!("Allow for this session")), (json!("deny"), json!("Deny"))]);
    assert_eq!((schema["decision"]["default"].clone(), schema["folder"]["default"].clone()), (json!("deny"), json!("/portfolio/drafts")));
    assert_eq!(schema["folder"]["enum"], json!(["/portfolio/drafts", "/portfolio"]));
    // Deny and cancel keep today's texts; nothing is written.
    let (result, _) = c.call_answering("write_file", write("b.md"), &[accept("deny", "/portfolio/drafts")]);
    assert_eq!(refused(&result), "Cannot write to '/portfolio/drafts/b.md': the user declined access.\nWritable paths: none");
    let (result, _) = c.call_answering("write_file", write("b.md"), &[json!({ "action": "decline" })]);
    assert_eq!(refused(&result), "Cannot write to '/portfolio/drafts/b.md': the user declined access.\nWritable paths: none");
    let (result, _) = c.call_answering("write_file", write("b.md"), &[json!({ "action": "cancel" })]);
    assert_eq!(refused(&result), "Cannot write to '/portfolio/drafts/b.md': access needs the user's approval, which may be requested.\nWritable paths: none");
    assert!(!f.path("portfolio/drafts/b.md").exists());
    // For the session, wider: later writes below it ask no more.
    let (result, forms) = c.call_answering("write_file", write("c.md"), &[accept("session", "/portfolio")]);
    assert_eq!((ok(&result)["result"].as_str(), forms.len()), (Some("Written 1 characters to /portfolio/drafts/c.md"), 1));
    let (result, forms) = c.call_answering("write_file", json!({ "path": "/portfolio/d.md", "content": "x" }), &[]);
    assert_eq!((result["isError"].clone(), forms.len()), (json!(false), 0));
    let lines = audit_lines(&f);
    let decisions: Vec<(&str, Option<&str>)> = lines.iter().map(|l| (l["decision"].as_str().unwrap(), l["scope"].as_str())).collect();
    assert_eq!(decisions, [("allow", Some("once")), ("deny", None), ("deny", None), ("unanswered", None), ("allow", Some("session"))]);
    assert!(lines.iter().all(|l| l["tool"] == "write_file" && l["client"] == "warden-tests"), "{lines:?}");
}

#[test]
fn a_component_asks_through_the_client_and_its_session_grant_serves_the_later_calls() {
    let f = Fixture::new();
    f.file("policy.yaml", &format!("{APPROVAL_POLICY}tools:\n  textkit: {{ component: {} }}\n", guest("textkit.wasm")));
    let audit = f.path("audit.jsonl");
    let (mut c, _) = Client::connect_with(&f, OLD, &["--audit", audit.to_str().unwrap()], json!({ "elicitation": { "form": {} } }));
    let report = json!({ "source": "/portfolio", "output": "/portfolio/report.md" });
    let (result, forms) = c.call_answering("textkit__report", report, &[accept("session", "/portfolio")]);
    assert_eq!((result["isError"].clone(), forms.len()), (json!(false), 1), "{result}");
    let message = forms[0]["message"].as_str().unwrap();
    assert!(message.starts_with("textkit__report asks to write /portfolio/report.md (host path "), "{message}");
    assert!(std::fs::read_to_string(f.path("portfolio/report.md")).unwrap().contains("notes.md"));
    // The grant came back from the component's call to the client's session.
    let (result, forms) = c.call_answering("write_file", json!({ "path": "/portfolio/after.md", "content": "x" }), &[]);
    assert_eq!((ok(&result)["result"].as_str(), forms.len()), (Some("Written 1 characters to /portfolio/after.md"), 0));
    let lines = audit_lines(&f);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!((lines[0]["tool"].as_str(), lines[0]["decision"].as_str(), lines[0]["client"].as_str()), (Some("textkit__report"), Some("allow"), Some("warden-tests")));
}

#[test]
fn a_read_approval_mount_and_a_dynamic_folder_are_asked_through_the_client_too() {
    let f = Fixture::new();
    f.file("extra/reports/q4.md", "q4");
    f.file("extra/old.md", "old");
    f.file(
        "policy.yaml",
        "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n    pipeline: { root: ./pipeline, read_approval: true }\n  dynamic: { within: [./extra] }\n",
    );
    let audit = f.path("audit.jsonl");
    let (mut c, _) = Client::connect_with(&f, OLD, &["--audit", audit.to_str().unwrap()], json!({ "elicitation": { "form": {} } }));
    // A read of a read_approval mount: once, then asked again and denied.
    let status = json!({ "path": "/pipeline/status.md" });
    let (result, forms) = c.call_answering("read_file", status.clone(), &[accept("once", "/pipeline")]);
    assert_eq!((ok(&result)["content"].as_str(), forms.len()), (Some("ok"), 1));
    let message = forms[0]["message"].as_str().unwrap();
    assert!(message.starts_with("read_file asks to read /pipeline/status.md (host path "), "{message}");
    let (result, forms) = c.call_answering("read_file", status, &[accept("deny", "/pipeline")]);
    assert_eq!((forms.len(), refused(&result)), (1, "Cannot read '/pipeline/status.md': the user declined access.\nReadable paths: /portfolio"));
    // A file outside every mount, within the dynamic ceiling: its folder or wider, up to the ceiling.
    let extra = f.path("extra").canonicalize().unwrap();
    let q4 = extra.join("reports/q4.md");
    let (result, forms) = c.call_answering("read_file", json!({ "path": q4 }), &[accept("session", extra.to_str().unwrap())]);
    assert_eq!((ok(&result)["content"].as_str(), forms.len()), (Some("q4"), 1), "{forms:?}");
    let schema = &forms[0]["requestedSchema"]["properties"];
    assert_eq!(schema["folder"]["enum"], json!([extra.join("reports"), extra]));
    // The session grant covers the ceiling for reading; writing is asked apart.
    let (result, forms) = c.call_answering("read_file", json!({ "path": extra.join("old.md") }), &[]);
    assert_eq!((ok(&result)["content"].as_str(), forms.len()), (Some("old"), 0));
    let new = extra.join("new.md");
    let (result, forms) = c.call_answering("write_file", json!({ "path": new, "content": "x" }), &[accept("deny", extra.to_str().unwrap())]);
    let declined = format!("Cannot write to '{}': the user declined access.\nWritable paths: /portfolio", new.display());
    assert_eq!((forms.len(), refused(&result)), (1, declined.as_str()));
    assert!(!new.exists());
    // Outside the ceiling nothing is asked.
    let secret = f.path("outside/secret.md");
    let (result, forms) = c.call_answering("read_file", json!({ "path": secret }), &[accept("session", "/")]);
    let outside = format!("Cannot access '{}': path is outside sandbox.\nReadable paths: /portfolio, {}", secret.display(), extra.display());
    assert_eq!((forms.len(), refused(&result)), (0, outside.as_str()));
    let lines = audit_lines(&f);
    let rows: Vec<(&str, &str, &str)> =
        lines.iter().map(|l| (l["reason"].as_str().unwrap(), l["operation"].as_str().unwrap(), l["decision"].as_str().unwrap())).collect();
    assert_eq!(
        rows,
        [
            ("read_approval", "read", "allow"),
            ("read_approval", "read", "deny"),
            ("dynamic", "read", "allow"),
            ("dynamic", "write", "deny"),
            ("outside_sandbox", "access", "refused"),
        ]
    );
    assert_eq!((lines[4]["refusal"].as_str(), lines[4]["client"].as_str()), (Some(outside.as_str()), Some("warden-tests")));
}

#[test]
fn a_client_without_elicitation_gets_the_refusal_and_is_never_asked() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    for revision in [OLD, NEW] {
        let (mut c, _) = Client::connect(&f, revision, &[]);
        let (result, forms) = c.call_answering("write_file", json!({ "path": "/portfolio/a.md", "content": "x" }), &[]);
        assert_ne!(result["resultType"], "input_required", "{revision}: asked in the result: {result}");
        assert_eq!(
            (forms.len(), refused(&result)),
            (0, "Cannot write to '/portfolio/a.md': access needs the user's approval, which may be requested.\nWritable paths: none"),
            "{revision}"
        );
    }
}

#[test]
fn a_2026_client_is_asked_in_the_result_and_answers_by_calling_again() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let audit = f.path("audit.jsonl");
    let (mut c, _) = Client::connect_with(&f, NEW, &["--audit", audit.to_str().unwrap()], json!({ "elicitation": { "form": {} } }));
    let arguments = json!({ "path": "/portfolio/a.md", "content": "x" });
    let asked = c.call("write_file", arguments.clone());
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let form = &asked["inputRequests"]["approval"];
    assert_eq!(form["method"], "elicitation/create");
    assert!(form["params"]["message"].as_str().unwrap().starts_with("write_file asks to write /portfolio/a.md"), "{form}");
    let state = asked["requestState"].as_str().unwrap().to_owned();
    assert!(!f.path("portfolio/a.md").exists());
    // The same call again, with the answer and the state.
    let again = |c: &mut Client, args: &Value, state: &str, answer: Value| {
        c.request("tools/call", json!({ "name": "write_file", "arguments": args, "requestState": state, "inputResponses": { "approval": answer } }))
    };
    let done = again(&mut c, &arguments, &state, accept("once", "/portfolio"));
    assert_eq!(ok(&done)["result"], "Written 1 characters to /portfolio/a.md");
    // A state is bound to its call: other arguments, or a forged state, are refused.
    let other = json!({ "path": "/portfolio/b.md", "content": "x" });
    let refusal = "this call's approval state is not valid; call the tool again without it";
    assert_eq!(refused(&again(&mut c, &other, &state, accept("session", "/portfolio"))), refusal);
    assert_eq!(refused(&again(&mut c, &other, "forged", accept("session", "/portfolio"))), refusal);
    assert!(!f.path("portfolio/b.md").exists());
    // An answered state is spent: sent again, by the same client even, it grants nothing.
    std::fs::remove_file(f.path("portfolio/a.md")).unwrap();
    assert_eq!(refused(&again(&mut c, &arguments, &state, accept("once", "/portfolio"))), refusal);
    assert!(!f.path("portfolio/a.md").exists());
    // An answer sent with no state at all is not an answer: the call is asked about again.
    let unasked = c.request("tools/call", json!({ "name": "write_file", "arguments": other, "inputResponses": { "approval": accept("session", "/portfolio") } }));
    assert_eq!(unasked["resultType"], "input_required", "{unasked}");
    assert!(!f.path("portfolio/b.md").exists());
    // A decline is today's refusal.
    let asked = c.call("write_file", other.clone());
    let declined = again(&mut c, &other, asked["requestState"].as_str().unwrap(), json!({ "action": "decline" }));
    assert_eq!(refused(&declined), "Cannot write to '/portfolio/b.md': the user declined access.\nWritable paths: none");
    let lines = audit_lines(&f);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!((lines[0]["decision"].as_str(), lines[1]["decision"].as_str()), (Some("allow"), Some("deny")));
    assert_eq!(lines[0]["client"], "warden-tests");
}

#[test]
fn answers_given_in_advance_are_used_and_the_client_is_never_asked() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let (mut c, _) = Client::connect_with(&f, OLD, &["--approve", "deny:/portfolio"], json!({ "elicitation": { "form": {} } }));
    let (result, forms) = c.call_answering("write_file", json!({ "path": "/portfolio/a.md", "content": "x" }), &[accept("session", "/portfolio")]);
    assert_eq!((forms.len(), refused(&result)), (0, "Cannot write to '/portfolio/a.md': the user declined access.\nWritable paths: none"));
}

/// Whether any process on the machine has `marker` in its command line.
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .any(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
}

#[test]
fn a_cancelled_call_stops_its_component_and_frees_its_slot() {
    let f = Fixture::new();
    policy_with(&f, &format!("tools:\n  stuck: {{ component: {}, limits: {{ timeout: 60s }} }}\n", guest("hostile/stuck.wasm")));
    let (mut c, _) = Client::connect(&f, OLD, &["--max-concurrent", "1"]);
    let spin = c.start_request("tools/call", json!({ "name": "stuck__spin", "arguments": {} }));
    // Over HTTP each request comes on a connection of its own: the loop is given its time to take the slot first.
    std::thread::sleep(Duration::from_millis(300));
    // The endless loop holds the one slot: a read waits behind it.
    let read = c.start_request("tools/call", json!({ "name": "read_file", "arguments": { "path": "/portfolio/notes.md" } }));
    assert_eq!(c.response_within(read, Duration::from_secs(1)), None, "the read did not wait for the loop");
    c.cancel(spin);
    // The slot is free again only if the endless loop stopped.
    let start = std::time::Instant::now();
    let response = c.response_within(read, Duration::from_secs(5)).expect("the loop went on after its cancellation");
    assert_eq!(ok(&response["result"])["content"], "hello notes");
    eprintln!("the read was answered {:?} after the cancellation", start.elapsed());
}

#[test]
fn calls_of_one_client_run_side_by_side() {
    // The loop and the read share the program's approval session.
    let f = Fixture::new();
    policy_with(&f, &format!("tools:\n  stuck: {{ component: {}, limits: {{ timeout: 60s }} }}\n", guest("hostile/stuck.wasm")));
    for revision in [OLD, NEW] {
        let (mut c, _) = Client::connect(&f, revision, &["--max-concurrent", "2"]);
        let spin = c.start_request("tools/call", json!({ "name": "stuck__spin", "arguments": {} }));
        std::thread::sleep(Duration::from_millis(300));
        let read = c.start_request("tools/call", json!({ "name": "read_file", "arguments": { "path": "/portfolio/notes.md" } }));
        let response = c.response_within(read, Duration::from_secs(10)).expect("the read waited for the loop");
        assert_eq!(ok(&response["result"])["content"], "hello notes", "{revision}");
        assert_eq!(c.response_within(spin, Duration::from_millis(100)), None, "{revision}: the loop ended");
        c.cancel(spin);
    }
}

#[test]
fn a_cancelled_command_is_killed_with_its_children() {
    let f = Fixture::new();
    f.file("policy.yaml", &super::POLICY.replace("sandbox:\n", "sandbox:\n  shell: {}\n"));
    let marker = format!("warden-cancel-{}", std::process::id());
    let (mut c, _) = Client::connect(&f, NEW, &["--max-concurrent", "1"]);
    let id = c.start_request("tools/call", json!({ "name": "run_command", "arguments": { "command": format!("sleep 60 & sleep 61; echo {marker}") } }));
    let seen = std::time::Instant::now();
    while !running("sleep 61") && seen.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(running("sleep 61") && running("sleep 60"), "the command never started");
    let read = c.start_request("tools/call", json!({ "name": "read_file", "arguments": { "path": "/portfolio/notes.md" } }));
    assert_eq!(c.response_within(read, Duration::from_millis(500)), None, "the read did not wait for the command");
    c.cancel(id);
    let response = c.response_within(read, Duration::from_secs(5)).expect("the command held its slot after its cancellation");
    assert_eq!(ok(&response["result"])["content"], "hello notes");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!running("sleep 61") && !running("sleep 60"), "the command survived its cancellation");
    assert!(!running(&marker));
}

#[test]
fn a_long_call_reports_progress_when_asked_to() {
    let f = Fixture::new();
    policy_with(&f, &format!("tools:\n  stuck: {{ component: {}, limits: {{ timeout: 2500ms }} }}\n", guest("hostile/stuck.wasm")));
    let (mut c, _) = Client::connect(&f, OLD, &[]);
    let id = c.start_request("tools/call", json!({ "name": "stuck__spin", "arguments": {}, "_meta": { "progressToken": "p-1" } }));
    let mut progress = Vec::new();
    let result = loop {
        let message = c.read();
        if message["method"] == "notifications/progress" {
            progress.push(message["params"].clone());
        } else if message["id"] == json!(id) {
            break message["result"].clone();
        }
    };
    assert_eq!(refused(&result), "warden: the tool ran past its time limit of 2500ms");
    assert!(!progress.is_empty(), "no progress in 2.5 s");
    assert_eq!((progress[0]["progressToken"].clone(), progress[0]["progress"].clone()), (json!("p-1"), json!(1.0)));
    assert_eq!(progress[0]["message"], "running for 1 s");
}

#[test]
fn watch_swaps_in_a_changed_policy_tells_the_clients_and_keeps_the_old_one_when_invalid() {
    let f = Fixture::new();
    let (mut old, info) = Client::connect(&f, OLD, &["--watch"]);
    assert_eq!(info["capabilities"]["tools"]["listChanged"], true, "{info}");
    let (mut new, _) = Client::connect(&f, NEW, &["--watch"]);
    let listen = new.start_request("subscriptions/listen", json!({ "notifications": { "toolsListChanged": true } }));
    assert!(new.wait_for("notifications/subscriptions/acknowledged", Duration::from_secs(10)).is_some(), "subscription {listen} not acknowledged");
    let count = |c: &mut Client| c.request("tools/list", json!({}))["tools"].as_array().unwrap().len();
    assert_eq!(count(&mut old), 7);
    // Both servers watch the same file: one edit reaches both.
    std::thread::sleep(Duration::from_millis(1100));
    policy_with(&f, &format!("tools:\n  textkit: {{ component: {} }}\n", guest("textkit.wasm")));
    assert!(old.wait_for("notifications/tools/list_changed", Duration::from_secs(20)).is_some(), "no list_changed for the 2025-11-25 client");
    assert!(new.wait_for("notifications/tools/list_changed", Duration::from_secs(20)).is_some(), "no list_changed for the 2026-07-28 subscription");
    assert_eq!(count(&mut old), 10);
    let counted = old.call("textkit__count", json!({ "path": "/portfolio/notes.md" }));
    assert_eq!((counted["isError"].clone(), counted["content"][0]["text"].clone()), (json!(false), json!(r#"{"path":"/portfolio/notes.md","lines":0,"words":2,"bytes":11}"#)));
    // An edit that breaks the policy changes nothing, and says why.
    std::thread::sleep(Duration::from_millis(1100));
    f.file("policy.yaml", "version: 1\nsandbox: { paths: { portfolio: { root: ./nowhere } } }\n");
    std::thread::sleep(Duration::from_millis(2000));
    assert_eq!(count(&mut old), 10);
    assert!(server_log(&f).contains("warden: the policy changed but cannot be used (invalid policy: "), "{}", server_log(&f));
    assert!(old.read_within(Duration::from_millis(100)).is_none());
}

#[test]
fn watch_swaps_in_a_changed_component_and_its_tools() {
    let f = Fixture::new();
    std::fs::copy(guest("textkit.wasm"), f.path("plugin.wasm")).unwrap();
    policy_with(&f, "tools:\n  plugin: { component: ./plugin.wasm }\n");
    let (mut c, _) = Client::connect(&f, OLD, &["--watch"]);
    let names = |c: &mut Client| -> Vec<String> {
        let tools = c.request("tools/list", json!({}))["tools"].as_array().unwrap().clone();
        tools.iter().skip(7).map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(names(&mut c), ["plugin__grep", "plugin__count", "plugin__report"]);
    // The operator replaces the plugin's file; the policy is not touched.
    std::thread::sleep(Duration::from_millis(1100));
    let next = f.path("plugin.wasm.new");
    std::fs::copy(guest("notes_rs.wasm"), &next).unwrap();
    std::fs::rename(&next, f.path("plugin.wasm")).unwrap();
    assert!(c.wait_for("notifications/tools/list_changed", Duration::from_secs(20)).is_some(), "no list_changed: {}", server_log(&f));
    assert_eq!(names(&mut c), ["plugin__search", "plugin__summarize"]);
    let found = c.call("plugin__search", json!({ "pattern": "hello", "path": "/portfolio" }));
    assert_eq!((found["isError"].clone(), found["content"][0]["text"].clone()), (json!(false), json!("/portfolio/notes.md:1: hello notes\n1 match")));
}

/// The tests above that mean the same over streamable HTTP, run again over
/// it: both revisions (a 2025-11-25 session, 2026-07-28 stateless), the
/// file tools, refusals, a worker, components, limits and traps, the shell,
/// approvals asked by elicitation on the call's event stream or in its
/// result, cancellation (by closing the call's connection when stateless),
/// progress, and calls side by side.
mod over_http {
    macro_rules! again_over_http {
        ($($test:ident),* $(,)?) => {
            $( #[test] fn $test() { super::transport::OVER_HTTP.with(|h| h.set(true)); super::$test() } )*
        };
    }

    again_over_http!(
        both_revisions_start_and_list_the_file_tools_with_honest_hints,
        each_file_tool_does_its_job_with_the_reference_result_shapes,
        refusals_are_tool_errors_in_the_sandboxs_words_and_the_server_goes_on,
        a_worker_gets_its_narrower_view_and_the_policy_can_turn_file_tools_off,
        answers_in_advance_lift_an_approval_rule_and_nothing_else_does,
        component_tools_are_named_key_tool_with_their_schemas_confined_to_their_worker,
        limits_and_traps_are_tool_errors_and_the_server_goes_on,
        a_digest_that_does_not_match_refuses_that_component_and_only_it,
        run_command_runs_in_the_os_sandbox_under_the_policys_time_limit,
        a_2025_client_is_asked_by_elicitation_once_session_deny_and_cancel,
        a_client_without_elicitation_gets_the_refusal_and_is_never_asked,
        a_read_approval_mount_and_a_dynamic_folder_are_asked_through_the_client_too,
        a_component_asks_through_the_client_and_its_session_grant_serves_the_later_calls,
        a_2026_client_is_asked_in_the_result_and_answers_by_calling_again,
        answers_given_in_advance_are_used_and_the_client_is_never_asked,
        a_cancelled_call_stops_its_component_and_frees_its_slot,
        calls_of_one_client_run_side_by_side,
        a_cancelled_command_is_killed_with_its_children,
        a_long_call_reports_progress_when_asked_to,
    );
}
