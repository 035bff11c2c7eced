//! `warden check`: validate, then show what the program and each worker see.

use std::fmt::Write;
use std::path::Path;

use warden_fs::{OpenMount, Sandbox};
use warden_fs::approval::granted_shown;
use warden_policy::{CommandRules, ComponentSource, Dynamic, Limits, Policy, Rules};
use warden_wasm::{Runtime, RuntimeOptions};

use crate::cli::RegistryArgs;
use crate::exit::Failure;
use crate::oci_cmd::Fetcher;

pub fn run(policy_file: &Path, registry: &RegistryArgs) -> Result<String, Failure> {
    let policy = warden_policy::load(policy_file)?;
    let program = Sandbox::open(&policy)?;
    let mut out = format!("{}: valid\n", policy.file.display());
    let _ = writeln!(out, "network: {}", policy.network.describe());
    if policy.shell_section {
        let _ = writeln!(out, "shell commands: {}", shell_backend(&policy.shell));
        if let Some(unheld) = rules_commands_skip(&program) {
            let _ = writeln!(out, "  {unheld}");
        }
    }
    if let Some(audit) = &policy.audit {
        let _ = writeln!(out, "audit: {}", audit.display());
    }
    describe(&mut out, "program", &program, policy.dynamic_for(None));
    if let Some(rules) = &policy.shell.rules {
        describe_rules(&mut out, rules, None);
    }
    for name in policy.workers.keys() {
        let child = program.derive_worker(&policy, name)?;
        describe(&mut out, &format!("worker {name}"), &child, policy.dynamic_for(Some(name)));
        if policy.network_for(Some(name)) != &policy.network {
            let _ = writeln!(out, "  network: {}", policy.network_for(Some(name)).describe());
        }
        if let Some(rules) = policy.command_rules_for(Some(name)).filter(|r| Some(*r) != policy.shell.rules.as_ref()) {
            describe_rules(&mut out, rules, Some(name));
        }
    }
    if !policy.tools.is_empty() {
        describe_tools(&mut out, &policy, registry)?;
    }
    Ok(out)
}

/// The mounts whose suffix rules or size caps hold for tools but not for
/// shell commands, which see every file the mount's mode allows.
fn rules_commands_skip(sandbox: &Sandbox) -> Option<String> {
    let mounts: Vec<String> = sandbox
        .mounts()
        .iter()
        .filter(|m| m.rules.suffixes.is_some() || m.rules.max_file_bytes.is_some())
        .map(|m| m.path.to_string())
        .collect();
    (!mounts.is_empty()).then(|| {
        format!(
            "not for shell commands: the suffix rules and size caps of {} (a command reads and writes every file its mount's mode allows; \
             hide files from commands with shell.deny_read)",
            mounts.join(", ")
        )
    })
}

/// The command rules, in order, each with its place; the examples ran when the policy loaded.
fn describe_rules(out: &mut String, rules: &CommandRules, worker: Option<&str>) {
    let _ = writeln!(
        out,
        "  command rules: {} ({} examples checked), unmatched {}, unparsed {}",
        rules.set.rules().len(),
        rules.examples,
        rules.set.unmatched,
        rules.set.unparsed
    );
    for (i, rule) in rules.set.rules().iter().enumerate() {
        // A worker lists the rules it adds; the program's are listed above.
        if worker.is_some() && rules.owners[i].as_deref() != worker {
            continue;
        }
        let place = rules.places[i].map(|(l, c)| format!("line {l}:{c}  ")).unwrap_or_default();
        let why = rule.justification.as_deref().map(|j| format!("  ({j})")).unwrap_or_default();
        let grant = rules.grants[i].as_ref().map(|g| format!("  grants {}", granted_shown(&warden_policy::Granted { network: g.network.clone().unwrap_or_default(), write: g.write.clone() }))).unwrap_or_default();
        let _ = writeln!(out, "    {place}{:<6} {}{why}{grant}", rule.decision.as_str(), rule.shown());
    }
}

