//! `warden mcp`, measured side by side in one run (release build):
//! - round trips over stdio from a Rust client, one call at a time, each next
//!   to the same operation through the library in-process: `read_file` of
//!   4 KiB, the C `echo` component tool, `run_command /bin/true` (and raw bwrap
//!   with Warden's mounts and flags). `run_command` runs its command with
//!   `/bin/sh -c`, so the library and raw bwrap run `/bin/sh -c /bin/true` too;
//! - throughput over HTTP: 8 clients, each on its own keep-alive connection,
//!   calling `echo` (stateless 2026-07-28 requests) for 5 seconds.
//!
//! Goals: `read_file` p50 ≤ 100 µs; `echo` p50 ≤ 150 µs; `run_command` ≤ 1.25×
//! raw bwrap; HTTP ≥ 5,000 calls/s. Needs `guests/build.sh` and bubblewrap.
//! Run: cargo bench -p warden --bench mcp
//!
//! With `WARDEN_BENCH_BASELINE=/path/to/another/warden` (a release build of
//! an earlier commit), that binary serves the same calls beside this one, in
//! passes of interleaved rounds, each pass with both servers started anew, in
//! turns first: where the scheduler happens to put a server's threads moves
//! a stdio round trip by a third on two cores, for the life of the process,
//! so one pair of processes would measure the placement. Then the HTTP runs
//! alternate. The figures of both and their ratios come from one run.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const ROUNDS: usize = 1500;
const COMMAND_ROUNDS: usize = 150;

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let echo = repo.join("guests/out/echo.wasm");
    assert!(echo.exists(), "run guests/build.sh first");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("proj")).unwrap();
    std::fs::write(dir.path().join("proj/four.md"), "x".repeat(4096)).unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        format!("version: 1\nsandbox:\n  paths:\n    proj: {{ root: ./proj, mode: rw }}\n  shell: {{}}\ntools:\n  echo: {{ component: {} }}\n", echo.display()),
    )
    .unwrap();
    let cache = dir.path().join("cache");

    // In-process, the library.
    let loaded_policy = warden_policy::load(&policy).unwrap();
    let sandbox = warden_fs::Sandbox::open(&loaded_policy).unwrap();
    let runtime = warden_wasm::Runtime::new(warden_wasm::RuntimeOptions { cache_dir: Some(cache.clone()), max_concurrent: 8, pooled: true }).unwrap();
    let loaded = runtime.load_file(&echo).unwrap();
    let shell = warden_shell::ShellSandbox::new(&loaded_policy, None).unwrap();
    let shield = warden_shell::Shield::for_plan(shell.plan()).unwrap();
    let true_argv = ["/bin/sh", "-c", "/bin/true"].map(OsString::from);
    let raw = warden_shell::bwrap_args(shell.plan(), &shield, &shell.plan().default_cwd, None, None, None, &true_argv);

    // Over stdio.
    let this = Path::new(env!("CARGO_BIN_EXE_warden")).to_owned();
    let baseline = std::env::var_os("WARDEN_BENCH_BASELINE").map(std::path::PathBuf::from);
    let mut server = Stdio1::start(&this, &policy, &cache);
    let ops: Vec<(&str, Value)> = vec![
        ("read_file", json!({ "path": "/proj/four.md" })),
        ("echo__echo", json!({ "a": 1 })),
        ("run_command", json!({ "command": "/bin/true" })),
    ];
    let mut floor = PipeFloor::start();
    let mut samples: Vec<(&str, Vec<Duration>)> = [
        "read_file over MCP",
        "read 4 KiB, library",
        "echo over MCP",
        "echo, library",
        "a line through `cat` and back (the pipes' floor)",
    ]
    .iter()
    .map(|n| (*n, Vec::new()))
    .collect();
    // Each round runs every operation once, starting one further along each
    // time: no operation always comes right after the same other one.
    for round in 0..ROUNDS + 100 {
        let keep = round >= 100;
        let mut time = |i: usize, f: &mut dyn FnMut()| timed(keep, &mut samples[i].1, f);
        let mut order: Vec<usize> = (0..5).collect();
        order.rotate_left(round % 5);
        for i in order {
            match i {
                0 => time(0, &mut || assert!(server.call(ops[0].0, &ops[0].1)["isError"] == false)),
                1 => time(1, &mut || assert_eq!(sandbox.read("/proj/four.md", warden_fs::ReadOptions::default()).unwrap().text.len(), 4096)),
                2 => time(2, &mut || assert!(server.call(ops[1].0, &ops[1].1)["isError"] == false)),
                3 => time(3, &mut || assert!(runtime.call(&loaded, &warden_wasm::RunConfig::default(), "echo", "{\"a\":1}").unwrap().result.is_ok())),
                _ => time(4, &mut || floor.round_trip()),
            }
        }
    }
    let mut commands: Vec<(&str, Vec<Duration>)> = vec![
        ("run_command /bin/true over MCP", Vec::new()),
        ("execute_argv sh -c /bin/true, library", Vec::new()),
        ("raw bwrap sh -c /bin/true", Vec::new()),
    ];
    for round in 0..COMMAND_ROUNDS + 10 {
        let keep = round >= 10;
        let mut time = |i: usize, f: &mut dyn FnMut()| timed(keep, &mut commands[i].1, f);
        let mut order: Vec<usize> = (0..3).collect();
        order.rotate_left(round % 3);
        for i in order {
            match i {
                0 => time(0, &mut || assert!(server.call(ops[2].0, &ops[2].1)["isError"] == false)),
                1 => time(1, &mut || assert!(shell.execute_argv(&true_argv, None, Duration::from_secs(10)).unwrap().ok())),
                _ => time(2, &mut || {
                    for p in &shield.placeholders {
                        let _ = std::fs::remove_file(p);
                    }
                    let status = Command::new(warden_shell::bwrap_path()).args(&raw).stdout(Stdio::null()).status().unwrap();
                    assert!(status.success());
                }),
            }
            for p in &shield.placeholders {
                let _ = std::fs::remove_file(p);
            }
        }
    }
    drop(server);
    drop(floor);

    println!("| operation ({ROUNDS} round trips each, interleaved) | p50 | p99 |");
    println!("|---|---|---|");
    for (name, s) in &mut samples {
        let (p50, p99) = percentiles(s);
        println!("| {name} | {:.1} µs | {:.1} µs |", micros(p50), micros(p99));
    }
    println!();
    println!("| command ({COMMAND_ROUNDS} runs each, interleaved) | p50 | p99 | vs raw bwrap |");
    println!("|---|---|---|---|");
    let raw_p50 = percentiles(&mut commands[2].1.clone()).0;
    for (name, s) in &mut commands {
        let (p50, p99) = percentiles(s);
        println!("| {name} | {:.2} ms | {:.2} ms | {:.2}× |", micros(p50) / 1000.0, micros(p99) / 1000.0, p50.as_secs_f64() / raw_p50.as_secs_f64());
    }
    println!();
    let Some(baseline) = baseline else {
        let rate = http_throughput(&this, true, &policy, &cache);
        println!("HTTP, 8 clients calling echo for 5 s: {rate:.0} calls/s (goal ≥ 5,000)");
        return;
    };
    against_baseline(&this, &baseline, &policy, &cache, &ops);
}

