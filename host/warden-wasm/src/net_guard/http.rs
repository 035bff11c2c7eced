//! `wasi:http` outgoing requests, sent by Warden: the authority is checked
//! and dialled through `warden_net` (the list, then the address connected
//! to), TLS is spoken here for `https`, and the request goes out on that
//! connection. A refusal is `HTTP-request-denied` to the guest and a
//! [`Denial`] on the record.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http::uri::Scheme;
use http_body_util::BodyExt;
use tokio::io::{AsyncRead, AsyncWrite};
use warden_fs::Denial;
use warden_net::DialError;
use warden_policy::{Host, Target};
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use super::NetGuard;

/// Unless the guest sets its own.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

pub struct HttpHooks {
    pub(crate) guard: NetGuard,
}

type IoFuture = Box<dyn Future<Output = Result<(), Error>> + Send>;

trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

impl WasiHttpHooks for HttpHooks {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _body_errors: IoFuture,
    ) -> Box<dyn Future<Output = Result<(http::Response<WasiBody>, IoFuture), Error>> + Send> {
        let guard = self.guard.clone();
        Box::new(async move { send(&guard, request, options).await })
    }
}

async fn send(guard: &NetGuard, mut request: http::Request<WasiBody>, options: Option<RequestOptions>) -> Result<(http::Response<WasiBody>, IoFuture), Error> {
    let uri = request.uri().clone();
    let tls = uri.scheme() == Some(&Scheme::HTTPS);
    let authority = uri.authority().ok_or(Error::HttpRequestUriInvalid)?;
    let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let target = match Host::parse(authority.host()) {
        Ok(host) => Target { host, port },
        Err(why) => return Err(refuse(guard, guard.network().malformed(authority.as_str(), why))),
    };
    let connect_timeout = options.and_then(|o| o.connect_timeout).unwrap_or(DEFAULT_TIMEOUT);
    let first_byte_timeout = options.and_then(|o| o.first_byte_timeout).unwrap_or(DEFAULT_TIMEOUT);
    let tcp = match warden_net::connect_async(guard.network(), &target, connect_timeout).await {
        Ok((tcp, _)) => tcp,
        Err(DialError::Refused(refusal)) => return Err(refuse(guard, refusal)),
        Err(DialError::Failed { error, .. }) => return Err(Error::Connect(error)),
    };
    let stream: Box<dyn Stream> = if tls { Box::new(tls_over(tcp, &target.host).await?) } else { Box::new(tcp) };
    let (mut sender, connection) = tokio::time::timeout(connect_timeout, hyper::client::conn::http1::handshake(TokioIo::new(stream)))
        .await
        .map_err(|_| Error::ConnectionTimeout)?
        .map_err(Error::Hyper)?;
    let connection = tokio::spawn(connection);
    // The request line carries the path alone when not addressed to a proxy.
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    *request.uri_mut() = http::Uri::builder().path_and_query(path).build().map_err(|_| Error::HttpRequestUriInvalid)?;
    let response = tokio::time::timeout(first_byte_timeout, sender.send_request(request))
        .await
        .map_err(|_| Error::ConnectionReadTimeout)?
        .map_err(Error::Hyper)?;
    let io: IoFuture = Box::new(async move {
        match connection.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Error::Hyper(e)),
            Err(_) => Err(Error::ConnectionTerminated),
        }
    });
    Ok((response.map(|body| body.map_err(Error::Hyper).boxed_unsync()), io))
}

fn refuse(guard: &NetGuard, refusal: warden_policy::NetRefusal) -> Error {
    guard.record(Denial::Network(refusal));
    Error::HttpRequestDenied
}

async fn tls_over(tcp: tokio::net::TcpStream, host: &Host) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, Error> {
    use rustls::pki_types::ServerName;
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|_| Error::TlsProtocolError)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = match host {
        Host::Name(name) => ServerName::try_from(name.clone()).map_err(|_| Error::HttpRequestUriInvalid)?,
        Host::Ip(ip) => ServerName::from(*ip),
    };
    tokio_rustls::TlsConnector::from(Arc::new(config)).connect(name, tcp).await.map_err(Error::Tls)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::pin::Pin;

    use http_body_util::{BodyExt, Empty};
    use warden_policy::{AllowEntry, Allowlist, Network};
    use wasmtime_wasi_http::{Error, WasiHttpHooks};

    use super::HttpHooks;
    use crate::fs_guard::DenialLog;
    use crate::net_guard::NetGuard;

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

    fn get(network: Network, url: &str) -> (Result<(u16, usize), Error>, Vec<String>) {
        let denials = DenialLog::default();
        let mut hooks = HttpHooks { guard: NetGuard::new(network, denials.clone()) };
        let request = http::Request::get(url).body(Empty::new().map_err(|never| match never {}).boxed_unsync()).unwrap();
        let sent: Pin<Box<_>> = Box::into_pin(hooks.send_request(request, None, Box::new(async { Ok(()) })));
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let result = runtime.block_on(async {
            let (response, _io) = sent.await?;
            let status = response.status().as_u16();
            let body = response.into_body().collect().await?.to_bytes();
            Ok((status, body.len()))
        });
        (result, denials.snapshot().iter().map(|d| d.to_string()).collect())
    }

    fn allow(entry: &str) -> Network {
        Network::Allow(Allowlist { entries: vec![AllowEntry::parse(entry).unwrap()], listen: false })
    }

    #[test]
    fn an_allowed_authority_is_fetched_whole() {
        let port = server();
        let (result, denials) = get(allow(&format!("127.0.0.1:{port}")), &format!("http://127.0.0.1:{port}/big"));
        assert_eq!(result.unwrap(), (200, BODY));
        assert!(denials.is_empty(), "{denials:?}");
        let (result, _) = get(allow(&format!("localhost:{port}")), &format!("http://localhost:{port}/big"));
        assert_eq!(result.unwrap(), (200, BODY));
    }

    #[test]
    fn another_port_host_or_a_disabled_network_is_denied_before_connecting() {
        let port = server();
        let (result, denials) = get(allow(&format!("127.0.0.1:{port}")), &format!("http://127.0.0.1:{}/", port + 1));
        assert!(matches!(result, Err(Error::HttpRequestDenied)), "{result:?}");
        assert_eq!(
            denials,
            [format!("Cannot connect to '127.0.0.1:{}': host not in the network allowlist.\nAllowed hosts: 127.0.0.1:{port}", port + 1)]
        );
        let (result, denials) = get(allow(&format!("127.0.0.1:{port}")), "https://evil.example/");
        assert!(matches!(result, Err(Error::HttpRequestDenied)));
        assert_eq!(denials[0], format!("Cannot connect to 'evil.example:443': host not in the network allowlist.\nAllowed hosts: 127.0.0.1:{port}"));
        let (result, denials) = get(Network::Off, &format!("http://127.0.0.1:{port}/"));
        assert!(matches!(result, Err(Error::HttpRequestDenied)));
        assert_eq!(denials, [format!("Cannot connect to '127.0.0.1:{port}': network access is disabled for this sandbox.")]);
    }

    #[test]
    fn a_listed_name_that_resolves_to_loopback_is_denied() {
        let port = server();
        let name = String::from_utf8(std::process::Command::new("hostname").output().unwrap().stdout).unwrap().trim().to_lowercase();
        let (result, denials) = get(allow(&format!("{name}:{port}")), &format!("http://{name}:{port}/"));
        assert!(matches!(result, Err(Error::HttpRequestDenied)), "{result:?}");
        assert!(denials[0].starts_with(&format!("Cannot connect to '{name}:{port}': the name resolves to 127.")), "{denials:?}");
    }
}
