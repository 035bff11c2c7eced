//! The console's HTTP serving, bounded: at most [`MAX_CONNECTIONS`] at once,
//! a request's head must arrive within [`HEADER_TIME`], a connection that moves
//! no byte either way for [`IDLE`] is closed, and a refused request's
//! connection is closed after its answer (see `routes.rs`). A process on the
//! same loopback (a sandboxed command under `network: true`) that opens
//! connections it never uses, or trickles them, loses them; one that opens
//! new ones without end can still crowd the person out (refused questions,
//! never answered ones): a loopback port cannot keep a local process away.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

pub const MAX_CONNECTIONS: usize = 64;
/// Longer than the event stream's keep-alive (15 s), which is traffic.
pub const IDLE: Duration = Duration::from_secs(60);
/// For a request's head, from the moment the connection waits for it.
pub const HEADER_TIME: Duration = Duration::from_secs(10);

/// The bounds of [`serve_bounded`].
#[derive(Clone, Copy)]
pub struct Bounds {
    pub connections: usize,
    pub idle: Duration,
    pub header: Duration,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds { connections: MAX_CONNECTIONS, idle: IDLE, header: HEADER_TIME }
    }
}

/// Serves `router` on `listener` (HTTP/1.1) within `bounds`, for ever.
pub async fn serve_bounded(listener: TcpListener, router: axum::Router, bounds: Bounds) {
    let slots = Arc::new(Semaphore::new(bounds.connections));
    loop {
        let slot = slots.clone().acquire_owned().await.expect("the semaphore is never closed");
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors, say: not a reason to stop serving.
                tracing::warn!("the console's listener: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY not set: {e}");
        }
        let connection = Connection { stream, idle_for: bounds.idle, idle: Box::pin(tokio::time::sleep(bounds.idle)), _slot: slot };
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(bounds.header)
                .serve_connection(TokioIo::new(connection), service)
                .await;
            if let Err(e) = served {
                tracing::debug!("a console connection ended: {e}");
            }
        });
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
    async fn serving(connections: usize, idle: Duration, header: Duration) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let router = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
        tokio::spawn(serve_bounded(listener, router, Bounds { connections, idle, header }));
        port
    }

    fn get(port: u16) -> std::net::TcpStream {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
        stream
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_connection_that_sends_nothing_is_closed_when_idle() {
        let port = serving(4, Duration::from_millis(200), Duration::from_secs(30)).await;
        let closed = tokio::task::spawn_blocking(move || {
            let mut silent = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            silent.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            silent.read(&mut [0u8; 16]).unwrap()
        });
        assert_eq!(closed.await.unwrap(), 0, "the idle connection stayed open");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_request_head_trickled_a_byte_at_a_time_is_cut_off() {
        let port = serving(4, Duration::from_secs(30), Duration::from_millis(300)).await;
        let cut = tokio::task::spawn_blocking(move || {
            let mut slow = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            let started = std::time::Instant::now();
            for byte in b"GET / HTTP/1.1\r\nX-Slow: ".iter().cycle() {
                if slow.write_all(&[*byte]).is_err() || started.elapsed() > Duration::from_secs(10) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            started.elapsed()
        });
        assert!(cut.await.unwrap() < Duration::from_secs(10), "a head that never ends was read for ever");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn connections_past_the_limit_wait_for_a_free_slot() {
        let port = serving(1, Duration::from_secs(30), Duration::from_secs(30)).await;
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
