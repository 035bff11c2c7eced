//! The console over HTTP: the page, its JSON, its event stream, and the
//! person's answers, cancels and revocations.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path as UrlPath, Query, Request, State};
use axum::middleware::Next;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, COOKIE, HOST, LOCATION, ORIGIN, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

use crate::audit_view::{self, Filter};
use crate::auth::{Auth, COOKIE as COOKIE_NAME, CSRF_HEADER};
use crate::hub::{Console, Decision};

const PAGE: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const STYLE: &str = include_str!("page/app.css");
/// No script, style, frame or connection but the console's own.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; \
                      base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

struct App {
    console: Console,
    auth: Auth,
    audit: Arc<std::sync::Mutex<audit_view::Cache>>,
}

/// A console being served.
pub struct Served {
    /// Where the person logs in, once: `http://127.0.0.1:PORT/login?token=...`.
    pub login_url: String,
    pub port: u16,
    pub task: tokio::task::JoinHandle<()>,
}

/// Serves `console` on `listener`, which must be on loopback: the console is
/// where access is granted, and nothing off this machine reaches it.
pub async fn serve(console: Console, listener: tokio::net::TcpListener) -> std::io::Result<Served> {
    let address = listener.local_addr()?;
    loopback_only(address)?;
    let (auth, secret) = Auth::new(address.port())?;
    let host = if address.is_ipv6() { format!("[{}]", address.ip()) } else { address.ip().to_string() };
    console.served_at(format!("http://{host}:{}", address.port()));
    let app = Arc::new(App { console, auth, audit: Arc::default() });
    // Everything but the login is admitted first (`admit`), before its extractors run.
    let admitted = Router::new()
        .route("/", get(|| async { page_file("text/html; charset=utf-8", PAGE) }))
        .route("/app.js", get(|| async { page_file("text/javascript; charset=utf-8", SCRIPT) }))
        .route("/app.css", get(|| async { page_file("text/css; charset=utf-8", STYLE) }))
        .route("/api/state", get(state))
        .route("/api/events", get(events))
        .route("/api/audit", get(audit))
        .route("/api/questions/{id}", post(answer))
        .route("/api/calls/{id}/cancel", post(cancel))
        .route("/api/grants/{source}/revoke", post(revoke))
        .route_layer(axum::middleware::from_fn_with_state(app.clone(), admit));
    let router = Router::new()
        .route("/login", get(login))
        .merge(admitted)
        .layer(axum::middleware::map_response(hardened))
        .with_state(app);
    let task = tokio::spawn(crate::listener::serve_bounded(listener, router, crate::listener::Bounds::default()));
    Ok(Served { login_url: format!("http://{host}:{}/login?token={secret}", address.port()), port: address.port(), task })
}

/// Serves `console` at `address` (loopback) from a thread of its own, for
/// hosts that are not async themselves; the login URL, once bound.
pub fn serve_in_background(console: Console, address: std::net::SocketAddr) -> std::io::Result<String> {
    loopback_only(address)?;
    let listener = std::net::TcpListener::bind(address)?;
    listener.set_nonblocking(true)?;
    let (sender, bound) = std::sync::mpsc::channel();
    std::thread::Builder::new().name("warden-console".into()).spawn(move || {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(e) => return drop(sender.send(Err(e))),
        };
        runtime.block_on(async move {
            let served = match tokio::net::TcpListener::from_std(listener) {
                Ok(listener) => serve(console, listener).await,
                Err(e) => Err(e),
            };
            match served {
                Ok(served) => {
                    let _ = sender.send(Ok(served.login_url));
                    let _ = served.task.await;
                }
                Err(e) => drop(sender.send(Err(e))),
            }
        });
    })?;
    bound.recv().map_err(|_| std::io::Error::other("the console's thread stopped"))?
}

/// The console is where access is granted: nothing off this machine reaches it.
pub(crate) fn loopback_only(address: std::net::SocketAddr) -> std::io::Result<()> {
    if address.ip().is_loopback() {
        return Ok(());
    }
    Err(std::io::Error::other(format!("the console serves loopback only (127.0.0.1 or ::1), not {}: it is where access is granted", address.ip())))
}

/// Headers every answer carries: no caching, no sniffing, no framing, no
/// referrer; and `Connection: close` on a refusal or an error.
async fn hardened(mut response: Response) -> Response {
    // A refused or failed request's connection goes with it (401, 403, 404 alike): nobody
    // keeps a slot by asking wrongly.
    let refused = response.status().as_u16() >= 400;
    let headers = response.headers_mut();
    if refused {
        headers.insert(axum::http::header::CONNECTION, HeaderValue::from_static("close"));
    }
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    response
}

fn refusal(status: StatusCode, why: &'static str) -> Response {
    (status, [(CONTENT_TYPE, "text/plain; charset=utf-8")], why).into_response()
}

/// A request the console will not serve, and why.
struct Refused(StatusCode, &'static str);

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        refusal(self.0, self.1)
    }
}

