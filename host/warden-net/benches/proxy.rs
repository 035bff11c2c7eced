//! Connection set-up through the filtering proxy (an HTTP `CONNECT` to an
//! allowed loopback port, then the server's first byte) against the same
//! connection made directly, in one run.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

use criterion::{criterion_group, criterion_main, Criterion};
use warden_net::Proxy;
use warden_policy::{AllowEntry, Allowlist, Network};

/// A server that greets every connection with one byte.
fn server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let _ = conn.write_all(b"x");
        }
    });
    port
}

fn first_byte(mut stream: TcpStream) {
    let mut byte = [0u8; 1];
    stream.read_exact(&mut byte).unwrap();
}

fn bench(c: &mut Criterion) {
    let port = server();
    let network = Network::Allow(Allowlist { entries: vec![AllowEntry::parse(&format!("127.0.0.1:{port}")).unwrap()], listen: false });
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = listener.local_addr().unwrap().port();
    let _proxy = Proxy::start(network, move || Ok(Some(listener)));
    let request = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n");
    let established = b"HTTP/1.1 200 Connection established\r\n\r\n".len();
    let mut group = c.benchmark_group("connect");
    group.bench_function("direct", |b| b.iter(|| first_byte(TcpStream::connect(("127.0.0.1", port)).unwrap())));
    group.bench_function("through the proxy", |b| {
        b.iter(|| {
            let mut stream = TcpStream::connect(("127.0.0.1", proxy_port)).unwrap();
            stream.write_all(request.as_bytes()).unwrap();
            let mut reply = vec![0u8; established];
            stream.read_exact(&mut reply).unwrap();
            first_byte(stream);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
