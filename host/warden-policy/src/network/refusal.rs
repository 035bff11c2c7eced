//! A refused connection, in the words the model reads.

use std::fmt;
use std::net::IpAddr;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetRefusal {
    /// `host:port` as asked for.
    pub target: String,
    pub reason: RefusalReason,
    /// The allowlist as written, for the second line.
    pub allowed: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusalReason {
    /// The sandbox has no network.
    Disabled,
    NotListed,
    /// A listed name led to an address only a listing of its own would allow.
    ResolvesTo { address: IpAddr, kind: &'static str },
    /// Not a host name or address at all.
    Malformed(String),
    Listen,
}

impl fmt::Display for NetRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = &self.target;
        match &self.reason {
            RefusalReason::Disabled => return write!(f, "Cannot connect to '{target}': network access is disabled for this sandbox."),
            RefusalReason::Listen => return write!(f, "Cannot listen on '{target}': this sandbox may only make outgoing connections."),
            RefusalReason::NotListed => write!(f, "Cannot connect to '{target}': host not in the network allowlist.")?,
            RefusalReason::ResolvesTo { address, kind } => write!(
                f,
                "Cannot connect to '{target}': the name resolves to {address}, {kind}, which the network allowlist does not include."
            )?,
            RefusalReason::Malformed(why) => write!(f, "Cannot connect to '{target}': {why}.")?,
        }
        write!(f, "\nAllowed hosts: {}", self.allowed)
    }
}

impl std::error::Error for NetRefusal {}