/// Whether a request is admitted: the console's own `Host` and a session
/// cookie; for the API (`api`: anything with data) the session's CSRF token
/// too, which only the console's own page has; for a change also the same origin.
fn admitted(app: &App, method: &Method, headers: &HeaderMap, api: bool) -> Result<(), Refused> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if !app.auth.host_ok(header(HOST.as_str())) {
        return Err(Refused(StatusCode::FORBIDDEN, "this is not the console's address"));
    }
    let Some(csrf) = app.auth.session(header(COOKIE.as_str())) else {
        return Err(Refused(StatusCode::UNAUTHORIZED, "log in with the URL Warden printed when it started the console"));
    };
    if *method != Method::GET {
        let own = header(HOST.as_str()).map(|host| format!("http://{host}"));
        if header(ORIGIN.as_str()).is_none() || header(ORIGIN.as_str()) != own.as_deref() {
            return Err(Refused(StatusCode::FORBIDDEN, "a change must come from the console's own page"));
        }
    }
    if (api || *method != Method::GET) && header(CSRF_HEADER).is_none_or(|given| !crate::auth::same(given, &csrf)) {
        return Err(Refused(StatusCode::FORBIDDEN, "a request must carry the page's CSRF token"));
    }
    Ok(())
}

/// Lets through only what [`admitted`] admits.
async fn admit(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let api = request.uri().path().starts_with("/api/");
    match admitted(&app, request.method(), request.headers(), api) {
        Ok(()) => next.run(request).await,
        Err(refused) => refused.into_response(),
    }
}

#[derive(Deserialize)]
struct Login {
    token: String,
}

async fn login(State(app): State<Arc<App>>, headers: HeaderMap, Query(login): Query<Login>) -> Response {
    if !app.auth.host_ok(headers.get(HOST).and_then(|v| v.to_str().ok())) {
        return refusal(StatusCode::FORBIDDEN, "this is not the console's address");
    }
    match app.auth.log_in(&login.token) {
        Ok(Some((cookie, csrf))) => {
            let set = format!("{COOKIE_NAME}={cookie}; HttpOnly; SameSite=Strict; Path=/");
            // The token rides in the fragment, which no request carries: only the page reads it.
            (StatusCode::SEE_OTHER, [(SET_COOKIE, set), (LOCATION, format!("/#csrf={csrf}"))]).into_response()
        }
        Ok(None) => refusal(StatusCode::UNAUTHORIZED, "this login URL is not valid, or was used already; restart the console for a new one"),
        Err(_) => refusal(StatusCode::INTERNAL_SERVER_ERROR, "cannot make a session"),
    }
}

fn page_file(content_type: &'static str, body: &'static str) -> Response {
    ([(CONTENT_TYPE, content_type)], body).into_response()
}

async fn state(State(app): State<Arc<App>>) -> Response {
    Json(app.console.snapshot()).into_response()
}

/// A `changed` event whenever the console's state changes (and one at once),
/// carrying the state itself (its CSRF token aside), so that the page shows
/// a new question without another request.
async fn events(State(app): State<Arc<App>>) -> Response {
    let changes = app.console.changes();
    let console = app.console.clone();
    let stream = futures_util::stream::unfold((changes, console, true), |(mut changes, console, first)| async move {
        if !first && changes.changed().await.is_err() {
            return None;
        }
        changes.borrow_and_update();
        let state = console.snapshot().to_string();
        Some((Ok::<_, Infallible>(Event::default().event("changed").data(state)), (changes, console, false)))
    });
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

async fn audit(State(app): State<Arc<App>>, Query(filter): Query<Filter>) -> Response {
    let path = app.console.audit().cloned();
    let cache = app.audit.clone();
    let viewed = move || audit_view::view(path.as_deref(), &mut cache.lock().unwrap_or_else(|p| p.into_inner()), &filter);
    match tokio::task::spawn_blocking(viewed).await {
        Ok(view) => Json(view).into_response(),
        Err(_) => refusal(StatusCode::INTERNAL_SERVER_ERROR, "the audit log could not be read"),
    }
}

#[derive(Deserialize)]
struct Answered {
    /// `once`, `session` or `deny`.
    decision: String,
    #[serde(default)]
    folder: usize,
}

async fn answer(State(app): State<Arc<App>>, UrlPath(id): UrlPath<u64>, body: Bytes) -> Response {
    let Ok(given) = serde_json::from_slice::<Answered>(&body) else {
        return refusal(StatusCode::BAD_REQUEST, "the answer is JSON: {\"decision\": \"once\", \"folder\": 0}");
    };
    let decision = match given.decision.as_str() {
        "once" => Decision::Once { folder: given.folder },
        "session" => Decision::Session { folder: given.folder },
        "deny" => Decision::Deny,
        _ => return refusal(StatusCode::BAD_REQUEST, "the decision is once, session or deny"),
    };
    match app.console.answer(id, decision) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(why) => refusal(StatusCode::CONFLICT, why),
    }
}

async fn cancel(State(app): State<Arc<App>>, UrlPath(id): UrlPath<u64>) -> Response {
    if app.console.cancel(id) { StatusCode::NO_CONTENT.into_response() } else { refusal(StatusCode::CONFLICT, "that call is no longer running") }
}

#[derive(Deserialize)]
struct Revoked {
    access: String,
    path: String,
}

async fn revoke(State(app): State<Arc<App>>, UrlPath(source): UrlPath<u64>, body: Bytes) -> Response {
    let Ok(given) = serde_json::from_slice::<Revoked>(&body) else {
        return refusal(StatusCode::BAD_REQUEST, "the grant is JSON: {\"access\": \"write\", \"path\": \"/p\"}");
    };
    // Revoking writes the audit log and syncs it: off the async threads.
    let console = app.console.clone();
    let revoked = tokio::task::spawn_blocking(move || console.revoke(source, &given.access, &given.path)).await.unwrap_or(false);
    if revoked {
        StatusCode::NO_CONTENT.into_response()
    } else {
        refusal(StatusCode::CONFLICT, "that grant is no longer in force")
    }
}
