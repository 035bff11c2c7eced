//! The least MCP client that lists and calls a policy's tools over
//! `warden mcp`'s stdio (2025-11-25), for policies that name oci:// components.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{Value, json};

use super::Env;

pub struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
    /// Where the server's stderr goes, for the message of a failed test.
    log: PathBuf,
}

impl Mcp {
    /// `warden mcp --policy POLICY` in `env`, its stderr in `mcp-stderr.log`, and the handshake done.
    pub fn start(env: &Env, policy: &str) -> Mcp {
        Mcp::start_with(env, &["mcp", "--policy", policy])
    }

    /// `warden ARGS` (an `mcp` command line), as [`Mcp::start`].
    pub fn start_with(env: &Env, args: &[&str]) -> Mcp {
        let mut child = env
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(env.path("mcp-stderr.log")).unwrap())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        let mut mcp = Mcp { child, stdin, lines, next_id: 1, log: env.path("mcp-stderr.log") };
        let info = json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "warden-tests", "version": "1" } });
        mcp.request("initialize", info);
        mcp.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        mcp
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The result of `method`; the test fails on an error or on no answer in 180 s.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let line = self.lines.recv_timeout(Duration::from_secs(180)).unwrap_or_else(|e| {
                panic!("no answer to {method} ({e}); the server's stderr:\n{}", std::fs::read_to_string(&self.log).unwrap_or_default())
            });
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// The names `tools/list` offers.
    pub fn tool_names(&mut self) -> Vec<String> {
        let tools = self.request("tools/list", json!({}));
        tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    }

    /// A `tools/call`'s result.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({ "name": name, "arguments": arguments }))
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
