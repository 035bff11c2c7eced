//! One test per hostile guest in guests/hostile: each must stay contained,
//! checked from the host afterwards.

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::*;
use warden_policy::{AllowEntry, Allowlist, Network};
use warden_wasm::{RunError, ToolError};

#[test]
fn dotdot_cannot_leave_a_mount() {
    let tree = escape_tree();
    let (outcome, stdout) = run(&runtime(), "hostile/escape_dotdot.wasm", &tree.config(DATA_RW), &[]);
    assert_eq!(outcome.exit_code, 0, "{stdout}");
    assert_contained(&stdout, "/data/inside.txt");
    assert!(stdout.contains("read /data/../secret.txt: denied"), "{stdout}");
    assert!(!tree.path("planted.txt").exists());
}

#[test]
fn absolute_host_paths_and_proc_are_not_reachable() {
    let tree = escape_tree();
    tree.file("data/note.txt", "x");
    let secret = tree.path("secret.txt").display().to_string();
    let inside = tree.path("data/inside.txt").display().to_string();
    let (outcome, stdout) = run(&runtime(), "hostile/escape_absolute.wasm", &tree.config(DATA_RW), &[&secret, &inside, "/data/note.txt"]);
    assert_eq!(outcome.exit_code, 0, "{stdout}");
    assert_contained(&stdout, "/data/note.txt");
    for path in ["/etc/passwd", "/proc/self/environ", "/proc/self/root/etc/passwd", &secret, &inside] {
        assert!(stdout.contains(&format!("read {path}: denied")), "{path}:\n{stdout}");
    }
}

#[test]
fn symlinks_made_by_the_guest_cannot_point_out() {
    let tree = escape_tree();
    tree.file("outside-target.txt", "unchanged");
    let secret = tree.path("secret.txt").display().to_string();
    let target = tree.path("outside-target.txt").display().to_string();
    let (outcome, stdout) = run(&runtime(), "hostile/escape_symlink.wasm", &tree.config(DATA_RW), &[&secret, &target]);
    assert_eq!(outcome.exit_code, 0, "{stdout}");
    assert!(stdout.contains("DONE symlink up"), "the guest could not even plant its links:\n{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("LEAK")), "{stdout}");
    assert!(!stdout.contains(SECRET));
    // Writes through the links stayed inside: a refused absolute link leaves
    // the guest a plain file of its own.
    assert!(!std::fs::symlink_metadata(tree.path("data/out-link")).unwrap().file_type().is_symlink());
    assert_eq!(tree.read("outside-target.txt").as_deref(), Some("unchanged"));
    assert!(!tree.path("planted.txt").exists());
    assert_eq!(tree.read("secret.txt").as_deref(), Some(SECRET));
}

#[test]
fn renumbered_preopens_reach_nothing_new() {
    let tree = escape_tree();
    let (outcome, stdout) = run(&runtime(), "hostile/escape_renumber.wasm", &tree.config(DATA_RW), &[]);
    assert_eq!(outcome.exit_code, 0, "{stdout}");
    assert!(stdout.contains("renumber 3->4: 0"), "the preopen was not renumbered:\n{stdout}");
    // The control: the renumbered preopen still opens its own file, nothing more.
    assert!(stdout.contains("LEAK fd 4 inside.txt: inside"), "{stdout}");
    assert_eq!(stdout.matches("LEAK").count(), 1, "{stdout}");
    assert!(!stdout.contains(SECRET), "{stdout}");
    assert!(stdout.ends_with("done\n"), "{stdout}");
}

#[test]
fn read_only_mounts_stay_unchanged() {
    let tree = Tree::new();
    tree.file("ro/existing.md", "original\n").file("rw/mine.md", "mine\n");
    let policy = "version: 1\nsandbox:\n  paths:\n    ro: { root: ./ro, mode: ro }\n    rw: { root: ./rw, mode: rw }\n";
    let (outcome, stdout) = run(&runtime(), "hostile/write_ro.wasm", &tree.config(policy), &[]);
    assert_eq!(outcome.exit_code, 0, "{stdout}");
    assert_contained(&stdout, "/rw/allowed.md");
    assert!(!stdout.contains("DONE"), "{stdout}");
    assert_eq!(tree.read("ro/existing.md").as_deref(), Some("original\n"));
    let mut names: Vec<_> = std::fs::read_dir(tree.path("ro")).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["existing.md"]);
    assert_eq!(tree.read("rw/mine.md").as_deref(), Some("mine\n"));
    assert!(!tree.path("rw/stolen.md").exists());
    let denial = outcome.report.denials.iter().find(|d| d.to_string().contains("/ro/existing.md")).expect("a denial");
    assert_eq!(denial.to_string(), "Cannot write to '/ro/existing.md': path is read-only.\nWritable paths: /rw");
}

