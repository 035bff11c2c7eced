//! How the test client reaches `warden mcp` when a test runs over
//! streamable HTTP (`--http 127.0.0.1:0`): each message is a POST of its
//! own, from a thread of its own, and every message of the answer (plain
//! JSON, or an event stream with progress and questions first) lands in the
//! same channel that stdio's lines land in. So one test reads the same
//! whichever way it reaches the server.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

thread_local! {
    /// Set by the tests of `over_http`: the client on this thread speaks HTTP.
    pub static OVER_HTTP: Cell<bool> = const { Cell::new(false) };
}

pub struct HttpLink {
    port: u16,
    /// `Bearer <token>`, the token from the file the server named.
    auth: String,
    /// The `MCP-Protocol-Version` header: the revision the client speaks.
    pub protocol: String,
    /// A 2025-11-25 session, from the `initialize` answer's `Mcp-Session-Id`.
    session: Arc<Mutex<Option<String>>>,
    sink: Sender<String>,
    /// The connection of each request still waiting for its answer, by id.
    open: Arc<Mutex<HashMap<u64, TcpStream>>>,
}

impl HttpLink {
    /// Starts `command` (a `warden mcp` with `--http 127.0.0.1:0` added), its
    /// stderr into `log`, and waits for the address it serves at.
    pub fn start(mut command: Command, log: &std::path::Path, sink: Sender<String>) -> (Child, HttpLink) {
        let child = command
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let (port, token_file) = loop {
            let said = std::fs::read_to_string(log).unwrap_or_default();
            let port = said.lines().find_map(|l| l.strip_prefix("warden: serving MCP at http://127.0.0.1:")?.strip_suffix("/mcp")?.parse().ok());
            let token = said.lines().find_map(|l| Some(l.strip_prefix("warden: token file: ")?.split_once(" (this user only)")?.0.to_owned()));
            if let (Some(port), Some(token)) = (port, token) {
                break (port, token);
            }
            assert!(started.elapsed() < Duration::from_secs(60), "the server did not start serving: {said}");
            std::thread::sleep(Duration::from_millis(20));
        };
        let auth = format!("Bearer {}", std::fs::read_to_string(token_file).unwrap().trim());
        let link = HttpLink { port, auth, protocol: String::new(), session: Arc::default(), sink, open: Arc::default() };
        (child, link)
    }

    /// POSTs one message; its answer's messages go to the channel as they come.
    pub fn post(&self, message: &str) {
        let parsed: serde_json::Value = serde_json::from_str(message).unwrap_or_default();
        let id = parsed.get("method").and(parsed["id"].as_u64());
        // 2026-07-28 routes by headers that repeat the body's method and tool.
        let mut routing = String::new();
        if let Some(method) = parsed["method"].as_str() {
            routing.push_str(&format!("Mcp-Method: {method}\r\n"));
            if let Some(name) = parsed["params"]["name"].as_str().filter(|_| method == "tools/call") {
                routing.push_str(&format!("Mcp-Name: {name}\r\n"));
            }
        }
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let session = self.session.lock().unwrap().clone().map(|s| format!("Mcp-Session-Id: {s}\r\n")).unwrap_or_default();
        // HTTP/1.0: the answer ends when the connection does, with no chunks to undo.
        let head = format!(
            "POST /mcp HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nAuthorization: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: {}\r\n{routing}{session}Content-Length: {}\r\n\r\n",
            self.port,
            self.auth,
            self.protocol,
            message.len()
        );
        stream.write_all(format!("{head}{message}").as_bytes()).unwrap();
        if let Some(id) = id {
            self.open.lock().unwrap().insert(id, stream.try_clone().unwrap());
        }
        let (sink, session, open) = (self.sink.clone(), self.session.clone(), self.open.clone());
        let read = move || read_answer(stream, &sink, &session, &open, id);
        // A request's answer may take long; a notification or an answer is
        // acknowledged at once, and a client waits for that before it sends the
        // next (else the server may read two of them in either order).
        match id {
            Some(_) => drop(std::thread::spawn(read)),
            None => read(),
        }
    }

    /// Closes the connection request `id` waits on, as a client that gives up does.
    pub fn abandon(&self, id: u64) {
        if let Some(stream) = self.open.lock().unwrap().remove(&id) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

/// Reads one POST's answer from `stream`: the session it names, then each message.
fn read_answer(stream: TcpStream, sink: &Sender<String>, session: &Mutex<Option<String>>, open: &Mutex<HashMap<u64, TcpStream>>, id: Option<u64>) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line.trim_end() != "" {
        if let Some((name, value)) = line.trim_end().split_once(": ")
            && name.eq_ignore_ascii_case("mcp-session-id")
        {
            session.lock().unwrap().get_or_insert_with(|| value.to_owned());
        }
        line.clear();
    }
    // JSON is one message; an event stream has `data: ` lines.
    let mut body = String::new();
    line.clear();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
        body.push_str(&line);
        if let Some(data) = line.trim_end().strip_prefix("data: ")
            && serde_json::from_str::<serde_json::Value>(data).is_ok()
        {
            let _ = sink.send(data.to_owned());
        }
        line.clear();
    }
    if serde_json::from_str::<serde_json::Value>(body.trim()).is_ok() {
        let _ = sink.send(body.trim().to_owned());
    }
    if let Some(id) = id {
        open.lock().unwrap().remove(&id);
    }
}
