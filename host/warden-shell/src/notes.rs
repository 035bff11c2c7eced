//! Notes appended to a failed command's stderr when it ran into the sandbox's
//! walls, so that a model knows why. They never suggest turning the sandbox off.

use warden_policy::Network;

use crate::run::Walls;

const WRITE_REFUSED: &[&str] = &["Read-only file system", "Permission denied", "Operation not permitted"];
const NETWORK_REFUSED: &[&str] = &[
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "No address associated with hostname",
    "getaddrinfo",
    "bad address",
];

/// What a direct connection from a sandbox with only a loopback interface ends in.
const DIRECT_REFUSED: &[&str] = &["Couldn't connect to server", "Connection refused"];

pub fn for_failure(stderr: &str, walls: &Walls) -> String {
    let mut notes = String::new();
    if WRITE_REFUSED.iter().any(|s| stderr.contains(s)) {
        notes.push_str(&format!("\nNote: writable paths in this sandbox are {}\n", walls.writable));
    }
    let direct = NETWORK_REFUSED.iter().chain(DIRECT_REFUSED).any(|s| stderr.contains(s));
    if NETWORK_REFUSED.iter().any(|s| stderr.contains(s)) && walls.network == Network::Off {
        notes.push_str("\nNote: network access is disabled for this sandbox\n");
    }
    if direct {
        match &walls.network {
            Network::Allow(_) if walls.refused.is_empty() => notes.push_str(&format!(
                "\nNote: connections leave this sandbox only through its proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), to: {}\n",
                walls.network.allowed_hosts()
            )),
            _ => {}
        }
    }
    notes
}

/// One note per connection the allowlist refused, whatever the exit status.
pub fn for_refusals(walls: &Walls) -> String {
    walls.refused.iter().map(|refusal| format!("\nNote: {refusal}\n")).collect()
}
