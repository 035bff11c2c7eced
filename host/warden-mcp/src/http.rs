//! The streamable HTTP transport at `/mcp`: each client session gets its own
//! approval sessions. Every request needs the bearer token, loopback
//! included (`token.rs`): a missing or wrong one gets 401. A request whose
//! `Origin` is not the server's own gets 403, as does a `Host` other than
//! the server's own address when it serves loopback (DNS rebinding); a body
//! over 4 MiB 413. Sessions are bounded (`sessions.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use crate::reload::Reloader;
use crate::server::WardenMcp;
use crate::sessions::Sessions;
use crate::stdio::MAX_MESSAGE_BYTES;
use crate::token::Token;

pub struct HttpOptions {
    pub addr: SocketAddr,
    /// The token every request must carry.
    pub token: Token,
    /// Client sessions open at once; an `initialize` beyond gets a JSON-RPC error.
    pub max_sessions: usize,
    /// A session idle this long is closed.
    pub session_idle: Duration,
}

/// Sessions open at once unless `--max-sessions` says otherwise.
pub const DEFAULT_MAX_SESSIONS: usize = 64;
/// How long an idle session stays unless `--session-idle` says otherwise.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(300);

/// Serves `server` over HTTP until interrupted, on a runtime of its own.
pub fn run_http(server: WardenMcp, options: HttpOptions, reloader: Option<Reloader>) -> Result<(), String> {
    let interrupted = async {
        let mut terminated = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            Some(()) = async { terminated.as_mut()?.recv().await } => {}
        }
    };
    crate::reload::run_serving(tokio::runtime::Builder::new_multi_thread(), server, reloader, |server| {
        serve_http(server, options, interrupted)
    })
}

/// Serves `server` over HTTP until `stop` completes.
pub async fn serve_http(server: WardenMcp, options: HttpOptions, stop: impl Future<Output = ()> + Send + 'static) -> Result<(), String> {
    let loopback = options.addr.ip().is_loopback();
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
    config = if loopback {
        config.with_allowed_hosts(own_hosts(local))
    } else {
        // Off loopback, the token guards against DNS rebinding, not the Host header.
        config.disable_allowed_hosts()
    };
    let template = server;
    let new_client = move || template.another_client().map_err(std::io::Error::other);
    let sessions = Arc::new(Sessions::new(options.max_sessions, options.session_idle));
    let service = StreamableHttpService::new(new_client, sessions.clone(), config);
    let token = Arc::new(options.token);
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(session_end_is_no_content))
        .layer(axum::middleware::from_fn_with_state(sessions, crate::sessions::cap))
        .layer(axum::middleware::from_fn_with_state(token.clone(), bearer));
    let url = format!("http://{local}/mcp");
    eprintln!("warden: serving MCP at {url}");
    let file = token.file.display();
    eprintln!("warden: token file: {file} (this user only); every request needs the header \"Authorization: Bearer <its contents>\"");
    eprintln!("warden: for example: claude mcp add --transport http warden {url} --header \"Authorization: Bearer $(cat {file})\"");
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

/// The `Host` values a client of this server sends: its own address, and
/// the loopback names, with its port.
fn own_hosts(local: SocketAddr) -> Vec<String> {
    let port = local.port();
    let own = match local.ip() {
        std::net::IpAddr::V6(ip) => format!("[{ip}]:{port}"),
        std::net::IpAddr::V4(ip) => format!("{ip}:{port}"),
    };
    vec![own, format!("localhost:{port}"), format!("127.0.0.1:{port}"), format!("[::1]:{port}")]
}

/// 401 unless the request carries `Authorization: Bearer <token>`.
async fn bearer(State(token): State<Arc<Token>>, request: Request, next: Next) -> Response {
    if !token.admits(request.headers().get(header::AUTHORIZATION)) {
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
