//! Shell commands under `network: { allow: [...] }`: out only through the
//! proxy, only to listed pairs, each refusal noted in the model's words.
//! Every server is one the test starts on a loopback port.

use std::io::{Read, Write};
use std::net::{TcpListener, ToSocketAddrs};
use std::process::Command;

use super::{repo, Fixture};

/// A one-line HTTP server on 127.0.0.1; its port.
pub(crate) fn server(body: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut head = [0u8; 4096];
            let _ = conn.read(&mut head);
            let _ = write!(conn, "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        }
    });
    port
}

struct Out {
    status: i32,
    stdout: String,
    stderr: String,
}

fn exec(f: &Fixture, allow: &str, script: &str) -> Out {
    f.file("policy.yaml", &format!("version: 1\nsandbox:\n  paths:\n    portfolio: {{ root: ./portfolio, mode: rw }}\n  network: {{ allow: [{allow}] }}\n  shell: {{}}\n"));
    let out = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["exec", "--policy", f.path("policy.yaml").to_str().unwrap(), "--", "/bin/sh", "-c", script])
        .output()
        .unwrap();
    Out {
        status: out.status.code().unwrap(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn curl_reaches_an_allowed_host_and_port_through_each_proxy_protocol() {
    let f = Fixture::new();
    let port = server("allowed");
    let allow = format!("\"127.0.0.1:{port}\", \"localhost:{port}\"");
    // Absolute-form HTTP through HTTP_PROXY, a CONNECT tunnel, and SOCKS5 with the name resolved by the proxy.
    for curl in ["curl -sS", "curl -sS --proxytunnel", "curl -sS -x \"$ALL_PROXY\""] {
        let r = exec(&f, &allow, &format!("{curl} http://127.0.0.1:{port}/ && {curl} http://localhost:{port}/"));
        assert_eq!((r.status, r.stdout.as_str(), r.stderr.as_str()), (0, "allowedallowed", ""), "{curl}");
    }
}

#[test]
fn the_same_host_on_another_port_is_refused_with_the_list() {
    let f = Fixture::new();
    let (allowed, other) = (server("allowed"), server("other"));
    let r = exec(&f, &format!("\"127.0.0.1:{allowed}\""), &format!("curl -sS -f http://127.0.0.1:{other}/"));
    assert_eq!(r.status, 22, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.ends_with(&format!(
            "\nNote: Cannot connect to '127.0.0.1:{other}': host not in the network allowlist.\nAllowed hosts: 127.0.0.1:{allowed}\n"
        )),
        "{}",
        r.stderr
    );
    // Over SOCKS5 too: the same refusal, the command sees "not allowed by ruleset".
    let r = exec(&f, &format!("\"127.0.0.1:{allowed}\""), &format!("curl -sS -x \"$ALL_PROXY\" http://127.0.0.1:{other}/"));
    assert_eq!(r.status, 97, "{}", r.stderr);
    assert!(
        r.stderr.ends_with(&format!(
            "\nNote: Cannot connect to '127.0.0.1:{other}': host not in the network allowlist.\nAllowed hosts: 127.0.0.1:{allowed}\n"
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn a_listed_name_that_resolves_to_loopback_is_refused_when_loopback_is_not_listed() {
    let f = Fixture::new();
    let port = server("loopback");
    let name = String::from_utf8(Command::new("hostname").output().unwrap().stdout).unwrap().trim().to_lowercase();
    let resolved: Vec<_> = (name.as_str(), port).to_socket_addrs().unwrap().collect();
    assert!(resolved.iter().all(|a| a.ip().is_loopback()), "this test needs the host name to resolve to loopback: {resolved:?}");
    let r = exec(&f, &format!("\"{name}:{port}\""), &format!("curl -sS -x \"$ALL_PROXY\" http://{name}:{port}/"));
    assert_ne!(r.status, 0);
    let ip = resolved[0].ip();
    assert!(
        r.stderr.contains(&format!(
            "Note: Cannot connect to '{name}:{port}': the name resolves to {ip}, a loopback address, which the network allowlist does not include.\nAllowed hosts: {name}:{port}\n"
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn a_wildcard_never_admits_the_bare_domain() {
    let f = Fixture::new();
    let r = exec(&f, "\"*.example.test:80\"", "curl -sS -f http://example.test/");
    assert_ne!(r.status, 0);
    assert!(
        r.stderr.contains("Note: Cannot connect to 'example.test:80': host not in the network allowlist.\nAllowed hosts: *.example.test:80\n"),
        "{}",
        r.stderr
    );
}

#[test]
fn an_empty_list_refuses_everything() {
    let f = Fixture::new();
    let port = server("x");
    let r = exec(&f, "", &format!("curl -sS -f http://127.0.0.1:{port}/"));
    assert_ne!(r.status, 0);
    assert!(r.stderr.contains(&format!("Note: Cannot connect to '127.0.0.1:{port}': host not in the network allowlist.\nAllowed hosts: none\n")), "{}", r.stderr);
}

#[test]
fn nul_and_malformed_host_names_are_refused_unresolved() {
    let f = Fixture::new();
    let port = server("x");
    // A raw CONNECT with a NUL in the name, and one in a non-standard address form.
    let script = "python3 -c 'import socket,sys\n\
        for target in (b\"evil\\x00.example:80\", b\"0x7f000001:80\"):\n\
        \x20   s = socket.create_connection((\"127.0.0.1\", 3128)); s.sendall(b\"CONNECT \" + target + b\" HTTP/1.1\\r\\n\\r\\n\")\n\
        \x20   sys.stdout.write(s.recv(4096).decode().split(\"\\r\\n\")[0] + \"\\n\")'";
    let r = exec(&f, &format!("\"127.0.0.1:{port}\""), script);
    assert_eq!(r.stdout, "HTTP/1.1 403 Forbidden\nHTTP/1.1 403 Forbidden\n", "{}", r.stderr);
    assert!(r.stderr.contains("Note: Cannot connect to 'evil\\0.example:80': 'evil\\0.example' is not a host name"), "{}", r.stderr);
    assert!(r.stderr.contains("Note: Cannot connect to '0x7f000001:80': '0x7f000001' is neither a host name nor an address"), "{}", r.stderr);
}

#[test]
fn a_command_that_ignores_the_proxy_has_no_route() {
    let f = Fixture::new();
    let port = server("direct");
    let r = exec(&f, &format!("\"127.0.0.1:{port}\""), &format!("curl -sS --noproxy '*' http://127.0.0.1:{port}/"));
    assert_eq!((r.status, r.stdout.as_str()), (7, ""), "{}", r.stderr);
    assert!(
        r.stderr.ends_with(&format!(
            "\nNote: connections leave this sandbox only through its proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), to: 127.0.0.1:{port}\n"
        )),
        "{}",
        r.stderr
    );
    // Nor by UDP, nor to the outside: the sandbox has only its loopback interface.
    let r = exec(&f, "", "python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"x\", (\"192.0.2.1\", 53))'");
    assert_ne!(r.status, 0);
    assert!(r.stderr.contains("Network is unreachable"), "{}", r.stderr);
}

#[test]
fn a_worker_cannot_widen_the_programs_list() {
    let f = Fixture::new();
    f.file(
        "policy.yaml",
        "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  network: { allow: [\"127.0.0.1:80\"] }\n\
         workers:\n  w: { inherit: true, network: { allow: [\"127.0.0.1:81\"] } }\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_warden")).args(["check", f.path("policy.yaml").to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("workers.w.network: SandboxPermissionEscalationError: cannot grant network access to '127.0.0.1:81'"), "{stderr}");
}

#[test]
fn a_worker_runs_under_its_own_narrower_list() {
    let f = Fixture::new();
    let port = server("program");
    f.file(
        "policy.yaml",
        &format!(
            "version: 1\nsandbox:\n  paths:\n    portfolio: {{ root: ./portfolio, mode: rw }}\n  network: {{ allow: [\"127.0.0.1:{port}\"] }}\n  shell: {{}}\n\
             workers:\n  offline: {{ inherit: true, network: {{ allow: [] }} }}\n"
        ),
    );
    let run = |worker: &[&str]| {
        let mut args = vec!["exec", "--policy", f.path("policy.yaml").to_str().unwrap().to_owned().leak()];
        args.extend_from_slice(worker);
        let script = format!("curl -sS -f http://127.0.0.1:{port}/");
        args.extend(["--", "/bin/sh", "-c", script.leak()]);
        Command::new(env!("CARGO_BIN_EXE_warden")).args(&args).output().unwrap()
    };
    let program = run(&[]);
    assert_eq!(String::from_utf8_lossy(&program.stdout), "program");
    let worker = run(&["--worker", "offline"]);
    assert_eq!(worker.status.code(), Some(22));
    assert!(
        String::from_utf8_lossy(&worker.stderr)
            .contains(&format!("Note: Cannot connect to '127.0.0.1:{port}': host not in the network allowlist.\nAllowed hosts: none\n")),
        "{}",
        String::from_utf8_lossy(&worker.stderr)
    );
}

#[test]
fn a_component_under_a_worker_gets_the_workers_narrower_list() {
    let f = Fixture::new();
    let port = server("program");
    f.file(
        "policy.yaml",
        &format!(
            "version: 1\nsandbox:\n  paths:\n    portfolio: {{ root: ./portfolio, mode: rw }}\n  network: {{ allow: [\"127.0.0.1:{port}\"] }}\n\
             workers:\n  offline: {{ inherit: true, network: {{ allow: [] }} }}\n"
        ),
    );
    let httpget = repo().join("guests/out/httpget.wasm");
    let input = format!(r#"{{"authority":"127.0.0.1:{port}","path":"/"}}"#);
    let run = |worker: &[&str]| {
        let mut args = vec!["call", "--policy", f.path("policy.yaml").to_str().unwrap().to_owned().leak()];
        args.extend_from_slice(worker);
        args.extend([httpget.to_str().unwrap(), "get", "--input", input.as_str()]);
        Command::new(env!("CARGO_BIN_EXE_warden")).args(&args).output().unwrap()
    };
    let program = run(&[]);
    assert_eq!(String::from_utf8_lossy(&program.stdout), "{\"status\":200,\"bytes\":7}\n", "{}", String::from_utf8_lossy(&program.stderr));
    let worker = run(&["--worker", "offline"]);
    assert_eq!((worker.status.code(), String::from_utf8_lossy(&worker.stdout).as_ref()), (Some(3), ""));
    assert_eq!(
        String::from_utf8_lossy(&worker.stderr),
        format!("Cannot connect to '127.0.0.1:{port}': host not in the network allowlist.\nAllowed hosts: none\n")
    );
}

// ---- names the test controls: a private /etc/hosts ----

/// `warden ARGS` in a mount namespace of its own whose /etc/hosts also lists
/// `hosts` (`ADDRESS NAME` lines): names that resolve where the test says, a
/// cloud metadata address among them, with nothing changed outside the run.
/// Needs root, as CI is.
fn warden_with_hosts(f: &Fixture, hosts: &str, args: &[&str]) -> Out {
    f.file("hosts", &format!("127.0.0.1 localhost\n{hosts}\n"));
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", "mount --bind \"$0\" /etc/hosts && exec \"$@\""])
        .arg(f.path("hosts"))
        .arg(env!("CARGO_BIN_EXE_warden"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.starts_with("unshare:") && !stderr.starts_with("mount:"), "a private /etc/hosts needs root: {stderr}");
    Out { status: out.status.code().unwrap(), stdout: String::from_utf8_lossy(&out.stdout).into_owned(), stderr }
}

const METADATA: &str = "169.254.169.254 metadata.warden.test";

#[test]
fn a_listed_name_that_resolves_to_the_metadata_address_is_refused_for_a_command() {
    let f = Fixture::new();
    f.file("policy.yaml", "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  network: { allow: [\"metadata.warden.test:80\"] }\n  shell: {}\n");
    let policy = f.path("policy.yaml");
    let script = "curl -sS -m 5 -x \"$ALL_PROXY\" http://metadata.warden.test/latest/meta-data/";
    let r = warden_with_hosts(&f, METADATA, &["exec", "--policy", policy.to_str().unwrap(), "--", "/bin/sh", "-c", script]);
    assert_eq!(r.status, 97, "{}", r.stderr);
    assert!(
        r.stderr.ends_with(
            "\nNote: Cannot connect to 'metadata.warden.test:80': the name resolves to 169.254.169.254, a link-local address, \
             which the network allowlist does not include.\nAllowed hosts: metadata.warden.test:80\n"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn a_listed_name_that_resolves_to_the_metadata_address_is_refused_for_a_component() {
    let f = Fixture::new();
    f.file("policy.yaml", "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  network: { allow: [\"metadata.warden.test:80\"] }\n");
    let policy = f.path("policy.yaml");
    let httpget = repo().join("guests/out/httpget.wasm");
    let input = r#"{"authority":"metadata.warden.test","path":"/latest/meta-data/"}"#;
    let r = warden_with_hosts(&f, METADATA, &["call", "--policy", policy.to_str().unwrap(), httpget.to_str().unwrap(), "get", "--input", input]);
    assert_eq!((r.status, r.stdout.as_str()), (3, ""));
    assert_eq!(
        r.stderr,
        "Cannot connect to 'metadata.warden.test:80': the name resolves to 169.254.169.254, a link-local address, \
         which the network allowlist does not include.\nAllowed hosts: metadata.warden.test:80\n"
    );
}

#[test]
fn a_components_socket_to_a_listed_name_that_resolves_to_loopback_is_refused() {
    let f = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    f.file(
        "policy.yaml",
        &format!("version: 1\nsandbox:\n  paths:\n    portfolio: {{ root: ./portfolio, mode: rw }}\n  network: {{ allow: [\"rebind.warden.test:{port}\"] }}\n"),
    );
    let policy = f.path("policy.yaml");
    let net = repo().join("guests/out/hostile/net.wasm");
    let input = format!(r#"{{"host":"rebind.warden.test","port":{port}}}"#);
    let audit = f.path("audit.jsonl");
    let r = warden_with_hosts(
        &f,
        "127.0.0.1 rebind.warden.test",
        &["call", "--stats", "--audit", audit.to_str().unwrap(), "--policy", policy.to_str().unwrap(), net.to_str().unwrap(), "probe", "--input", &input],
    );
    // The name is listed, so it is looked up; the address it gave is not, so the
    // connection fails with access-denied (error 1), and the refusal is on record.
    assert_eq!(r.stdout, "lookup rebind.warden.test: RESOLVED\nconnect: failed (error 1)\n", "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "warden: denied: Cannot connect to 'rebind.warden.test:{port}': the name resolves to 127.0.0.1, a loopback address, \
             which the network allowlist does not include. Allowed hosts: rebind.warden.test:{port}\n"
        )),
        "{}",
        r.stderr
    );
    assert!(listener.accept().is_err(), "the connection reached the host");
    // The tool went on after the refusal; the audit log has it all the same.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&audit).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = &lines[0];
    let target = format!("rebind.warden.test:{port}");
    assert_eq!(
        (line["tool"].as_str(), line["operation"].as_str(), line["path"].as_str(), line["reason"].as_str(), line["decision"].as_str()),
        (Some("net.wasm probe"), Some("connect"), Some(target.as_str()), Some("network"), Some("refused"))
    );
    assert_eq!(
        line["refusal"],
        format!(
            "Cannot connect to '{target}': the name resolves to 127.0.0.1, a loopback address, \
             which the network allowlist does not include.\nAllowed hosts: {target}"
        )
    );
}

#[test]
fn without_bubblewrap_a_command_under_an_allowlist_is_refused_not_run_with_more_network() {
    let f = Fixture::new();
    let port = server("x");
    f.file("policy.yaml", &format!("version: 1\nsandbox:\n  paths:\n    portfolio: {{ root: ./portfolio, mode: rw }}\n  network: {{ allow: [\"127.0.0.1:{port}\"] }}\n  shell: {{}}\n"));
    let out = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["exec", "--policy", f.path("policy.yaml").to_str().unwrap(), "--", "/bin/sh", "-c", "echo ran > ran.md"])
        .env("WARDEN_BWRAP", "/nonexistent/bwrap")
        .env("WARDEN_LANDLOCK_ABI", "0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "warden: a network allowlist is enforced for shell commands only under bubblewrap or Landlock, neither of which is in use here; the command was not run\n"
    );
    assert!(!f.path("portfolio/ran.md").exists());
}

#[test]
fn the_bridge_in_a_sandbox_starts_nothing_a_command_planted_beside_it() {
    let f = Fixture::new();
    let port = server("allowed");
    // A program of the command's own, owned by the same uid, where `warden-full` would be.
    let script = "cp /bin/echo /tmp/warden-full && /tmp/.warden-net-bridge --version; echo \"status $?\"";
    let r = exec(&f, &format!("\"127.0.0.1:{port}\""), script);
    assert_eq!((r.status, r.stdout.as_str()), (0, "status 2\n"), "{}", r.stderr);
    assert_eq!(r.stderr, "warden: /tmp/.warden-net-bridge is a sandbox's network bridge and runs nothing else\n");
}