/// This build's `warden mcp` beside `baseline`'s: in each pass both servers
/// are started anew (in turns first) and serve the same calls in interleaved
/// rounds; the p50 ratio of each pass, and their median. Then HTTP, alternated.
fn against_baseline(this: &Path, baseline: &Path, policy: &Path, cache: &Path, ops: &[(&str, Value)]) {
    const PASSES: usize = 6;
    const PASS_ROUNDS: usize = 400;
    let names = ["read_file", "echo", "run_command"];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); 3];
    let mut p50s: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); 3];
    for pass in 0..PASSES {
        let (first, second) = if pass % 2 == 0 { (this, baseline) } else { (baseline, this) };
        let mut a = Stdio1::start(first, policy, cache);
        let mut b = Stdio1::start(second, policy, cache);
        let (ours, theirs) = if pass % 2 == 0 { (&mut a, &mut b) } else { (&mut b, &mut a) };
        for (op, (name, args)) in ops.iter().enumerate() {
            let rounds = if *name == "run_command" { PASS_ROUNDS / 8 } else { PASS_ROUNDS };
            let (mut mine, mut before) = (Vec::new(), Vec::new());
            for round in 0..rounds + 20 {
                let keep = round >= 20;
                let one = |server: &mut Stdio1, into: &mut Vec<Duration>| timed(keep, into, &mut || assert!(server.call(name, args)["isError"] == false));
                if round % 2 == 0 {
                    one(ours, &mut mine);
                    one(theirs, &mut before);
                } else {
                    one(theirs, &mut before);
                    one(ours, &mut mine);
                }
            }
            let (m, b) = (percentiles(&mut mine).0.as_secs_f64(), percentiles(&mut before).0.as_secs_f64());
            ratios[op].push(m / b);
            p50s[op].0.push(m * 1e6);
            p50s[op].1.push(b * 1e6);
        }
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("| {PASSES} passes, both servers started anew in each | this build p50 | baseline p50 | ratio (median of the passes) | the passes' ratios |");
    println!("|---|---|---|---|---|");
    for (op, name) in names.iter().enumerate() {
        let unit = |us: f64| if us > 1000.0 { format!("{:.2} ms", us / 1000.0) } else { format!("{us:.1} µs") };
        println!(
            "| {name} over MCP | {} | {} | {:.2}× | {:?} |",
            unit(median(&p50s[op].0)),
            unit(median(&p50s[op].1)),
            median(&ratios[op]),
            ratios[op].iter().map(|r| (r * 100.0).round() / 100.0).collect::<Vec<_>>()
        );
    }
    // Alternated, so that a busy spell of the machine falls on both.
    let (mut new, mut before) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        new.push(http_throughput(this, true, policy, cache));
        before.push(http_throughput(baseline, false, policy, cache));
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!();
    println!(
        "HTTP, 8 clients calling echo for 5 s, alternated twice: this build {:.0} calls/s ({:?}), baseline build {:.0} calls/s ({:?}): {:.2}×",
        mean(&new),
        new.iter().map(|r| r.round()).collect::<Vec<_>>(),
        mean(&before),
        before.iter().map(|r| r.round()).collect::<Vec<_>>(),
        mean(&new) / mean(&before)
    );
}

