//! The URLs a registry session uses: `http(s)://HOST[:PORT]/PATH?QUERY`.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    pub https: bool,
    /// As written in a URL: an IPv6 address keeps its brackets.
    pub authority: String,
    pub path_and_query: String,
}

impl Url {
    pub fn new(https: bool, authority: &str, path_and_query: String) -> Url {
        Url { https, authority: authority.to_owned(), path_and_query }
    }

    /// An absolute `http(s)://` URL, or a path on this URL's origin.
    pub fn join(&self, location: &str) -> Result<Url, String> {
        if location.starts_with('/') && !location.starts_with("//") {
            return Ok(Url { path_and_query: location.to_owned(), ..self.clone() });
        }
        let (https, rest) = if let Some(rest) = location.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = location.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(format!("'{}' is not a URL Warden follows", crate::shown(location)));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => (&rest[..at], rest[at..].to_owned()),
            None => (rest, "/".to_owned()),
        };
        let path = if path.starts_with('?') { format!("/{path}") } else { path };
        if warden_policy::oci::check_registry(authority).is_err() {
            return Err(format!("'{}' is not a URL Warden follows", crate::shown(location)));
        }
        Ok(Url { https, authority: authority.to_owned(), path_and_query: path })
    }

    pub fn host(&self) -> &str {
        host_part(&self.authority)
    }

    pub fn port(&self) -> u16 {
        let port = match self.authority.strip_prefix('[') {
            Some(inner) => inner.split_once("]:").map(|(_, port)| port),
            None => self.authority.split_once(':').map(|(_, port)| port),
        };
        port.and_then(|p| p.parse().ok()).unwrap_or(if self.https { 443 } else { 80 })
    }

    /// Scheme, host and port, the default port written or not.
    pub fn same_origin(&self, other: &Url) -> bool {
        self.https == other.https && self.host().eq_ignore_ascii_case(other.host()) && self.port() == other.port()
    }

    /// For messages: without the query (a CDN's signed URL carries its
    /// credentials there), escaped.
    pub fn shown(&self) -> String {
        let path = self.path_and_query.split('?').next().unwrap_or("");
        let scheme = if self.https { "https" } else { "http" };
        crate::shown(&format!("{scheme}://{}{path}", self.authority))
    }
}

fn host_part(authority: &str) -> &str {
    match authority.strip_prefix('[') {
        Some(inner) => inner.split_once(']').map_or(inner, |(host, _)| host),
        None => authority.split_once(':').map_or(authority, |(host, _)| host),
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}{}", self.authority, self.path_and_query)
    }
}

/// Percent-encodes all but the unreserved characters, for a query value.
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_location_stays_on_the_origin() {
        let base = Url::new(false, "127.0.0.1:5000", "/v2/a/blobs/x".into());
        assert_eq!(base.join("/elsewhere?x=1").unwrap().to_string(), "http://127.0.0.1:5000/elsewhere?x=1");
        assert_eq!(base.join("https://cdn.example/b").unwrap().to_string(), "https://cdn.example/b");
        assert!(base.join("//evil.example/x").is_err());
        assert!(base.join("https://user@evil.example/x").is_err());
        assert!(base.join("file:///etc/passwd").is_err());
        assert!(base.join("http://h:99999/x").is_err());
        assert!(base.join("http://h#x/y").is_err());
        assert!(base.join("http://h:80/y").unwrap().same_origin(&Url::new(false, "h", "/".into())));
    }

    #[test]
    fn ports_default_by_scheme() {
        assert_eq!(Url::new(true, "ghcr.io", "/".into()).port(), 443);
        assert_eq!(Url::new(false, "127.0.0.1:5000", "/".into()).port(), 5000);
        assert_eq!(Url::new(false, "[::1]:5001", "/".into()).port(), 5001);
        assert_eq!(Url::new(false, "[::1]:5001", "/".into()).host(), "::1");
    }
}
