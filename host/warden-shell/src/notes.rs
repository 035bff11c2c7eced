//! Notes appended to a failed command's stderr when it ran into the sandbox's
//! walls, so that a model knows why. They never suggest turning the sandbox off.

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

pub fn for_failure(stderr: &str, walls: &Walls) -> String {
    let mut notes = String::new();
    if WRITE_REFUSED.iter().any(|s| stderr.contains(s)) {
        notes.push_str(&format!("\nNote: writable paths in this sandbox are {}\n", walls.writable));
    }
    if !walls.network && NETWORK_REFUSED.iter().any(|s| stderr.contains(s)) {
        notes.push_str("\nNote: network access is disabled for this sandbox\n");
    }
    notes
}