#[test]
fn disallowed_suffixes_stay_unreadable_by_any_route() {
    let tree = Tree::new();
    tree.file("data/notes.md", "notes\n").file("data/.env", SECRET).file("data/secret.key", SECRET);
    tree.symlink(".env", "data/planted-link.md");
    let policy = "version: 1\nsandbox:\n  paths:\n    data: { root: ./data, mode: rw, suffixes: [.md] }\n";
    let (outcome, stdout) = run(&runtime(), "hostile/suffix.wasm", &tree.config(policy), &[]);
    assert_eq!(outcome.exit_code, 0, "{stdout}");
    assert_contained(&stdout, "/data/notes.md");
    assert!(!stdout.contains("listed .env") && !stdout.contains("listed secret.key"), "{stdout}");
    assert!(stdout.contains("listed notes.md"), "{stdout}");
    assert!(!tree.path("data/run.sh").exists() && !tree.path("data/notes.sh").exists());
    assert!(!tree.path("data/hard.md").exists());
    let denial = outcome.report.denials.iter().find(|d| d.to_string().contains(".env")).expect("a denial");
    assert_eq!(denial.to_string(), "Cannot access '/data/.env': suffix '(none)' not allowed.\nAllowed suffixes: .md");
}

#[test]
fn oversized_files_cannot_be_read_or_grown() {
    let tree = Tree::new();
    tree.file("data/small.md", "small\n").file("data/big.md", &"b".repeat(5000));
    let policy = "version: 1\nsandbox:\n  paths:\n    data: { root: ./data, mode: rw, max_file_bytes: 1000 }\n";
    let (outcome, stdout) = run(&runtime(), "hostile/oversize.wasm", &tree.config(policy), &[]);
    assert_eq!(outcome.exit_code, 0, "{stdout}");
    assert_contained(&stdout, "/data/small.md");
    assert!(stdout.contains("read /data/big.md: denied (File too large)"), "{stdout}");
    assert!(stdout.contains("ftruncate to 5000: denied"), "{stdout}");
    let grown = std::fs::metadata(tree.path("data/grow.md")).unwrap().len();
    assert!(grown <= 1000, "grow.md reached {grown} bytes");
    let denial = outcome.report.denials.iter().find(|d| d.to_string().contains("big.md")).expect("a denial");
    assert_eq!(denial.to_string(), "Cannot read '/data/big.md': file too large (5000 bytes).\nMaximum allowed: 1000 bytes");
}

fn run_err(name: &str, config: &warden_wasm::RunConfig) -> RunError {
    let runtime = runtime();
    let loaded = load(&runtime, name);
    runtime.run(&loaded, config).expect_err("the guest must be stopped")
}

#[test]
fn memory_bomb_stops_at_the_memory_limit() {
    let mut config = warden_wasm::RunConfig::default();
    config.limits.memory_bytes = 32 << 20;
    let err = run_err("hostile/membomb.wasm", &config);
    assert_eq!(err.to_string(), "the tool tried to use more than the memory limit of 33554432 bytes");
}

