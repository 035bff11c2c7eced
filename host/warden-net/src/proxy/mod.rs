//! The filtering proxy: one listening socket, each connection read as SOCKS5
//! (first byte 5) or HTTP (`CONNECT host:port` or an absolute-form request),
//! its target checked and dialled through [`crate::dial`], then spliced.
//! Refusals are kept for the notes the command's result gets.

mod http;
mod socks;
mod splice;

use std::collections::HashMap;
use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use warden_policy::{NetRefusal, Network, Target};

use crate::dial::{connect, DialError};

/// How long a client may take to say where it wants to go, and a connect may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// A proxy serving one listener until [`Proxy::finish`].
pub struct Proxy {
    shared: Arc<Shared>,
    listener: Arc<Mutex<Option<TcpListener>>>,
    thread: Option<JoinHandle<()>>,
}

/// Connections served at once; more are closed at once (a command cannot
/// make Warden spawn threads without end).
const MAX_CONNECTIONS: usize = 256;

struct Shared {
    network: Network,
    refusals: Mutex<Vec<NetRefusal>>,
    stop: AtomicBool,
    /// The sockets of each connection being served (the client's, then the
    /// server's): shut down at the end, so that no thread waits on an idle
    /// server after the command.
    live: Mutex<HashMap<u64, Vec<TcpStream>>>,
}

impl Proxy {
    /// Serves the listener that `listener` yields (it may wait, e.g. for the bridge).
    pub fn start(network: Network, listener: impl FnOnce() -> io::Result<Option<TcpListener>> + Send + 'static) -> Proxy {
        let shared = Arc::new(Shared {
            network,
            refusals: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            live: Mutex::new(HashMap::new()),
        });
        let slot = Arc::new(Mutex::new(None));
        let (thread_shared, thread_slot) = (shared.clone(), slot.clone());
        let thread = std::thread::Builder::new()
            .name("warden-proxy".into())
            .spawn(move || {
                let Ok(Some(listener)) = listener() else { return };
                *thread_slot.lock().unwrap() = listener.try_clone().ok();
                if thread_shared.stop.load(Ordering::SeqCst) {
                    return;
                }
                serve(&thread_shared, &listener);
            })
            .expect("a thread for the proxy");
        Proxy { shared, listener: slot, thread: Some(thread) }
    }

    /// Stops accepting and returns what was refused, each once, in order.
    pub fn finish(mut self) -> Vec<NetRefusal> {
        self.stop();
        self.take_refusals()
    }

    /// What was refused since the last call, each once, in order; the proxy
    /// goes on (one that serves a long-lived container, command after command).
    pub fn take_refusals(&self) -> Vec<NetRefusal> {
        let mut seen = Vec::new();
        for refusal in self.shared.refusals.lock().unwrap().drain(..) {
            if !seen.contains(&refusal) {
                seen.push(refusal);
            }
        }
        seen
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(listener) = self.listener.lock().unwrap().as_ref() {
            // Wakes the blocked accept (Linux returns EINVAL from it).
            let _ = rustix::net::shutdown(listener, rustix::net::Shutdown::Both);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        for socket in self.shared.live.lock().unwrap().values().flatten() {
            close(socket);
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(shared: &Arc<Shared>, listener: &TcpListener) {
    for number in 0u64.. {
        let accepted = listener.accept();
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok((client, _)) = accepted else {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        {
            let mut live = shared.live.lock().unwrap();
            let Ok(copy) = client.try_clone() else { continue };
            if live.len() >= MAX_CONNECTIONS {
                close(&client);
                continue;
            }
            live.insert(number, vec![copy]);
        }
        let shared = shared.clone();
        let _ = std::thread::Builder::new().name("warden-proxy-conn".into()).spawn(move || {
            let _ = client.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
            let _ = handle(&shared, number, client);
            for socket in shared.live.lock().unwrap().remove(&number).into_iter().flatten() {
                close(&socket);
            }
        });
    }
}

fn handle(shared: &Shared, number: u64, client: TcpStream) -> io::Result<()> {
    let mut first = [0u8; 1];
    if client.peek(&mut first)? == 0 {
        return Ok(());
    }
    let (client, upstream, early) = if first[0] == socks::VERSION {
        socks::handshake(shared, client)?
    } else {
        http::handshake(shared, client)?
    };
    let Some(upstream) = upstream else { return Ok(()) };
    if let Some(sockets) = shared.live.lock().unwrap().get_mut(&number) {
        sockets.push(upstream.try_clone()?);
    }
    client.set_read_timeout(None)?;
    splice::both_ways(client, upstream, &early)
}

/// What a handshake asks the proxy to do about one target.
enum Verdict {
    Connected(TcpStream),
    Refused(NetRefusal),
    Failed(io::Error),
}

impl Shared {
    fn dial(&self, target: Result<Target, (String, String)>) -> Verdict {
        let refuse = |refusal: NetRefusal| {
            self.refusals.lock().unwrap().push(refusal.clone());
            Verdict::Refused(refusal)
        };
        let target = match target {
            Ok(target) => target,
            Err((asked, why)) => return refuse(self.network.malformed(&asked, why)),
        };
        match connect(&self.network, &target, HANDSHAKE_TIMEOUT) {
            Ok((stream, _)) => Verdict::Connected(stream),
            Err(DialError::Refused(refusal)) => refuse(refusal),
            Err(DialError::Failed { error, .. }) => Verdict::Failed(error),
        }
    }
}

/// Closes both directions, ignoring a peer that is already gone.
fn close(stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Both);
}
