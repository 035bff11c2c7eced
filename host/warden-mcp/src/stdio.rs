//! The stdio transport: one client, JSON-RPC messages one per line on stdin
//! and stdout. Nothing else may write to stdout; logs go to stderr.
//!
//! rmcp's own stdio transport skips a line it cannot parse in silence; this one
//! answers it with a JSON-RPC error (-32700 for JSON that does not parse, -32600
//! for a message that is not JSON-RPC or is over the size limit) and goes on.

use std::sync::Arc;

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::reload::Reloader;
use crate::server::WardenMcp;

/// The longest message read, like the HTTP transport's body limit; a longer
/// line is answered with an error and skipped without being kept in memory.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Serves `server` on stdin and stdout until the client closes them, on a
/// runtime of its own.
pub fn run_stdio(server: WardenMcp, reloader: Option<Reloader>) -> Result<(), String> {
    // One thread for all the async work: a message goes from stdin to the
    // handler and back without waking another thread; tools still run on the
    // blocking pool, in parallel.
    crate::reload::run_serving(tokio::runtime::Builder::new_current_thread(), server, reloader, serve_stdio)
}

/// Serves `server` on stdin and stdout until the client closes them.
pub async fn serve_stdio(server: WardenMcp) -> Result<(), String> {
    let (input, output) = stdio();
    let transport = LineTransport::new(input, output);
    let running = server.serve(transport).await.map_err(|e| format!("MCP start-up over stdio failed: {e}"))?;
    running.waiting().await.map_err(|e| format!("the MCP server stopped: {e}"))?;
    Ok(())
}

type Input = Box<dyn tokio::io::AsyncRead + Send + Unpin>;
type Output = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// stdin and stdout, as non-blocking pipes of the runtime's own when they are
/// pipes (as MCP clients start servers); else tokio's stdin and stdout, which
/// hand every read and write to the blocking pool and back, a thread switch
/// each way.
fn stdio() -> (Input, Output) {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;
    let input: Input = match std::io::stdin().as_fd().try_clone_to_owned().and_then(pipe::Receiver::from_owned_fd) {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    };
    let output: Output = match std::io::stdout().as_fd().try_clone_to_owned().and_then(pipe::Sender::from_owned_fd) {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdout()),
    };
    (input, output)
}

/// JSON-RPC over newline-delimited lines, answering what it cannot read.
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read, kept here across calls.
    partial: Vec<u8>,
    too_long: bool,
    out: Arc<Mutex<W>>,
}

/// One line of input.
enum Line {
    Text(Vec<u8>),
    /// Longer than the limit; what was read of it is gone.
    TooLong,
}

impl<R, W> LineTransport<R, W>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: R, write: W) -> Self {
        LineTransport { read: BufReader::new(read), partial: Vec::new(), too_long: false, out: Arc::new(Mutex::new(write)) }
    }

    /// The next line, keeping at most the limit in memory; `None` at the end.
    /// Cancel-safe (rmcp drops this future whenever it has a message to send
    /// first): what was read of a line waits in `self` for the next call.
    async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                let rest = std::mem::take(&mut self.partial);
                let too_long = std::mem::take(&mut self.too_long);
                return Ok((too_long || !rest.is_empty()).then_some(if too_long { Line::TooLong } else { Line::Text(rest) }));
            }
            let (chunk, used) = match available.iter().position(|&b| b == b'\n') {
                Some(end) => (&available[..end], end + 1),
                None => (available, available.len()),
            };
            let ended = used > chunk.len();
            self.too_long |= self.partial.len() + chunk.len() > MAX_MESSAGE_BYTES;
            if self.too_long {
                self.partial.clear();
            } else {
                self.partial.extend_from_slice(chunk);
            }
            self.read.consume(used);
            if ended {
                let line = std::mem::take(&mut self.partial);
                return Ok(Some(if std::mem::take(&mut self.too_long) { Line::TooLong } else { Line::Text(line) }));
            }
        }
    }
}

async fn write_line<W: tokio::io::AsyncWrite + Unpin>(out: &Mutex<W>, message: &impl serde::Serialize) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let mut out = out.lock().await;
    out.write_all(&line).await?;
    out.flush().await
}

const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;

/// The error for a line that is not a message the server can take, with the
/// request's id when it has a usable one, else `null`. A response's id (one
/// with a result or an error and no method) names a request of the server's
/// own, never the client's: it is not used.
fn unreadable(message: Option<&Value>, code: i32, why: String) -> Value {
    let response = message.is_some_and(|m| m.get("method").is_none() && (m.get("result").is_some() || m.get("error").is_some()));
    let id = message.filter(|_| !response).and_then(|m| m.get("id")).filter(|id| id.is_string() || id.is_number()).cloned().unwrap_or(Value::Null);
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": why } })
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(&mut self, item: TxJsonRpcMessage<RoleServer>) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        async move { write_line(&out, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let answer = match self.next_line().await {
                Ok(None) => return None,
                Err(e) => {
                    tracing::warn!("stdin: {e}");
                    return None;
                }
                Ok(Some(Line::TooLong)) => unreadable(
                    None,
                    INVALID_REQUEST,
                    format!("Invalid request: the message is longer than {MAX_MESSAGE_BYTES} bytes"),
                ),
                Ok(Some(Line::Text(line))) if line.trim_ascii().is_empty() => continue,
                Ok(Some(Line::Text(line))) => match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(&line) {
                    Ok(message) => return Some(message),
                    // Parsed again only to tell which error it is, and to find the id.
                    Err(e) => match serde_json::from_slice::<Value>(&line) {
                        Err(e) => unreadable(None, PARSE_ERROR, format!("Parse error: {e}")),
                        Ok(value) => unreadable(Some(&value), INVALID_REQUEST, format!("Invalid request: {e}")),
                    },
                },
            };
            if let Err(e) = write_line(&self.out, &answer).await {
                tracing::warn!("stdout: {e}");
                return None;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out.lock().await.flush().await
    }
}
