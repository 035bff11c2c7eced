//! HTTP client sessions (2025-11-25), bounded: each holds an audit-log handle
//! and a folder handle per mount, so a client that opens sessions without end
//! would run the server out of descriptors for everyone. At most `max` are
//! open at once, and one idle for `idle` is closed. A client over the cap gets
//! a JSON-RPC error; the sessions open go on working.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::SessionManager;
use serde_json::{json, Value};

use crate::stdio::MAX_MESSAGE_BYTES;

/// The sessions of one server.
pub struct Sessions {
    inner: LocalSessionManager,
    max: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    #[error("{0}")]
    Full(String),
}

impl Sessions {
    pub fn new(max: usize, idle: Duration) -> Sessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Sessions { inner, max: max.max(1) }
    }

    async fn open(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    fn full(&self) -> String {
        format!(
            "the server has {} client sessions open, its limit (--max-sessions); end one (HTTP DELETE with its Mcp-Session-Id) or try again when an idle one has closed",
            self.max
        )
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Checked again here: two `initialize` requests may pass the friendly check together.
        if self.open().await >= self.max {
            return Err(SessionsError::Full(self.full()));
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(&self, id: &SessionId) -> Result<impl Stream<Item = ServerSseMessage> + Send + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(&self, id: &SessionId, last_event_id: String) -> Result<impl Stream<Item = ServerSseMessage> + Send + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

/// Answers an `initialize` over the cap with a JSON-RPC error naming the
/// limit, before rmcp would make the session; every other request passes.
pub async fn cap(State(sessions): State<Arc<Sessions>>, request: Request, next: Next) -> Response {
    let opens_one = request.method() == axum::http::Method::POST && !request.headers().contains_key("mcp-session-id");
    if !opens_one || sessions.open().await < sessions.max {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_MESSAGE_BYTES).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "the message is over 4 MiB\n").into_response();
    };
    let message: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if message["method"] != "initialize" {
        return next.run(Request::from_parts(parts, Body::from(bytes))).await;
    }
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let error = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32000, "message": sessions.full() } });
    ([(header::CONTENT_TYPE, "application/json")], error.to_string()).into_response()
}