/// Runs `f`, and keeps how long it took unless the round is a warm-up.
fn timed(keep: bool, samples: &mut Vec<Duration>, f: &mut dyn FnMut()) {
    let start = Instant::now();
    f();
    if keep {
        samples.push(start.elapsed());
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort();
    (samples[samples.len() / 2], samples[samples.len() * 99 / 100])
}

/// `cat` over the same kind of pipes: what a round trip costs with no work at all.
struct PipeFloor {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl PipeFloor {
    fn start() -> PipeFloor {
        let mut child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        PipeFloor { child, stdin, stdout }
    }

    fn round_trip(&mut self) {
        let request = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "read_file", "arguments": { "path": "/proj/four.md" } } });
        self.stdin.write_all(format!("{request}\n").as_bytes()).unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
    }
}

impl Drop for PipeFloor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `warden mcp` over stdio, initialized (2025-11-25).
struct Stdio1 {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    id: u64,
}

impl Stdio1 {
    fn start(binary: &Path, policy: &Path, cache: &Path) -> Stdio1 {
        let mut child = Command::new(binary)
            .args(["mcp", "--policy", policy.to_str().unwrap(), "--max-concurrent", "8"])
            .env("WARDEN_CACHE_DIR", cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = Stdio1 { child, stdin, stdout, id: 0 };
        s.request("initialize", json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } }));
        s.line(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        s
    }

    fn line(&mut self, message: &Value) {
        let mut text = message.to_string();
        text.push('\n');
        self.stdin.write_all(text.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        self.line(&json!({ "jsonrpc": "2.0", "id": self.id, "method": method, "params": params }));
        loop {
            let mut reply = String::new();
            self.stdout.read_line(&mut reply).unwrap();
            let v: Value = serde_json::from_str(&reply).unwrap();
            if v["id"] == json!(self.id) {
                return v["result"].clone();
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: &Value) -> Value {
        self.request("tools/call", json!({ "name": tool, "arguments": arguments }))
    }
}

impl Drop for Stdio1 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Calls per second of 8 clients calling `echo` over HTTP for 5 seconds, on a
/// `warden mcp` of `binary`; `token`: it names a token file, whose token every
/// request carries (builds before the token was required print none).
fn http_throughput(binary: &Path, token: bool, policy: &Path, cache: &Path) -> f64 {
    let mut server = Command::new(binary)
        .args(["mcp", "--policy", policy.to_str().unwrap(), "--http", "127.0.0.1:0", "--max-concurrent", "8"])
        .env("WARDEN_CACHE_DIR", cache)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    let port: u16 = first.trim().rsplit(':').next().unwrap().trim_end_matches("/mcp").parse().unwrap();
    let auth = if token {
        let mut second = String::new();
        stderr.read_line(&mut second).unwrap();
        let file = second.strip_prefix("warden: token file: ").and_then(|r| r.split_once(" (this user only)")).expect("a token file line").0;
        format!("Authorization: Bearer {}\r\n", std::fs::read_to_string(file).unwrap().trim())
    } else {
        String::new()
    };
    // Read on, so that the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..8)
        .map(|_| {
            let (stop, done, auth) = (stop.clone(), done.clone(), auth.clone());
            std::thread::spawn(move || {
                let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap();
                conn.set_nodelay(true).unwrap();
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                    "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                               "io.modelcontextprotocol/clientInfo": { "name": "bench", "version": "1" },
                               "io.modelcontextprotocol/clientCapabilities": {} },
                    "name": "echo__echo", "arguments": { "a": 1 } } })
                .to_string();
                let request = format!(
                    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Type: application/json\r\n\
                     Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
                     Mcp-Method: tools/call\r\nMcp-Name: echo__echo\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                while !stop.load(Ordering::Relaxed) {
                    conn.write_all(request.as_bytes()).unwrap();
                    let reply = read_response(&mut reader);
                    assert!(reply.contains("\"isError\":false"), "{reply}");
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    let start_count = done.load(Ordering::Relaxed);
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs(5));
    let calls = done.load(Ordering::Relaxed) - start_count;
    let elapsed = start.elapsed();
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let _ = server.kill();
    let _ = server.wait();
    calls as f64 / elapsed.as_secs_f64()
}

/// One HTTP/1.1 response's body, with `Content-Length` or chunked.
fn read_response(reader: &mut BufReader<TcpStream>) -> String {
    let mut length = None;
    let mut chunked = false;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse::<usize>().ok();
        }
        chunked |= lower.starts_with("transfer-encoding:") && lower.contains("chunked");
        if line == "\r\n" {
            break;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).unwrap();
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).unwrap();
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        let mut chunk = vec![0; length.unwrap_or(0)];
        reader.read_exact(&mut chunk).unwrap();
        body = chunk;
    }
    String::from_utf8_lossy(&body).into_owned()
}
