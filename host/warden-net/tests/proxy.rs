//! The proxy's protocols against what a hostile client sends, on host loopback
//! (the bridge is tested through `warden exec` in tests/cli/network.rs).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

use warden_net::Proxy;
use warden_policy::{AllowEntry, Allowlist, Network};

/// A server that sends "hi", and a proxy allowing only it; the proxy's port.
fn setup() -> (u16, u16, Proxy) {
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut conn in server.incoming().flatten() {
            let _ = conn.write_all(b"hi");
        }
    });
    let network = Network::Allow(Allowlist { entries: vec![AllowEntry::parse(&format!("127.0.0.1:{port}")).unwrap()], listen: false });
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = listener.local_addr().unwrap().port();
    (port, proxy_port, Proxy::start(network, move || Ok(Some(listener))))
}

fn exchange(proxy_port: u16, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(("127.0.0.1", proxy_port)).unwrap();
    stream.write_all(request).unwrap();
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    reply
}

fn socks_connect(address: &[u8], port: u16) -> Vec<u8> {
    let mut request = vec![5, 1, 0, 5, 1, 0];
    request.extend_from_slice(address);
    request.extend_from_slice(&port.to_be_bytes());
    request
}

#[test]
fn socks5_connects_to_an_allowed_address_and_refuses_others_by_ruleset() {
    let (port, proxy_port, proxy) = setup();
    let reply = exchange(proxy_port, &socks_connect(&[1, 127, 0, 0, 1], port));
    assert_eq!(reply, [&[5, 0][..], &[5, 0, 0, 1, 0, 0, 0, 0, 0, 0], b"hi"].concat());
    let reply = exchange(proxy_port, &socks_connect(&[1, 127, 0, 0, 1], port + 1));
    assert_eq!(reply, [5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
    let refusals = proxy.finish();
    assert_eq!(refusals.len(), 1);
    assert_eq!(
        refusals[0].to_string(),
        format!("Cannot connect to '127.0.0.1:{}': host not in the network allowlist.\nAllowed hosts: 127.0.0.1:{port}", port + 1)
    );
}

#[test]
fn socks5_refuses_a_nul_in_a_name_bind_and_udp_and_clients_that_insist_on_passwords() {
    let (port, proxy_port, proxy) = setup();
    let mut name = vec![3, 13];
    name.extend_from_slice(b"evil\0.example");
    assert_eq!(exchange(proxy_port, &socks_connect(&name, port)), [5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
    // BIND (2) and UDP ASSOCIATE (3): not supported.
    for command in [2u8, 3] {
        let mut request = socks_connect(&[1, 127, 0, 0, 1], port);
        request[4] = command;
        assert_eq!(exchange(proxy_port, &request), [5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0]);
    }
    // Only username/password offered: no acceptable method.
    assert_eq!(exchange(proxy_port, &[5, 1, 2]), [5, 0xff]);
    let refusals = proxy.finish();
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(refusals[0].to_string().starts_with("Cannot connect to 'evil\\0.example:"), "{}", refusals[0]);
}

#[test]
fn http_connect_and_absolute_form_pass_only_to_the_list() {
    let (port, proxy_port, proxy) = setup();
    let reply = exchange(proxy_port, format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes());
    assert_eq!(reply, b"HTTP/1.1 200 Connection established\r\n\r\nhi");
    let reply = String::from_utf8(exchange(proxy_port, format!("GET http://127.0.0.1:{}/ HTTP/1.1\r\nHost: x\r\n\r\n", port + 1).as_bytes())).unwrap();
    assert!(reply.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{reply}");
    assert!(reply.ends_with(&format!("\r\n\r\nCannot connect to '127.0.0.1:{}': host not in the network allowlist.\nAllowed hosts: 127.0.0.1:{port}\n", port + 1)), "{reply}");
    let reply = String::from_utf8(exchange(proxy_port, b"GET / HTTP/1.1\r\n\r\n")).unwrap();
    assert!(reply.starts_with("HTTP/1.1 400 Bad Request\r\n") && reply.contains("CONNECT requests and http:// URLs only"), "{reply}");
    let reply = String::from_utf8(exchange(proxy_port, format!("GET http://user@127.0.0.1:{port}/ HTTP/1.1\r\n\r\n").as_bytes())).unwrap();
    assert!(reply.contains("credentials in the URL are not passed on"), "{reply}");
    let reply = String::from_utf8(exchange(proxy_port, &[b'G'; 70 * 1024])).unwrap();
    assert!(reply.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{reply}");
    assert_eq!(proxy.finish().len(), 2);
}

#[test]
fn finishing_ends_tunnels_to_an_idle_server() {
    // A server that accepts and then says nothing, ever.
    let idle = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = idle.local_addr().unwrap().port();
    let held = std::thread::spawn(move || idle.accept().map(|(conn, _)| conn));
    let network = Network::Allow(Allowlist { entries: vec![AllowEntry::parse(&format!("127.0.0.1:{port}")).unwrap()], listen: false });
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = listener.local_addr().unwrap().port();
    let proxy = Proxy::start(network, move || Ok(Some(listener)));
    let mut client = TcpStream::connect(("127.0.0.1", proxy_port)).unwrap();
    client.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes()).unwrap();
    let mut reply = [0u8; 39];
    client.read_exact(&mut reply).unwrap();
    let mut server_side = held.join().unwrap().unwrap();
    // Without the fix these reads would wait forever: fail instead.
    for socket in [&server_side, &client] {
        socket.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
    }
    proxy.finish();
    // The proxy let go of both ends: the server sees its client leave, and so does the client.
    assert_eq!(server_side.read(&mut [0u8; 1]).unwrap(), 0);
    assert_eq!(client.read(&mut [0u8; 1]).unwrap(), 0);
}
