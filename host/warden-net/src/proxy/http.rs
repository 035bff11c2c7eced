//! HTTP proxy requests: `CONNECT host:port` (a tunnel, for HTTPS) and
//! absolute-form requests (`GET http://host/path`, for plain HTTP). The head
//! of the latter is rewritten to origin form with `Connection: close`, so
//! that one client connection never carries a second request elsewhere.

use std::io::{self, Read, Write};
use std::net::TcpStream;

use warden_policy::Target;

use super::{close, Shared, Verdict};

const MAX_HEAD: usize = 64 * 1024;
const HOP_BY_HOP: &[&str] = &["connection", "proxy-connection", "proxy-authorization", "keep-alive"];

type Handshake = (TcpStream, Option<TcpStream>, Vec<u8>);

pub(super) fn handshake(shared: &Shared, mut client: TcpStream) -> io::Result<Handshake> {
    let Some((head, rest)) = read_head(&mut client)? else {
        return refuse(client, 400, "Bad Request", "The request head is malformed or too long.");
    };
    let mut lines = head.split("\r\n");
    let request = lines.next().unwrap_or_default();
    let [method, uri, version] = request.split(' ').collect::<Vec<_>>()[..] else {
        return refuse(client, 400, "Bad Request", "The request line is malformed.");
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let target = Target::parse(uri).map_err(|why| (uri.to_owned(), why));
        return match shared.dial(target) {
            Verdict::Connected(upstream) => {
                client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
                Ok((client, Some(upstream), rest))
            }
            verdict => answer_failure(client, verdict, uri),
        };
    }
    let Some(after_scheme) = uri.strip_prefix("http://") else {
        return refuse(client, 400, "Bad Request", "This proxy passes CONNECT requests and http:// URLs only.");
    };
    let split = after_scheme.find(['/', '?']).unwrap_or(after_scheme.len());
    let (authority, path) = after_scheme.split_at(split);
    let path = if path.is_empty() { "/".to_owned() } else if path.starts_with('?') { format!("/{path}") } else { path.to_owned() };
    let target = if authority.contains('@') {
        Err((authority.to_owned(), "credentials in the URL are not passed on".to_owned()))
    } else {
        Target::parse(&with_default_port(authority, 80)).map_err(|why| (authority.to_owned(), why))
    };
    match shared.dial(target) {
        Verdict::Connected(upstream) => {
            let mut out = format!("{method} {path} {version}\r\n");
            for line in lines.filter(|l| !l.is_empty()) {
                let name = line.split(':').next().unwrap_or_default().trim().to_ascii_lowercase();
                if !HOP_BY_HOP.contains(&name.as_str()) {
                    out.push_str(line);
                    out.push_str("\r\n");
                }
            }
            out.push_str("Connection: close\r\n\r\n");
            let mut early = out.into_bytes();
            early.extend_from_slice(&rest);
            Ok((client, Some(upstream), early))
        }
        verdict => answer_failure(client, verdict, authority),
    }
}

fn answer_failure(client: TcpStream, verdict: Verdict, asked: &str) -> io::Result<Handshake> {
    match verdict {
        Verdict::Refused(refusal) => refuse(client, 403, "Forbidden", &refusal.to_string()),
        Verdict::Failed(error) => refuse(client, 502, "Bad Gateway", &format!("Cannot connect to '{}': {error}", asked.escape_debug())),
        Verdict::Connected(_) => unreachable!("handled by the caller"),
    }
}

fn refuse(mut client: TcpStream, code: u16, reason: &str, body: &str) -> io::Result<Handshake> {
    let body = format!("{body}\n");
    let response = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(response.as_bytes());
    close(&client);
    Ok((client, None, Vec::new()))
}

/// `host` → `host:80`; `[::1]` → `[::1]:80`; a given port stays.
fn with_default_port(authority: &str, port: u16) -> String {
    let has_port = match authority.rfind(']') {
        Some(end) => authority[end..].contains(':'),
        None => authority.contains(':'),
    };
    if has_port { authority.to_owned() } else { format!("{authority}:{port}") }
}

/// The head up to its blank line (as text), and the bytes read after it.
fn read_head(client: &mut TcpStream) -> io::Result<Option<(String, Vec<u8>)>> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            buf.truncate(end);
            return Ok(String::from_utf8(buf).ok().map(|head| (head, rest)));
        }
        if buf.len() > MAX_HEAD {
            return Ok(None);
        }
        let n = client.read(&mut chunk)?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_default_port_is_added_only_when_missing() {
        assert_eq!(super::with_default_port("a.com", 80), "a.com:80");
        assert_eq!(super::with_default_port("a.com:8080", 80), "a.com:8080");
        assert_eq!(super::with_default_port("[::1]", 80), "[::1]:80");
        assert_eq!(super::with_default_port("[::1]:81", 80), "[::1]:81");
    }
}
