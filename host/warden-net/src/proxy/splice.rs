//! Bytes both ways between the client and the host it reached, each
//! direction's end passed on as a half-close.

use std::io::{self, Write};
use std::net::{Shutdown, TcpStream};

pub(super) fn both_ways(client: TcpStream, upstream: TcpStream, early: &[u8]) -> io::Result<()> {
    (&upstream).write_all(early)?;
    let (mut from_client, mut to_upstream) = (client.try_clone()?, upstream.try_clone()?);
    let outbound = std::thread::Builder::new().name("warden-proxy-out".into()).spawn(move || {
        let _ = io::copy(&mut from_client, &mut to_upstream);
        let _ = to_upstream.shutdown(Shutdown::Write);
    })?;
    let (mut from_upstream, mut to_client) = (upstream, client);
    let _ = io::copy(&mut from_upstream, &mut to_client);
    let _ = to_client.shutdown(Shutdown::Write);
    let _ = outbound.join();
    Ok(())
}
