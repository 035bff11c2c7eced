//! A component's HTTP GET of 1 MiB from a loopback server (the `httpget`
//! guest through `wasi:http`, its host allowed by the policy's allowlist, a
//! fresh instance per call) against the same GET made by the host with a
//! plain socket, in one run. Needs the guests: run guests/build.sh first.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use warden_policy::{AllowEntry, Allowlist, Network};
use warden_wasm::{RunConfig, Runtime, RuntimeOptions};

const BODY: usize = 1 << 20;

fn server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let response = [format!("HTTP/1.1 200 OK\r\nContent-Length: {BODY}\r\nConnection: close\r\n\r\n").into_bytes(), vec![b'x'; BODY]].concat();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let _ = conn.read(&mut [0u8; 4096]);
            let _ = conn.write_all(&response);
        }
    });
    port
}

fn bench(c: &mut Criterion) {
    let port = server();
    let guest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guests/out/httpget.wasm");
    assert!(guest.exists(), "{} is missing: run guests/build.sh first", guest.display());
    let cache_dir = Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-cwasm"));
    let runtime = Runtime::new(RuntimeOptions { cache_dir, max_concurrent: 16, pooled: true }).unwrap();
    let loaded = runtime.load_file(&guest).unwrap();
    let network = Network::Allow(Allowlist { entries: vec![AllowEntry::parse(&format!("127.0.0.1:{port}")).unwrap()], listen: false });
    let config = RunConfig { network, ..RunConfig::default() };
    let input = format!("{{\"authority\":\"127.0.0.1:{port}\",\"path\":\"/big\"}}");
    let mut group = c.benchmark_group("get_1mib");
    let request = format!("GET /big HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    group.bench_function("host", |b| {
        b.iter(|| {
            let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
            // One write: the server reads once, so a request in pieces would be cut.
            stream.write_all(request.as_bytes()).unwrap();
            let mut response = Vec::with_capacity(BODY + 128);
            stream.read_to_end(&mut response).unwrap();
            assert!(response.len() > BODY);
        })
    });
    group.bench_function("component", |b| {
        b.iter(|| {
            let out = runtime.call(&loaded, &config, "get", &input).unwrap().result.unwrap();
            assert!(out.ends_with(&format!("\"bytes\":{BODY}}}")));
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