#[test]
fn endless_loop_stops_at_the_timeout() {
    let mut config = warden_wasm::RunConfig::default();
    config.limits.timeout = Some(Duration::from_millis(200));
    let start = Instant::now();
    let err = run_err("hostile/loop.wasm", &config);
    assert_eq!(err.to_string(), "the tool ran past its time limit of 200ms");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn endless_loop_stops_when_fuel_runs_out() {
    let mut config = warden_wasm::RunConfig::default();
    config.limits.fuel = Some(5_000_000);
    let err = run_err("hostile/loop.wasm", &config);
    assert_eq!(err.to_string(), "the tool ran out of fuel (limit: 5000000)");
}

#[test]
fn a_stuck_tool_is_stopped_and_the_runtime_serves_the_next_call() {
    let runtime = runtime();
    let loaded = load(&runtime, "hostile/stuck.wasm");
    let mut config = warden_wasm::RunConfig::default();
    config.limits.timeout = Some(Duration::from_millis(200));
    config.limits.memory_bytes = 64 << 20;
    let call = |tool: &str| runtime.call(&loaded, &config, tool, "{}").expect_err("the tool must be stopped").to_string();
    assert_eq!(call("spin"), "the tool ran past its time limit of 200ms");
    assert_eq!(call("hog"), "the tool tried to use more than the memory limit of 67108864 bytes");
    assert_eq!(call("trap"), "the tool trapped: wasm trap: wasm `unreachable` instruction executed");
    // A flag set from another thread stops it at the next epoch tick.
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let long = warden_wasm::RunConfig { cancel: Some(cancel.clone()), limits: warden_wasm::RunLimits { timeout: Some(Duration::from_secs(60)), ..config.limits }, ..warden_wasm::RunConfig::default() };
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let start = Instant::now();
    assert!(matches!(runtime.call(&loaded, &long, "spin", "{}"), Err(RunError::Cancelled)));
    assert!(start.elapsed() < Duration::from_secs(30), "{:?}", start.elapsed());
    setter.join().unwrap();
    let echo = load(&runtime, "echo.wasm");
    assert_eq!(runtime.call(&echo, &config, "echo", "{\"a\":1}").unwrap().result, Ok("{\"a\":1}".to_owned()));
}

#[test]
fn output_flood_stops_at_the_output_limit() {
    let mut config = warden_wasm::RunConfig::default();
    config.limits.output_bytes = 64 * 1024;
    let err = run_err("hostile/flood.wasm", &config);
    assert_eq!(err.to_string(), "the tool wrote more than the output limit of 65536 bytes to stdout");
}

#[test]
fn host_environment_does_not_leak() {
    // SAFETY: set before any thread of this test reads the environment.
    unsafe { std::env::set_var("WARDEN_TEST_HOST_SECRET", SECRET) };
    let config = warden_wasm::RunConfig { env: vec![("GIVEN".into(), "yes".into())], ..Default::default() };
    let (outcome, stdout) = run(&runtime(), "hostile/env.wasm", &config, &[]);
    assert_eq!(outcome.exit_code, 0);
    assert_eq!(stdout, "GIVEN=yes\n");
}

/// The net probe (a lookup of `localhost`, a TCP connect to 127.0.0.1:PORT)
/// under the network `allow(port)` gives: its report, whether the listener
/// was reached, the refusals on record, and the port.
fn probe_network(allow: impl Fn(u16) -> Network) -> (String, bool, Vec<String>, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let runtime = runtime();
    let loaded = load(&runtime, "hostile/net.wasm");
    let config = warden_wasm::RunConfig { network: allow(port), ..Default::default() };
    let outcome = runtime.call(&loaded, &config, "probe", &format!("{{\"port\":{port}}}")).unwrap();
    let accepted = listener.accept().map(|(mut s, _)| s.read(&mut [0; 1]).is_ok()).unwrap_or(false);
    let denials = outcome.report.denials.iter().map(|d| d.to_string()).collect();
    (outcome.result.unwrap_or_else(|e: ToolError| panic!("{e:?}")), accepted, denials, port)
}

fn allow(entries: &[String]) -> Network {
    Network::Allow(Allowlist { entries: entries.iter().map(|e| AllowEntry::parse(e).unwrap()).collect(), listen: false })
}

#[test]
fn an_allowed_address_and_port_connect() {
    let (output, accepted, denials, port) = probe_network(|port| allow(&[format!("127.0.0.1:{port}")]));
    assert!(output.contains("connect: CONNECTED"), "{output}");
    assert!(accepted);
    // `localhost` is not listed (only the address is), so it is not even looked up.
    assert!(output.contains("lookup localhost: refused"), "{output}");
    assert_eq!(denials, [format!("Cannot connect to 'localhost': host not in the network allowlist.\nAllowed hosts: 127.0.0.1:{port}")]);
}

#[test]
fn a_listed_name_connects_to_the_address_it_resolved_to() {
    let (output, accepted, denials, _) = probe_network(|port| allow(&[format!("localhost:{port}")]));
    assert!(output.contains("lookup localhost: RESOLVED") && output.contains("connect: CONNECTED"), "{output}");
    assert!(accepted);
    assert_eq!(denials, Vec::<String>::new());
}

#[test]
fn the_same_address_on_another_port_is_refused_with_the_list() {
    let (output, accepted, denials, port) = probe_network(|port| allow(&[format!("127.0.0.1:{}", port + 1)]));
    assert!(!accepted, "{output}");
    assert!(output.contains("connect: refused") || output.contains("connect: failed"), "{output}");
    assert_eq!(
        denials.last().unwrap(),
        &format!("Cannot connect to '127.0.0.1:{port}': host not in the network allowlist.\nAllowed hosts: 127.0.0.1:{}", port + 1)
    );
}

#[test]
fn an_empty_allowlist_refuses_lookups_and_connections() {
    let (output, accepted, denials, _) = probe_network(|_| allow(&[]));
    assert!(!accepted);
    assert!(output.contains("lookup localhost: refused") && !output.contains("CONNECTED"), "{output}");
    assert_eq!(denials[0], "Cannot connect to 'localhost': host not in the network allowlist.\nAllowed hosts: none");
    assert!(denials[1].ends_with("': host not in the network allowlist.\nAllowed hosts: none"), "{denials:?}");
}

#[test]
fn sockets_and_name_lookups_are_refused_without_network() {
    let (output, accepted, _, _) = probe_network(|_| Network::Off);
    assert!(!accepted, "the listener accepted a connection:\n{output}");
    assert!(output.contains("lookup localhost: refused"), "{output}");
    assert!(!output.contains("CONNECTED") && !output.contains("RESOLVED"), "{output}");
}

#[test]
fn the_network_probe_connects_when_the_policy_allows_it() {
    // The control for the test above: the same guest does reach the listener.
    let (output, accepted, _, _) = probe_network(|_| Network::Full);
    assert!(output.contains("connect: CONNECTED"), "{output}");
    assert!(accepted);
}

/// The net probe with `input` under `network`: its report and the refusals on record.
fn probe(network: Network, input: &str) -> (String, Vec<String>) {
    let runtime = runtime();
    let loaded = load(&runtime, "hostile/net.wasm");
    let config = warden_wasm::RunConfig { network, ..Default::default() };
    let outcome = runtime.call(&loaded, &config, "probe", input).unwrap();
    let denials = outcome.report.denials.iter().map(|d| d.to_string()).collect();
    (outcome.result.unwrap_or_else(|e: ToolError| panic!("{e:?}")), denials)
}

fn allowing(entries: &[String], listen: bool) -> Network {
    Network::Allow(Allowlist { entries: entries.iter().map(|e| AllowEntry::parse(e).unwrap()).collect(), listen })
}

#[test]
fn a_listening_socket_is_refused_unless_the_policy_says_listen() {
    let listed = vec!["127.0.0.1:8080".to_owned()];
    let (output, denials) = probe(allowing(&listed, false), r#"{"connect":false,"listen":true}"#);
    assert!(output.starts_with("listen: refused (error "), "{output}");
    assert_eq!(denials.len(), 1, "{denials:?}");
    assert!(
        denials[0].starts_with("Cannot listen on '127.0.0.1:") && denials[0].ends_with("': this sandbox may only make outgoing connections."),
        "{denials:?}"
    );
    let (output, denials) = probe(allowing(&listed, true), r#"{"connect":false,"listen":true}"#);
    assert_eq!((output.as_str(), denials.len()), ("listen: LISTENING\n", 0), "{denials:?}");
}

#[test]
fn a_datagram_goes_only_to_a_listed_address_and_port() {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_read_timeout(Some(std::time::Duration::from_millis(500))).unwrap();
    let port = socket.local_addr().unwrap().port();
    let input = format!(r#"{{"connect":false,"udp":true,"port":{port}}}"#);
    let (output, denials) = probe(allowing(&[format!("127.0.0.1:{port}")], false), &input);
    assert_eq!((output.as_str(), denials.len()), ("udp: SENT\n", 0), "{denials:?}");
    let mut got = [0u8; 16];
    let (n, _) = socket.recv_from(&mut got).expect("the datagram arrives");
    assert_eq!(&got[..n], b"probe");
    // Another port of the same address: refused, and nothing arrives.
    let (output, denials) = probe(allowing(&[format!("127.0.0.1:{}", port + 1)], false), &input);
    assert!(output.starts_with("udp: refused (error "), "{output}");
    assert_eq!(
        denials,
        [format!("Cannot connect to '127.0.0.1:{port}': host not in the network allowlist.\nAllowed hosts: 127.0.0.1:{}", port + 1)]
    );
    assert!(socket.recv_from(&mut got).is_err(), "a datagram arrived");
}
