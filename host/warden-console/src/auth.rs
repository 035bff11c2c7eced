//! Who may use the console: the holder of the one-time login URL, then of
//! the cookie it gave, from a page of the console's own origin.

use std::collections::HashMap;
use std::sync::Mutex;

/// The name of the session cookie.
pub const COOKIE: &str = "warden_console";
/// The header every API request carries the session's CSRF token in. The
/// page gets the token once, in the login redirect's fragment, and keeps it
/// in its tab's storage (bound to this port): a page served on another port
/// of 127.0.0.1 is sent the cookie too (cookies ignore ports), never the token.
pub const CSRF_HEADER: &str = "x-warden-csrf";

pub struct Auth {
    /// The login secret, until it is used.
    login: Mutex<Option<String>>,
    /// Session cookie to its CSRF token.
    sessions: Mutex<HashMap<String, String>>,
    /// The `Host` values the console answers to: its own address.
    hosts: Vec<String>,
}

impl Auth {
    /// For a console served on loopback port `port`; also the login secret.
    pub fn new(port: u16) -> std::io::Result<(Auth, String)> {
        let login = random_hex()?;
        let hosts = vec![format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")];
        Ok((Auth { login: Mutex::new(Some(login.clone())), sessions: Mutex::default(), hosts }, login))
    }

    /// A new session for the login secret `given`, which is spent: the
    /// cookie, and the CSRF token.
    pub fn log_in(&self, given: &str) -> std::io::Result<Option<(String, String)>> {
        let mut login = self.login.lock().unwrap_or_else(|p| p.into_inner());
        if !login.as_deref().is_some_and(|secret| same(secret, given)) {
            return Ok(None);
        }
        *login = None;
        let (cookie, csrf) = (random_hex()?, random_hex()?);
        self.sessions.lock().unwrap_or_else(|p| p.into_inner()).insert(cookie.clone(), csrf.clone());
        Ok(Some((cookie, csrf)))
    }

    /// Whether `host` (the request's `Host`) is the console's own address:
    /// a page of another name that resolves here (DNS rebinding) gets nothing.
    pub fn host_ok(&self, host: Option<&str>) -> bool {
        host.is_some_and(|h| self.hosts.iter().any(|own| own == h))
    }

    /// The CSRF token of the session whose cookie the `Cookie` header holds
    /// (any of them: a page of another port may have planted one beside it).
    pub fn session(&self, cookies: Option<&str>) -> Option<String> {
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let mut given = cookies?.split(';').filter_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='));
        given.find_map(|cookie| sessions.iter().find(|(known, _)| same(known, cookie)).map(|(_, csrf)| csrf.clone()))
    }
}

/// Compares two secrets in a time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

fn random_hex() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_login_url_works_once_and_the_cookie_is_the_session() {
        let (auth, secret) = Auth::new(4000).unwrap();
        assert_eq!(auth.log_in("wrong").unwrap(), None);
        let (cookie, _) = auth.log_in(&secret).unwrap().expect("logged in");
        assert_eq!(auth.log_in(&secret).unwrap(), None, "a login URL used twice");
        assert!(auth.session(Some(&format!("a=b; {COOKIE}={cookie}"))).is_some());
        // One planted beside it (by a page of another port) does not hide it.
        assert!(auth.session(Some(&format!("{COOKIE}=planted; {COOKIE}={cookie}"))).is_some());
        assert!(auth.session(Some(&format!("{COOKIE}={}", &cookie[1..]))).is_none());
        assert!(auth.session(None).is_none());
        assert!(auth.host_ok(Some("127.0.0.1:4000")) && auth.host_ok(Some("localhost:4000")));
        assert!(!auth.host_ok(Some("evil.example:4000")) && !auth.host_ok(Some("127.0.0.1:4001")) && !auth.host_ok(None));
    }
}
