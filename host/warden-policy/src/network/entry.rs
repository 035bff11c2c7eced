//! The `host:port` entries of an allowlist, and the hosts asked for at run time.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use ipnet::IpNet;

/// The host side of an entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum HostPattern {
    /// Exactly this name (lowercase, no trailing dot).
    Name(String),
    /// `*.NAME`: names under NAME, never NAME itself.
    Subdomains(String),
    /// An address (as a /32 or /128) or a CIDR range.
    Net(IpNet),
}

/// One `host:port` pair of an allowlist.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AllowEntry {
    pub host: HostPattern,
    pub port: u16,
}

/// A host asked for: a name, or an address given as one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Name(String),
    Ip(IpAddr),
}

/// A host and port asked for, e.g. by a `CONNECT` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: Host,
    pub port: u16,
}

impl AllowEntry {
    /// Parses `api.example.com:443`, `*.pypi.org:443`, `10.1.2.3:5432`,
    /// `10.0.0.0/8:5432`, `[::1]:8080` or `[fd00::/8]:443`.
    pub fn parse(text: &str) -> Result<AllowEntry, String> {
        let bad = |why: &str| format!("'{}' is not a usable entry: {why}", text.escape_debug());
        let (host, port) = split_host_port(text).map_err(|why| bad(&why))?;
        let port = parse_port(port).map_err(|why| bad(&why))?;
        let host = if host.contains('/') {
            let net = IpNet::from_str(host).map_err(|_| bad("not an address range like 10.0.0.0/8"))?;
            if net.trunc() != net {
                return Err(bad(&format!("the range has host bits set; write {}", net.trunc())));
            }
            HostPattern::Net(net)
        } else if let Ok(ip) = IpAddr::from_str(host) {
            HostPattern::Net(IpNet::from(ip))
        } else if let Some(parent) = host.strip_prefix("*.") {
            let parent = normal_name(parent).map_err(|why| bad(&why))?;
            if !parent.contains('.') {
                return Err(bad("a wildcard needs a domain of two labels or more, like *.example.com"));
            }
            HostPattern::Subdomains(parent)
        } else {
            HostPattern::Name(normal_name(host).map_err(|why| bad(&why))?)
        };
        Ok(AllowEntry { host, port })
    }
}

impl Host {
    /// A host as a client names it: an address (IPv6 with or without
    /// brackets) or a host name, which is checked and lowercased.
    pub fn parse(text: &str) -> Result<Host, String> {
        let unbracketed = text.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
        if let Some(inner) = unbracketed {
            return inner.parse::<std::net::Ipv6Addr>().map(|ip| Host::Ip(ip.into())).map_err(|_| "not a valid IPv6 address".into());
        }
        match IpAddr::from_str(text) {
            Ok(ip) => Ok(Host::Ip(ip)),
            Err(_) => normal_name(text).map(Host::Name),
        }
    }
}

impl Target {
    /// `host:port`, as in an HTTP authority or a `CONNECT` line.
    pub fn parse(authority: &str) -> Result<Target, String> {
        let (host, port) = split_host_port(authority)?;
        Ok(Target { host: Host::parse(host)?, port: parse_port(port)? })
    }
}

/// `host:port` or `[v6]:port` into its two halves.
fn split_host_port(text: &str) -> Result<(&str, &str), String> {
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("an opening '[' without its ']'")?;
        let port = after.strip_prefix(':').ok_or("the port is missing: write [ADDRESS]:PORT")?;
        return Ok((host, port));
    }
    let (host, port) = text.rsplit_once(':').ok_or("the port is missing: write HOST:PORT")?;
    if host.contains(':') {
        return Err("write an IPv6 address in brackets, like [::1]:443".into());
    }
    Ok((host, port))
}

fn parse_port(text: &str) -> Result<u16, String> {
    match text.parse::<u16>() {
        Ok(port) if port > 0 && text.bytes().all(|b| b.is_ascii_digit()) => Ok(port),
        _ => Err(format!("'{}' is not a port: give a number from 1 to 65535", text.escape_debug())),
    }
}

/// A host name checked label by label, lowercased, without its trailing dot.
/// Anything a resolver might read as an address in another notation
/// (`127.1`, `0x7f000001`, `2130706433`) is refused.
fn normal_name(text: &str) -> Result<String, String> {
    let name = text.strip_suffix('.').unwrap_or(text).to_ascii_lowercase();
    if name.is_empty() {
        return Err("the host name is empty".into());
    }
    if !name.is_ascii() {
        return Err("not a host name: write an international name in its ASCII (xn--) form".into());
    }
    if name.len() > 253 {
        return Err("the host name is longer than 253 characters".into());
    }
    for label in name.split('.') {
        let usable = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
        if label.is_empty() || label.len() > 63 || !label.bytes().all(usable) || label.starts_with('-') || label.ends_with('-') {
            return Err(format!("'{}' is not a host name: use letters, digits, '-' and '.'", text.escape_debug()));
        }
    }
    let last = name.rsplit('.').next().unwrap_or_default();
    let hex = last.strip_prefix("0x").is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    if last.bytes().all(|b| b.is_ascii_digit()) || hex {
        return Err(format!("'{}' is neither a host name nor an address in standard form", text.escape_debug()));
    }
    Ok(name)
}

