//! The console's TCP listener, bounded: at most [`MAX_CONNECTIONS`] at once,
//! and a connection that moves no byte either way for [`IDLE`] is closed.
//! A process on the same loopback (a sandboxed command under `network: true`)
//! may open connections it never uses; they cannot hold the page forever.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::serve::Listener;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

pub const MAX_CONNECTIONS: usize = 64;
/// Longer than the event stream's keep-alive (15 s), which is traffic.
pub const IDLE: Duration = Duration::from_secs(60);

pub struct Bounded {
    inner: TcpListener,
    slots: Arc<Semaphore>,
    idle: Duration,
}

impl Bounded {
    pub fn new(inner: TcpListener) -> Bounded {
        Bounded::with(inner, MAX_CONNECTIONS, IDLE)
    }

    fn with(inner: TcpListener, connections: usize, idle: Duration) -> Bounded {
        Bounded { inner, slots: Arc::new(Semaphore::new(connections)), idle }
    }
}

impl Listener for Bounded {
    type Io = Connection;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Connection, SocketAddr) {
        let slot = self.slots.clone().acquire_owned().await.expect("the semaphore is never closed");
        let (stream, address) = Listener::accept(&mut self.inner).await;
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY not set: {e}");
        }
        (Connection { stream, idle_for: self.idle, idle: Box::pin(tokio::time::sleep(self.idle)), _slot: slot }, address)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// An accepted connection: its slot, and the time it may stay idle.
pub struct Connection {
    stream: TcpStream,
    idle_for: Duration,
    idle: Pin<Box<Sleep>>,
    _slot: OwnedSemaphorePermit,
}

impl Connection {
    /// Closed when idle too long; otherwise `moved` (bytes went) starts the wait again.
    fn check<T>(&mut self, cx: &mut Context<'_>, polled: Poll<io::Result<T>>, moved: bool) -> Poll<io::Result<T>> {
        if moved {
            let until = Instant::now() + self.idle_for;
            self.idle.as_mut().reset(until);
        } else if polled.is_pending() && self.idle.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "the console's connection was idle")));
        }
        polled
    }
}

impl AsyncRead for Connection {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.stream).poll_read(cx, buf);
        let moved = buf.filled().len() > before;
        this.check(cx, polled, moved)
    }
}

impl AsyncWrite for Connection {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write(cx, data);
        let moved = matches!(polled, Poll::Ready(Ok(n)) if n > 0);
        this.check(cx, polled, moved)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    /// Serves a page saying "ok" on a bounded listener; its port.
    async fn serving(connections: usize, idle: Duration) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let router = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
        tokio::spawn(async move { axum::serve(Bounded::with(listener, connections, idle), router).await });
        port
    }

    fn get(port: u16) -> std::net::TcpStream {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
        stream
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_connection_that_sends_nothing_is_closed_when_idle() {
        let port = serving(4, Duration::from_millis(200)).await;
        let closed = tokio::task::spawn_blocking(move || {
            let mut silent = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            silent.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            silent.read(&mut [0u8; 16]).unwrap()
        });
        assert_eq!(closed.await.unwrap(), 0, "the idle connection stayed open");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn connections_past_the_limit_wait_for_a_free_slot() {
        let port = serving(1, Duration::from_secs(30)).await;
        tokio::task::spawn_blocking(move || {
            let holder = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            let mut waiting = get(port);
            waiting.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
            let mut answer = Vec::new();
            assert!(waiting.read_to_end(&mut answer).is_err(), "served past the limit");
            drop(holder);
            waiting.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            waiting.read_to_end(&mut answer).unwrap();
            assert!(String::from_utf8_lossy(&answer).ends_with("ok"), "{}", String::from_utf8_lossy(&answer));
        })
        .await
        .unwrap();
    }
}
