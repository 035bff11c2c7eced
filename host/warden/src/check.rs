//! `warden check`: validate, then show what the program and each worker see.

use std::fmt::Write;
use std::path::Path;

use warden_fs::{OpenMount, Sandbox};
use warden_policy::{Dynamic, Rules};

use crate::exit::Failure;

pub fn run(policy_file: &Path) -> Result<String, Failure> {
    let policy = warden_policy::load(policy_file)?;
    let program = Sandbox::open(&policy)?;
    let mut out = format!("{}: valid\n", policy.file.display());
    let _ = writeln!(out, "network: {}", policy.network.describe());
    if policy.shell_section {
        let _ = writeln!(out, "shell commands: {}", shell_backend(&policy.shell));
    }
    if let Some(audit) = &policy.audit {
        let _ = writeln!(out, "audit: {}", audit.display());
    }
    describe(&mut out, "program", &program, policy.dynamic_for(None));
    for name in policy.workers.keys() {
        let child = program.derive_worker(&policy, name)?;
        describe(&mut out, &format!("worker {name}"), &child, policy.dynamic_for(Some(name)));
        if policy.network_for(Some(name)) != &policy.network {
            let _ = writeln!(out, "  network: {}", policy.network_for(Some(name)).describe());
        }
    }
    if !policy.tools.is_empty() {
        out.push_str("tools (warden mcp):\n");
    }
    for tool in policy.tools.values() {
        let _ = write!(out, "  {}  {}  worker {}", tool.key, tool.component.display(), tool.worker.as_deref().unwrap_or("(program)"));
        if let Some(expected) = &tool.digest {
            let actual = std::fs::read(&tool.component).map(|bytes| blake3::hash(&bytes).to_hex().to_string())?;
            if &actual != expected {
                return Err(Failure::usage(format!(
                    "invalid policy: {}: tools.{}.digest: {} has digest blake3:{actual}, and the policy says blake3:{expected}",
                    policy.file.display(),
                    tool.key,
                    tool.component.display()
                )));
            }
            let _ = write!(out, "  digest blake3:{expected} (matches)");
        }
        out.push('\n');
    }
    Ok(out)
}

fn describe(out: &mut String, title: &str, sandbox: &Sandbox, dynamic: Option<&Dynamic>) {
    let _ = writeln!(out, "{title}:");
    if sandbox.mounts().is_empty() {
        let _ = writeln!(out, "  (no access)");
    }
    let width = sandbox.mounts().iter().map(|m| m.path.as_str().len()).max().unwrap_or(0);
    for m in sandbox.mounts() {
        let _ = writeln!(out, "  {:width$}  {}  {}{}", m.path.as_str(), mode(m), m.host_root.display(), rules(&m.rules));
    }
    if let Some(dynamic) = dynamic {
        let _ = writeln!(out, "  dynamic: {}", dynamic.describe());
    }
}

fn mode(m: &OpenMount) -> &'static str {
    match (m.rules.readable, m.rules.writable) {
        (true, true) => "rw",
        (true, false) => "ro",
        (false, _) => "wo",
    }
}

fn rules(r: &Rules) -> String {
    let mut s = String::new();
    if let Some(list) = &r.suffixes {
        let _ = write!(s, "  suffixes={}", list.join(","));
    }
    if let Some(max) = r.max_file_bytes {
        let _ = write!(s, "  max_file_bytes={max}");
    }
    if r.read_approval {
        s.push_str("  read_approval");
    }
    if r.write_approval {
        s.push_str("  write_approval");
    }
    s
}

fn shell_backend(shell: &warden_policy::Shell) -> String {
    let Some(c) = &shell.container else { return "the OS sandbox (bubblewrap on Linux, Seatbelt on macOS)".into() };
    let mut text = format!("a container of {} on {}", c.image, c.engine.name());
    if let Some(bytes) = c.memory_bytes {
        let _ = write!(text, ", memory {} MiB", bytes >> 20);
    }
    if let Some(nano) = c.nano_cpus {
        let _ = write!(text, ", {} CPUs", nano as f64 / 1e9);
    }
    if let Some(root) = &c.workspace_root {
        let _ = write!(text, ", mounts inside {}", root.display());
    }
    text
}