impl fmt::Display for AllowEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostPattern::Name(name) => write!(f, "{name}:{}", self.port),
            HostPattern::Subdomains(parent) => write!(f, "*.{parent}:{}", self.port),
            HostPattern::Net(net) if net.prefix_len() == net.max_prefix_len() => {
                write!(f, "{}", std::net::SocketAddr::new(net.addr(), self.port))
            }
            HostPattern::Net(IpNet::V6(net)) => write!(f, "[{net}]:{}", self.port),
            HostPattern::Net(net) => write!(f, "{net}:{}", self.port),
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(name) => f.write_str(name),
            Host::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.host {
            Host::Ip(ip) => write!(f, "{}", std::net::SocketAddr::new(ip, self.port)),
            Host::Name(ref name) => write!(f, "{name}:{}", self.port),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> String {
        AllowEntry::parse(text).unwrap().to_string()
    }

    fn err(text: &str) -> String {
        AllowEntry::parse(text).unwrap_err()
    }

    #[test]
    fn entries_in_every_form_read_back_normalized() {
        assert_eq!(ok("API.Example.com.:443"), "api.example.com:443");
        assert_eq!(ok("*.pypi.org:443"), "*.pypi.org:443");
        assert_eq!(ok("10.1.2.3:5432"), "10.1.2.3:5432");
        assert_eq!(ok("10.0.0.0/8:5432"), "10.0.0.0/8:5432");
        assert_eq!(ok("[::1]:8080"), "[::1]:8080");
        assert_eq!(ok("[fd00::/8]:443"), "[fd00::/8]:443");
        assert_eq!(ok("localhost:8080"), "localhost:8080");
    }

    #[test]
    fn a_port_is_required_and_must_be_a_port() {
        assert_eq!(err("api.example.com"), "'api.example.com' is not a usable entry: the port is missing: write HOST:PORT");
        assert_eq!(err("api.example.com:0"), "'api.example.com:0' is not a usable entry: '0' is not a port: give a number from 1 to 65535");
        assert_eq!(err("a.com:65536"), "'a.com:65536' is not a usable entry: '65536' is not a port: give a number from 1 to 65535");
        assert_eq!(err("a.com:+80"), "'a.com:+80' is not a usable entry: '+80' is not a port: give a number from 1 to 65535");
        assert_eq!(err("a.com:*"), "'a.com:*' is not a usable entry: '*' is not a port: give a number from 1 to 65535");
        assert_eq!(err("[::1]"), "'[::1]' is not a usable entry: the port is missing: write [ADDRESS]:PORT");
    }

    #[test]
    fn nul_bytes_and_other_malformed_names_are_refused() {
        assert_eq!(err("api\0.example.com:443"), "'api\\0.example.com:443' is not a usable entry: 'api\\0.example.com' is not a host name: use letters, digits, '-' and '.'");
        assert!(err("a..b.com:443").contains("is not a host name"));
        assert!(err("-a.com:443").contains("is not a host name"));
        assert!(err("a b.com:443").contains("is not a host name"));
        assert!(err(":443").contains("the host name is empty"));
        assert!(err("bücher.de:443").contains("xn--"));
        assert!(err(&format!("{}.com:443", "a".repeat(64))).contains("is not a host name"));
    }

    #[test]
    fn addresses_in_non_standard_notation_are_refused() {
        for host in ["127.1", "0x7f000001", "2130706433", "0177.0.0.1", "1.2.3.4.5"] {
            assert_eq!(
                err(&format!("{host}:80")),
                format!("'{host}:80' is not a usable entry: '{host}' is neither a host name nor an address in standard form")
            );
        }
    }

    #[test]
    fn wildcards_sit_only_at_the_start_over_two_labels() {
        assert!(err("*.com:443").contains("two labels or more"));
        assert!(err("a.*.com:443").contains("is not a host name"));
        assert!(err("*:443").contains("is not a host name"));
        assert!(err("**.a.com:443").contains("is not a host name"));
    }

    #[test]
    fn ranges_must_be_written_without_host_bits() {
        assert_eq!(err("10.1.0.0/8:80"), "'10.1.0.0/8:80' is not a usable entry: the range has host bits set; write 10.0.0.0/8");
        assert!(err("10.0.0.0/33:80").contains("not an address range"));
        assert_eq!(err("::1:80"), "'::1:80' is not a usable entry: write an IPv6 address in brackets, like [::1]:443");
    }

    #[test]
    fn targets_parse_like_authorities() {
        assert_eq!(Target::parse("Example.COM:443").unwrap().to_string(), "example.com:443");
        assert_eq!(Target::parse("[::1]:80").unwrap().to_string(), "[::1]:80");
        assert_eq!(Target::parse("1.2.3.4:80").unwrap().host, Host::Ip("1.2.3.4".parse().unwrap()));
        assert!(Target::parse("evil\0.com:443").is_err());
        assert!(Target::parse("0x7f000001:80").is_err());
    }
}
