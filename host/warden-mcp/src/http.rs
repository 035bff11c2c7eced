//! The streamable HTTP transport at `/mcp`: each client session gets its own
//! approval sessions. Loopback by default; a non-loopback address needs a
//! Bearer token. A request whose `Origin` is not the server's own gets 403,
//! a missing or wrong token 401, a body over 4 MiB 413.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use crate::reload::Reloader;
use crate::server::WardenMcp;
use crate::stdio::MAX_MESSAGE_BYTES;

pub struct HttpOptions {
    pub addr: SocketAddr,
    /// The Bearer token every request must carry; required off loopback.
    pub token: Option<String>,
}

/// Serves `server` over HTTP until interrupted, on a runtime of its own.
pub fn run_http(server: WardenMcp, options: HttpOptions, reloader: Option<Reloader>) -> Result<(), String> {
    let interrupted = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    crate::reload::run_serving(tokio::runtime::Builder::new_multi_thread(), server, reloader, |server| {
        serve_http(server, options, interrupted)
    })
}

/// Serves `server` over HTTP until `stop` completes.
pub async fn serve_http(server: WardenMcp, options: HttpOptions, stop: impl Future<Output = ()> + Send + 'static) -> Result<(), String> {
    let loopback = options.addr.ip().is_loopback();
    if !loopback && options.token.is_none() {
        return Err(format!("{} is not a loopback address: serving it needs --token-file", options.addr));
    }
    let listener = tokio::net::TcpListener::bind(options.addr).await.map_err(|e| format!("cannot listen on {}: {e}", options.addr))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    // A reply goes out in several small writes (head, body, end of stream); with
    // Nagle's algorithm each waited for the client's delayed ACK, 40 ms.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY not set: {e}");
        }
    });
    let stopped = tokio_util::sync::CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(own_origins(local))
        .with_max_request_body_bytes(MAX_MESSAGE_BYTES)
        // A reply that is one message goes as plain JSON; one that needs more
        // (progress, an elicitation) as an event stream.
        .with_json_response(true)
        .with_cancellation_token(stopped.child_token());
    if !loopback {
        // Off loopback, the token guards against DNS rebinding, not the Host header.
        config = config.disable_allowed_hosts();
    }
    let template = server;
    let new_client = move || template.another_client().map_err(std::io::Error::other);
    let service = StreamableHttpService::new(new_client, Arc::new(LocalSessionManager::default()), config);
    let mut app = axum::Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn(session_end_is_no_content));
    if let Some(token) = options.token {
        app = app.layer(axum::middleware::from_fn_with_state(Arc::new(token), bearer));
    }
    eprintln!("warden: serving MCP at http://{local}/mcp");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            stop.await;
            stopped.cancel();
        })
        .await
        .map_err(|e| format!("the HTTP server stopped: {e}"))
}

/// The origins a page served by this server itself would send.
fn own_origins(local: SocketAddr) -> Vec<String> {
    let port = local.port();
    let mut origins = vec![format!("http://{local}")];
    if local.ip().is_loopback() {
        origins.extend([format!("http://localhost:{port}"), format!("http://127.0.0.1:{port}"), format!("http://[::1]:{port}")]);
    }
    origins
}

/// 401 unless the request carries `Authorization: Bearer <token>`.
async fn bearer(State(token): State<Arc<String>>, request: Request, next: Next) -> Response {
    let given = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    if !given.is_some_and(|given| same(given.as_bytes(), token.as_bytes())) {
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], "a valid Bearer token is required\n").into_response();
    }
    next.run(request).await
}

/// rmcp answers a session's DELETE with 202; the Python SDK takes anything but
/// 200 or 204 for a failure and warns on every close.
async fn session_end_is_no_content(request: Request, next: Next) -> Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// Compares without returning early, so that the time taken tells nothing of the token.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_compare_whole() {
        assert!(super::same(b"secret", b"secret"));
        assert!(!super::same(b"secret", b"secreT"));
        assert!(!super::same(b"secret", b"secret2"));
        assert!(!super::same(b"", b"x"));
    }
}
