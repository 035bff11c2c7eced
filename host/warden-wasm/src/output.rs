//! Guest stdout and stderr: passed through or captured, never past a limit.

use std::io::Write;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError, StreamResult};

/// Where a stream's bytes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// The host process's own stdout or stderr.
    Stdout,
    Stderr,
    /// Kept in memory and returned with the outcome.
    Capture,
}

/// One guest output stream with a byte limit shared by all its handles.
#[derive(Clone)]
pub struct CappedOutput {
    inner: Arc<Inner>,
}

struct Inner {
    name: &'static str,
    sink: Sink,
    limit: u64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    written: u64,
    captured: Vec<u8>,
}

/// The guest wrote more than its output limit; the run stops with this.
#[derive(Debug, thiserror::Error)]
#[error("the tool wrote more than the output limit of {limit} bytes to {stream}")]
pub struct OutputLimitExceeded {
    pub stream: &'static str,
    pub limit: u64,
}

impl CappedOutput {
    /// `name` is `stdout` or `stderr`, for the limit's message.
    pub fn new(name: &'static str, sink: Sink, limit: u64) -> CappedOutput {
        CappedOutput {
            inner: Arc::new(Inner { name, sink, limit, state: Mutex::default() }),
        }
    }

    /// Bytes captured so far (empty when passed through).
    pub fn captured(&self) -> Vec<u8> {
        self.inner.state.lock().unwrap().captured.clone()
    }

    fn push(&self, bytes: &[u8]) -> Result<(), OutputLimitExceeded> {
        let mut state = self.inner.state.lock().unwrap();
        if state.written + bytes.len() as u64 > self.inner.limit {
            return Err(OutputLimitExceeded { stream: self.inner.name, limit: self.inner.limit });
        }
        state.written += bytes.len() as u64;
        // A host stream that is gone (a closed pipe) loses the output, not the run.
        match self.inner.sink {
            Sink::Stdout => drop(std::io::stdout().write_all(bytes)),
            Sink::Stderr => drop(std::io::stderr().write_all(bytes)),
            Sink::Capture => state.captured.extend_from_slice(bytes),
        }
        Ok(())
    }
}

impl IsTerminal for CappedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CappedOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for CappedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes).map_err(|e| StreamError::Trap(e.into()))
    }

    fn flush(&mut self) -> StreamResult<()> {
        match self.inner.sink {
            Sink::Stdout => drop(std::io::stdout().flush()),
            Sink::Stderr => drop(std::io::stderr().flush()),
            Sink::Capture => {}
        }
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(64 * 1024)
    }
}

impl AsyncWrite for CappedOutput {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Poll::Ready(self.push(buf).map(|()| buf.len()).map_err(std::io::Error::other))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
