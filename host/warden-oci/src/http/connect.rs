//! One connection per request: TCP, then TLS for `https` (rustls with the
//! webpki roots), then HTTP/1.1.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Empty;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;

use super::url::Url;
use super::Reach;

pub fn tls_config() -> Arc<rustls::ClientConfig> {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

/// Sends a GET with `headers` and returns the response, its body unread.
pub async fn get(tls: &Arc<rustls::ClientConfig>, url: &Url, headers: &http::HeaderMap, reach: Reach) -> Result<http::Response<Incoming>, String> {
    let tcp = dial(url, reach).await?;
    let request = {
        let mut builder = http::Request::get(&url.path_and_query).header(http::header::HOST, &url.authority);
        for (name, value) in headers {
            builder = builder.header(name, value);
        }
        builder.body(Empty::<Bytes>::new()).map_err(|e| format!("cannot ask for {}: {e}", url.shown()))?
    };
    if url.https {
        let name = ServerName::try_from(url.host().to_owned()).map_err(|e| format!("'{}' is not a TLS server name: {e}", url.host()))?;
        let tls = tokio_rustls::TlsConnector::from(tls.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS with {} failed: {}", crate::shown(&url.authority), crate::shown(&e.to_string())))?;
        send(TokioIo::new(tls), request, url).await
    } else {
        send(TokioIo::new(tcp), request, url).await
    }
}

/// Every address the name resolves to is checked before any is connected to.
async fn dial(url: &Url, reach: Reach) -> Result<TcpStream, String> {
    let cannot = |e: std::io::Error| format!("cannot connect to {}: {e}", crate::shown(&url.authority));
    let addresses: Vec<_> = tokio::net::lookup_host((url.host(), url.port())).await.map_err(cannot)?.collect();
    for address in &addresses {
        let ip = address.ip().to_canonical();
        match reach {
            Reach::Public(how) => {
                if let Some(kind) = warden_policy::non_public(ip) {
                    return Err(format!("{how} {}, which is {kind} ({ip}): refused", url.shown()));
                }
            }
            Reach::Loopback if !ip.is_loopback() => {
                return Err(format!("{} is reached over plain HTTP, which is for this host only, and it resolves to {ip}: refused", url.shown()));
            }
            Reach::Loopback | Reach::Any => {}
        }
    }
    let mut last = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(tcp) => return Ok(tcp),
            Err(e) => last = Some(e),
        }
    }
    Err(cannot(last.unwrap_or_else(|| std::io::Error::other("no address"))))
}

async fn send<T>(io: T, request: http::Request<Empty<Bytes>>, url: &Url) -> Result<http::Response<Incoming>, String>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(io).await.map_err(|e| format!("HTTP with {} failed: {e}", crate::shown(&url.authority)))?;
    tokio::spawn(connection);
    sender.send_request(request).await.map_err(|e| format!("{}: {e}", url.shown()))
}
