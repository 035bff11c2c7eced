//! The macOS backend: a Seatbelt profile for a plan, run with
//! `/usr/bin/sandbox-exec -p PROFILE -- COMMAND`. In SBPL the last matching
//! rule wins, so the denials come after the allowances they narrow.

use std::fmt::Write;
use std::path::Path;

use crate::plan::ExecPlan;

pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The system folders a macOS command needs to read.
const SYSTEM_READ: &[&str] = &[
    "/usr", "/bin", "/sbin", "/System", "/Library", "/Applications/Xcode.app", "/opt/homebrew", "/private/etc",
    "/private/var/db/timezone", "/dev",
];

pub fn profile(plan: &ExecPlan) -> String {
    let mut p = String::from("(version 1)\n(deny default)\n");
    p.push_str("(allow process-exec process-fork)\n(allow signal (target same-sandbox))\n");
    p.push_str("(allow sysctl-read)\n(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\"))\n");
    p.push_str("(allow file-read-metadata)\n");
    if plan.read_all {
        p.push_str("(allow file-read*)\n");
    } else {
        rule(&mut p, "allow file-read*", SYSTEM_READ.iter().map(Path::new));
    }
    rule(&mut p, "allow file-read*", plan.binds.iter().map(|b| b.host.as_path()));
    rule(&mut p, "allow file-write*", plan.binds.iter().filter(|b| b.writable).map(|b| b.host.as_path()));
    p.push_str("(allow file-write* (literal \"/dev/null\") (literal \"/dev/tty\"))\n");
    rule(&mut p, "deny file-write*", plan.protected.iter().map(|x| x.as_path()));
    rule(&mut p, "deny file-read* file-write*", plan.denied.iter().map(|x| x.as_path()));
    if plan.network == warden_policy::Network::Full {
        p.push_str("(allow network*)\n");
    }
    p
}

fn rule<'a>(out: &mut String, action: &str, paths: impl Iterator<Item = &'a Path>) {
    let paths: Vec<&Path> = paths.collect();
    if paths.is_empty() {
        return;
    }
    let _ = write!(out, "({action}");
    for path in paths {
        let _ = write!(out, "\n  (subpath \"{}\")", quoted(path));
    }
    out.push_str(")\n");
}

/// An SBPL string body: backslashes and quotes escaped.
fn quoted(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "\\\\").replace('"', "\\\"")
}
