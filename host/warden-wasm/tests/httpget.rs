//! The `httpget` guests (`tool-http` world): one GET through `wasi:http`
//! under a network allowlist, against servers the test starts on loopback.
//! In C through the bindings, in Python with `warden_tool.http_get`, in
//! JavaScript with `fetch`: each check runs once per language.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;

use common::*;
use warden_policy::{AllowEntry, Allowlist, Network};
use warden_wasm::{RunConfig, ToolError};

const BODY: usize = 1 << 20;

/// A server answering every request with 1 MiB; its port.
fn server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let _ = conn.read(&mut [0u8; 4096]);
            let _ = write!(conn, "HTTP/1.1 200 OK\r\nContent-Length: {BODY}\r\nConnection: close\r\n\r\n");
            let _ = conn.write_all(&vec![b'x'; BODY]);
        }
    });
    port
}

fn allow(entry: &str) -> Network {
    Network::Allow(Allowlist { entries: vec![AllowEntry::parse(entry).unwrap()], listen: false })
}

#[derive(Clone, Copy)]
enum Lang {
    C,
    Python,
    Js,
}

macro_rules! per_language {
    ($($check:ident),* $(,)?) => {
        mod c { $( #[test] fn $check() { super::$check(super::Lang::C) } )* }
        mod python { $( #[test] fn $check() { super::$check(super::Lang::Python) } )* }
        mod js { $( #[test] fn $check() { super::$check(super::Lang::Js) } )* }
    };
}

per_language!(
    an_allowed_host_and_port_are_fetched_whole,
    the_same_host_on_another_port_is_denied_in_the_sandboxs_words,
    another_host_and_a_bare_domain_are_denied_before_any_lookup,
    a_listed_name_that_resolves_to_loopback_is_denied,
    without_network_the_request_is_denied,
    an_authority_with_a_listed_name_as_userinfo_is_checked_by_its_real_host,
);

fn get(lang: Lang, network: Network, authority: &str) -> Result<String, ToolError> {
    let runtime = runtime();
    let guest = match lang {
        Lang::C => "httpget.wasm",
        Lang::Python => "httpget_py.wasm",
        Lang::Js => "httpget_js.wasm",
    };
    let loaded = load(&runtime, guest);
    let config = RunConfig { network, ..Default::default() };
    let input = format!("{{\"authority\":\"{authority}\",\"path\":\"/big\"}}");
    runtime.call(&loaded, &config, "get", &input).unwrap().result
}

fn an_allowed_host_and_port_are_fetched_whole(lang: Lang) {
    let port = server();
    let expected = format!("{{\"status\":200,\"bytes\":{BODY}}}");
    assert_eq!(get(lang, allow(&format!("127.0.0.1:{port}")), &format!("127.0.0.1:{port}")).unwrap(), expected);
    assert_eq!(get(lang, allow(&format!("localhost:{port}")), &format!("localhost:{port}")).unwrap(), expected);
}

fn the_same_host_on_another_port_is_denied_in_the_sandboxs_words(lang: Lang) {
    let port = server();
    let denied = get(lang, allow(&format!("127.0.0.1:{port}")), &format!("127.0.0.1:{}", port + 1)).unwrap_err();
    assert_eq!(
        denied,
        ToolError::Denied(format!(
            "Cannot connect to '127.0.0.1:{}': host not in the network allowlist.\nAllowed hosts: 127.0.0.1:{port}",
            port + 1
        ))
    );
}

fn another_host_and_a_bare_domain_are_denied_before_any_lookup(lang: Lang) {
    let port = server();
    let network = || Network::Allow(Allowlist { entries: vec![AllowEntry::parse("*.example.test:80").unwrap()], listen: false });
    let denied = get(lang, network(), "example.test").unwrap_err();
    assert_eq!(
        denied,
        ToolError::Denied("Cannot connect to 'example.test:80': host not in the network allowlist.\nAllowed hosts: *.example.test:80".into())
    );
    let denied = get(lang, network(), &format!("evil.example:{port}")).unwrap_err();
    assert_eq!(
        denied,
        ToolError::Denied(format!("Cannot connect to 'evil.example:{port}': host not in the network allowlist.\nAllowed hosts: *.example.test:80"))
    );
}

fn a_listed_name_that_resolves_to_loopback_is_denied(lang: Lang) {
    let port = server();
    let name = String::from_utf8(std::process::Command::new("hostname").output().unwrap().stdout).unwrap().trim().to_lowercase();
    let resolved: Vec<_> = std::net::ToSocketAddrs::to_socket_addrs(&(name.as_str(), port)).unwrap().collect();
    assert!(resolved.iter().all(|a| a.ip().is_loopback()), "this test needs the host name to resolve to loopback: {resolved:?}");
    let denied = get(lang, allow(&format!("{name}:{port}")), &format!("{name}:{port}")).unwrap_err();
    assert_eq!(
        denied,
        ToolError::Denied(format!(
            "Cannot connect to '{name}:{port}': the name resolves to {}, a loopback address, which the network allowlist does not include.\nAllowed hosts: {name}:{port}",
            resolved[0].ip()
        ))
    );
}

fn without_network_the_request_is_denied(lang: Lang) {
    let port = server();
    let denied = get(lang, Network::Off, &format!("127.0.0.1:{port}")).unwrap_err();
    assert_eq!(denied, ToolError::Denied(format!("Cannot connect to '127.0.0.1:{port}': network access is disabled for this sandbox.")));
}

fn an_authority_with_a_listed_name_as_userinfo_is_checked_by_its_real_host(lang: Lang) {
    // `listed.example.test:80@127.0.0.1:PORT` names 127.0.0.1; the listed name is only userinfo.
    let port = server();
    let network = || Network::Allow(Allowlist { entries: vec![AllowEntry::parse("*.example.test:80").unwrap()], listen: false });
    for authority in [format!("x.example.test:80@127.0.0.1:{port}"), format!("x.example.test@127.0.0.1:{port}")] {
        let denied = get(lang, network(), &authority).unwrap_err();
        assert_eq!(
            denied,
            ToolError::Denied(format!("Cannot connect to '127.0.0.1:{port}': host not in the network allowlist.\nAllowed hosts: *.example.test:80")),
            "{authority}"
        );
    }
}

#[test]
fn the_c_guest_refuses_a_path_it_cannot_use_rather_than_fetching_the_default() {
    // "/big\u0000x" would be "/" in C if the NUL made the field look left out.
    let port = server();
    let runtime = runtime();
    let loaded = load(&runtime, "httpget.wasm");
    let config = RunConfig { network: allow(&format!("127.0.0.1:{port}")), ..Default::default() };
    let input = format!(r#"{{"authority":"127.0.0.1:{port}","path":"/big\u0000x"}}"#);
    let out = runtime.call(&loaded, &config, "get", &input).unwrap().result;
    assert_eq!(out, Err(ToolError::InvalidInput("\"path\" and \"scheme\" must be strings without NUL".into())));
}
