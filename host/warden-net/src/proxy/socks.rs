//! SOCKS5 (RFC 1928), the `CONNECT` command without authentication: what
//! `ALL_PROXY=socks5h://...` clients speak. Names arrive unresolved.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, TcpStream};

use warden_policy::{Host, Target};

use super::{close, Shared, Verdict};

pub(super) const VERSION: u8 = 5;

const NO_AUTHENTICATION: u8 = 0;
const NO_ACCEPTABLE_METHOD: u8 = 0xff;
const CONNECT: u8 = 1;

/// Reply codes.
const SUCCEEDED: u8 = 0;
const GENERAL_FAILURE: u8 = 1;
const NOT_ALLOWED_BY_RULESET: u8 = 2;
const NETWORK_UNREACHABLE: u8 = 3;
const HOST_UNREACHABLE: u8 = 4;
const CONNECTION_REFUSED: u8 = 5;
const TTL_EXPIRED: u8 = 6;
const COMMAND_NOT_SUPPORTED: u8 = 7;
const ADDRESS_TYPE_NOT_SUPPORTED: u8 = 8;

type Handshake = (TcpStream, Option<TcpStream>, Vec<u8>);

pub(super) fn handshake(shared: &Shared, mut client: TcpStream) -> io::Result<Handshake> {
    let [_, methods] = read_array::<2>(&mut client)?;
    let mut offered = vec![0u8; methods as usize];
    client.read_exact(&mut offered)?;
    if !offered.contains(&NO_AUTHENTICATION) {
        client.write_all(&[VERSION, NO_ACCEPTABLE_METHOD])?;
        return done(client);
    }
    client.write_all(&[VERSION, NO_AUTHENTICATION])?;
    let [version, command, _, address_type] = read_array::<4>(&mut client)?;
    if version != VERSION {
        return done(client);
    }
    let target = match address_type {
        1 => {
            let ip = Ipv4Addr::from(read_array::<4>(&mut client)?);
            Ok(Target { host: Host::Ip(ip.into()), port: read_port(&mut client)? })
        }
        4 => {
            let ip = Ipv6Addr::from(read_array::<16>(&mut client)?);
            Ok(Target { host: Host::Ip(ip.into()), port: read_port(&mut client)? })
        }
        3 => {
            let [len] = read_array::<1>(&mut client)?;
            let mut name = vec![0u8; len as usize];
            client.read_exact(&mut name)?;
            let port = read_port(&mut client)?;
            let asked = format!("{}:{port}", String::from_utf8_lossy(&name));
            match std::str::from_utf8(&name) {
                Ok(name) => Host::parse(name).map(|host| Target { host, port }).map_err(|why| (asked, why)),
                Err(_) => Err((asked, "not a host name".to_owned())),
            }
        }
        _ => return reply(client, ADDRESS_TYPE_NOT_SUPPORTED),
    };
    if command != CONNECT {
        return reply(client, COMMAND_NOT_SUPPORTED);
    }
    match shared.dial(target) {
        Verdict::Connected(upstream) => {
            client.write_all(&reply_bytes(SUCCEEDED))?;
            Ok((client, Some(upstream), Vec::new()))
        }
        Verdict::Refused(_) => reply(client, NOT_ALLOWED_BY_RULESET),
        Verdict::Failed(error) => reply(client, failure_code(&error)),
    }
}

fn failure_code(error: &io::Error) -> u8 {
    match error.kind() {
        io::ErrorKind::ConnectionRefused => CONNECTION_REFUSED,
        io::ErrorKind::NetworkUnreachable => NETWORK_UNREACHABLE,
        io::ErrorKind::HostUnreachable | io::ErrorKind::NotFound => HOST_UNREACHABLE,
        io::ErrorKind::TimedOut => TTL_EXPIRED,
        _ => GENERAL_FAILURE,
    }
}

fn reply_bytes(code: u8) -> [u8; 10] {
    [VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]
}

fn reply(mut client: TcpStream, code: u8) -> io::Result<Handshake> {
    let _ = client.write_all(&reply_bytes(code));
    done(client)
}

fn done(client: TcpStream) -> io::Result<Handshake> {
    close(&client);
    Ok((client, None, Vec::new()))
}

fn read_array<const N: usize>(client: &mut TcpStream) -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    client.read_exact(&mut bytes)?;
    Ok(bytes)
}

fn read_port(client: &mut TcpStream) -> io::Result<u16> {
    Ok(u16::from_be_bytes(read_array::<2>(client)?))
}
