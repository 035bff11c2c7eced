//! A connection to a target, made only to an address the network admits.
//! Names the list cannot admit are refused before they are resolved, so
//! that a refused name never reaches a resolver either.

use std::io;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use warden_policy::{Host, NetRefusal, Network, Target};

#[derive(Debug, thiserror::Error)]
pub enum DialError {
    #[error("{0}")]
    Refused(NetRefusal),
    #[error("cannot connect to '{target}': {error}")]
    Failed { target: String, error: io::Error },
}

/// The resolved addresses of `target` the network admits, in resolver order;
/// the first refusal when it admits none.
pub fn admitted(network: &Network, target: &Target, resolved: impl IntoIterator<Item = SocketAddr>) -> Result<Vec<SocketAddr>, DialError> {
    let via = match &target.host {
        Host::Name(name) => Some(name.as_str()),
        Host::Ip(_) => None,
    };
    let (mut ok, mut refused) = (Vec::new(), None);
    for addr in resolved {
        match network.check_address(via, addr) {
            Ok(()) => ok.push(addr),
            Err(refusal) => drop(refused.get_or_insert(refusal)),
        }
    }
    match (ok.is_empty(), refused) {
        (false, _) => Ok(ok),
        (true, Some(refusal)) => Err(DialError::Refused(refusal)),
        (true, None) => Err(failed(target, io::Error::new(io::ErrorKind::NotFound, "the name has no address"))),
    }
}

/// Connects to `target`, blocking, trying each admitted address in turn.
pub fn connect(network: &Network, target: &Target, timeout: Duration) -> Result<(TcpStream, SocketAddr), DialError> {
    network.check_target(target).map_err(DialError::Refused)?;
    let resolved: Vec<SocketAddr> = match &target.host {
        Host::Ip(ip) => vec![SocketAddr::new(*ip, target.port)],
        Host::Name(name) => (name.as_str(), target.port).to_socket_addrs().map_err(|e| failed(target, e))?.collect(),
    };
    let mut last = None;
    for addr in admitted(network, target, resolved)? {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(stream) => return Ok((stream, addr)),
            Err(e) => last = Some(e),
        }
    }
    Err(failed(target, last.unwrap_or_else(|| io::ErrorKind::NotFound.into())))
}

/// [`connect`] on tokio.
pub async fn connect_async(network: &Network, target: &Target, timeout: Duration) -> Result<(tokio::net::TcpStream, SocketAddr), DialError> {
    network.check_target(target).map_err(DialError::Refused)?;
    let resolved: Vec<SocketAddr> = match &target.host {
        Host::Ip(ip) => vec![SocketAddr::new(*ip, target.port)],
        Host::Name(name) => tokio::net::lookup_host((name.as_str(), target.port)).await.map_err(|e| failed(target, e))?.collect(),
    };
    let mut last = None;
    for addr in admitted(network, target, resolved)? {
        match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok((stream, addr)),
            Ok(Err(e)) => last = Some(e),
            Err(_) => last = Some(io::ErrorKind::TimedOut.into()),
        }
    }
    Err(failed(target, last.unwrap_or_else(|| io::ErrorKind::NotFound.into())))
}

fn failed(target: &Target, error: io::Error) -> DialError {
    DialError::Failed { target: target.to_string(), error }
}
