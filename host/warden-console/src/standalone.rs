//! `warden console`: the page on loopback and the CLI's socket, served until
//! the process is interrupted or terminated.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::hub::Console;

/// What a standalone console serves, and where.
pub struct Standalone {
    pub console: Console,
    /// The page's address, on loopback.
    pub address: SocketAddr,
    /// The socket the policy's commands find it at ([`crate::socket_of`]).
    pub socket: PathBuf,
    /// The policy file, canonical: commands of another are refused.
    pub policy: PathBuf,
}

/// Serves `standalone` until SIGINT or SIGTERM; `ready` is given the login
/// URL once both the page and the socket listen. The socket is removed at the end.
pub fn run_standalone(standalone: Standalone, ready: impl FnOnce(&str)) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(async move {
        let Standalone { console, address, socket, policy } = standalone;
        crate::routes::loopback_only(address)?;
        let local = crate::local::serve_local(console.clone(), socket, policy).await?;
        let listener = tokio::net::TcpListener::bind(address).await?;
        let served = crate::serve(console, listener).await?;
        ready(&served.login_url);
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        served.task.abort();
        drop(local);
        Ok(())
    })
}