/// Loads each declared component and checks its tools as `warden mcp` does
/// at start, then lists the tools it would offer, each with its description.
fn describe_tools(out: &mut String, policy: &Policy, registry: &RegistryArgs) -> Result<(), Failure> {
    let invalid = |e: String| Failure::usage(format!("invalid policy: {}: {e}", policy.file.display()));
    let runtime = Runtime::new(RuntimeOptions { cache_dir: warden_wasm::default_cache_dir(), max_concurrent: 1, pooled: false })
        .map_err(|e| Failure::usage(format!("warden: {e}")))?;
    let fetcher = Fetcher::new(registry, None, Some(&policy.registries))?;
    let components = warden_mcp::check_tools(policy, runtime, &|source| fetcher.fetch(source)).map_err(invalid)?;
    if let Some(refusal) = components.refused.first() {
        return Err(invalid(refusal.clone()));
    }
    out.push_str("tools (warden mcp):\n");
    for decl in policy.tools.values() {
        let _ = write!(out, "  {}  {}  worker {}", decl.key, decl.component, decl.worker.as_deref().unwrap_or("(program)"));
        if let ComponentSource::Oci(oci) = &decl.component {
            let _ = write!(out, "  {}", oci.trust_shown());
        }
        if let Some(digest) = &decl.digest {
            let _ = write!(out, "  digest blake3:{digest} (matches)");
        }
        out.push_str(&limits(&decl.limits));
        out.push('\n');
        let offered: Vec<_> = components.tools.iter().filter(|t| t.key() == decl.key).map(|t| &t.definition).collect();
        if offered.is_empty() {
            out.push_str("    offers no tools\n");
        }
        // One tool a line, with the description a model reads: what the operator lets the agent see.
        for tool in offered {
            let description = tool.description.as_deref().map(|d| warden_policy::shown(d).into_owned()).unwrap_or_default();
            let _ = writeln!(out, "    offers {}: {description}", tool.name);
        }
    }
    Ok(())
}

/// The limits a policy sets, as `  limits timeout 5s, memory 64MiB`; empty when none.
fn limits(l: &Limits) -> String {
    let mut set = Vec::new();
    if let Some(timeout) = l.timeout {
        set.push(format!("timeout {timeout:?}"));
    }
    if let Some(bytes) = l.memory_bytes {
        set.push(format!("memory {}", size(bytes)));
    }
    if let Some(fuel) = l.fuel {
        set.push(format!("fuel {fuel}"));
    }
    if let Some(bytes) = l.output_bytes {
        set.push(format!("output {}", size(bytes)));
    }
    if set.is_empty() { String::new() } else { format!("  limits {}", set.join(", ")) }
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}KiB", b >> 10),
        b => format!("{b} bytes"),
    }
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
    let Some(c) = &shell.container else {
        if cfg!(target_os = "macos") {
            return "the OS sandbox (Seatbelt)".into();
        }
        return warden_shell::explain_os_backend(shell.os_backend);
    };
    let mut text = format!("a container of {} on {}", c.image, c.engine.name());
    let defaulted = |set: bool| if set { "" } else { " (default)" };
    let memory = c.memory_bytes.unwrap_or(warden_shell::container::DEFAULT_MEMORY);
    let _ = write!(text, ", memory {} MiB{}, no swap", memory >> 20, defaulted(c.memory_bytes.is_some()));
    let cpus = c.nano_cpus.unwrap_or(warden_shell::container::DEFAULT_NANO_CPUS);
    let _ = write!(text, ", {} CPUs{}", cpus as f64 / 1e9, defaulted(c.nano_cpus.is_some()));
    match c.user {
        Some(warden_policy::ContainerUser::Root) => text.push_str(", commands as root"),
        Some(warden_policy::ContainerUser::Id { uid, gid }) => {
            let _ = write!(text, ", commands as {uid}:{gid}");
        }
        None => text.push_str(", commands as the first writable mount's owner"),
    }
    if let Some(root) = &c.workspace_root {
        let _ = write!(text, ", mounts inside {}", root.display());
    }
    text
}
