//! Notes appended to a failed command's stderr when it ran into the sandbox's
//! walls, so that a model knows why. They never suggest turning the sandbox off.

use crate::plan::ExecPlan;

const WRITE_REFUSED: &[&str] = &["Read-only file system", "Permission denied", "Operation not permitted"];
const NETWORK_REFUSED: &[&str] = &[
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "No address associated with hostname",
    "getaddrinfo",
];

pub fn for_failure(stderr: &str, plan: &ExecPlan) -> String {
    let mut notes = String::new();
    if WRITE_REFUSED.iter().any(|s| stderr.contains(s)) {
        notes.push_str(&format!("\nNote: writable paths in this sandbox are {}\n", plan.writable_list()));
    }
    if !plan.network && NETWORK_REFUSED.iter().any(|s| stderr.contains(s)) {
        notes.push_str("\nNote: network access is disabled for this sandbox\n");
    }
    notes
}
