//! `network:`: off, on, or an allowlist of `host:port` pairs, and the
//! decisions every runtime asks before a connection is made.
//!
//! A name is checked twice: before it is resolved (is it listed with this
//! port?) and on the address actually connected to (a listed name must lead
//! to a public address, unless that address is listed itself).

mod address;
mod entry;
mod refusal;

use std::net::{IpAddr, SocketAddr};

pub use address::non_public;
pub use entry::{AllowEntry, Host, HostPattern, Target};
pub use refusal::{NetRefusal, RefusalReason};

/// What a sandbox may reach over the network.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Network {
    /// `network: false`: nothing.
    #[default]
    Off,
    /// `network: true`: everything, listening included.
    Full,
    /// `network: { allow: [...] }`: exactly the listed pairs.
    Allow(Allowlist),
}

#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Allowlist {
    pub entries: Vec<AllowEntry>,
    /// Listening sockets (components only; shell commands never listen outside).
    pub listen: bool,
}

impl Network {
    /// Any network at all: the runtimes give no network stack to `Off`.
    pub fn is_off(&self) -> bool {
        *self == Network::Off
    }

    /// The allowed pairs as the model reads them: `api.example.com:443, *.pypi.org:443`.
    pub fn allowed_hosts(&self) -> String {
        match self {
            Network::Off => "none".into(),
            Network::Full => "any".into(),
            Network::Allow(list) if list.entries.is_empty() => "none".into(),
            Network::Allow(list) => list.entries.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", "),
        }
    }

    /// One line for `warden check`.
    pub fn describe(&self) -> String {
        match self {
            Network::Off => "off".into(),
            Network::Full => "on".into(),
            Network::Allow(list) => {
                format!("allow {}{}", self.allowed_hosts(), if list.listen { " (listening allowed)" } else { "" })
            }
        }
    }

    pub fn allows_listen(&self) -> bool {
        match self {
            Network::Off => false,
            Network::Full => true,
            Network::Allow(list) => list.listen,
        }
    }

    /// Whether `host` may be looked up at all: some entry could admit it on some port.
    pub fn may_look_up(&self, host: &Host) -> bool {
        match self {
            Network::Off => false,
            Network::Full => true,
            Network::Allow(list) => list.entries.iter().any(|e| admits_host(e, host)),
        }
    }

    /// Before a connection: is this host listed with this port?
    pub fn check_target(&self, target: &Target) -> Result<(), NetRefusal> {
        match self {
            Network::Full => Ok(()),
            Network::Off => Err(self.refusal(target.to_string(), RefusalReason::Disabled)),
            Network::Allow(list) if list.entries.iter().any(|e| e.port == target.port && admits_host(e, &target.host)) => Ok(()),
            Network::Allow(_) => Err(self.refusal(target.to_string(), RefusalReason::NotListed)),
        }
    }

    /// The address actually connected to, reached through the name `via`
    /// (`None` when the address was asked for directly).
    pub fn check_address(&self, via: Option<&str>, addr: SocketAddr) -> Result<(), NetRefusal> {
        let ip = addr.ip().to_canonical();
        let asked = Target { host: Host::Ip(ip), port: addr.port() };
        let Some(name) = via else { return self.check_target(&asked) };
        let by_name = Target { host: Host::Name(name.to_owned()), port: addr.port() };
        self.check_target(&by_name)?;
        let Network::Allow(_) = self else { return Ok(()) };
        if self.check_target(&asked).is_ok() {
            return Ok(());
        }
        let kind = match non_public(ip) {
            None if name != "localhost" => return Ok(()),
            None => "not a loopback address",
            Some(kind) => kind,
        };
        Err(self.refusal(by_name.to_string(), RefusalReason::ResolvesTo { address: ip, kind }))
    }

    /// A host a client named in a form that is not a host.
    pub fn malformed(&self, asked: &str, why: String) -> NetRefusal {
        self.refusal(asked.escape_debug().to_string(), RefusalReason::Malformed(why))
    }

    /// A listening socket this sandbox may not open.
    pub fn listen_refused(&self, addr: SocketAddr) -> NetRefusal {
        self.refusal(addr.to_string(), RefusalReason::Listen)
    }

    fn refusal(&self, target: String, reason: RefusalReason) -> NetRefusal {
        let reason = if self.is_off() && !matches!(reason, RefusalReason::Listen) { RefusalReason::Disabled } else { reason };
        NetRefusal { target, reason, allowed: self.allowed_hosts() }
    }

    /// This network with `grant`'s added: what a command granted more gets.
    pub fn widened_by(&self, grant: &Network) -> Network {
        match (self, grant) {
            (Network::Full, _) | (_, Network::Off) => self.clone(),
            (_, Network::Full) => Network::Full,
            (Network::Off, Network::Allow(list)) => Network::Allow(list.clone()),
            (Network::Allow(held), Network::Allow(more)) => {
                let mut entries = held.entries.clone();
                entries.extend(more.entries.iter().filter(|e| !held.entries.contains(e)).cloned());
                Network::Allow(Allowlist { entries, listen: held.listen || more.listen })
            }
        }
    }

    /// Whether `child` asks for nothing beyond `self`; the first pair it
    /// cannot have otherwise.
    pub fn narrows_to(&self, child: &Network) -> Result<(), String> {
        match (self, child) {
            (Network::Full, _) | (_, Network::Off) => Ok(()),
            (_, Network::Full) => Err("all network access".into()),
            (parent, Network::Allow(asked)) => {
                if asked.listen && !parent.allows_listen() {
                    return Err("listening sockets".into());
                }
                let held = match parent {
                    Network::Allow(list) => list.entries.as_slice(),
                    _ => &[],
                };
                match asked.entries.iter().find(|e| !held.iter().any(|h| covers(h, e))) {
                    Some(entry) => Err(format!("network access to '{entry}'")),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Whether `entry` admits `host`, on its own port.
fn admits_host(entry: &AllowEntry, host: &Host) -> bool {
    match (&entry.host, host) {
        (HostPattern::Name(listed), Host::Name(name)) => listed == name,
        (HostPattern::Subdomains(parent), Host::Name(name)) => is_under(name, parent),
        (HostPattern::Net(net), Host::Ip(ip)) => net.contains(&ip.to_canonical()),
        (HostPattern::Name(listed), Host::Ip(ip)) => listed == "localhost" && is_localhost(*ip),
        _ => false,
    }
}

fn is_under(name: &str, parent: &str) -> bool {
    name.strip_suffix(parent).is_some_and(|head| head.len() > 1 && head.ends_with('.'))
}

/// Whether the parent's entry `held` admits everything `asked` does.
fn covers(held: &AllowEntry, asked: &AllowEntry) -> bool {
    if held.port != asked.port {
        return false;
    }
    match (&held.host, &asked.host) {
        (HostPattern::Name(a), HostPattern::Name(b)) => a == b,
        (HostPattern::Subdomains(a), HostPattern::Name(b)) => is_under(b, a),
        (HostPattern::Subdomains(a), HostPattern::Subdomains(b)) => a == b || is_under(b, a),
        (HostPattern::Net(a), HostPattern::Net(b)) => a.contains(b),
        (HostPattern::Name(local), HostPattern::Net(b)) => {
            local == "localhost" && b.prefix_len() == b.max_prefix_len() && is_localhost(b.addr())
        }
        _ => false,
    }
}

/// The two addresses the name `localhost` stands for in a list.
fn is_localhost(ip: IpAddr) -> bool {
    let ip = ip.to_canonical();
    ip == IpAddr::from([127, 0, 0, 1]) || ip == IpAddr::from(std::net::Ipv6Addr::LOCALHOST)
}

#[cfg(test)]
mod tests;
