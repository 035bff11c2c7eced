//! The container's own seccomp profile: the engine's default profile with
//! Warden's rules added (those `seccomp.rs` gives bubblewrap's commands), so
//! that every process in the container has them, whatever started it.
//!
//! The engines' profiles are allow-lists, and runc (through libseccomp) lets
//! an unconditional allow of a call win over a refusal of some of its
//! arguments. So a call Warden refuses outright is taken out of every allow
//! rule; a call Warden refuses for some values of one argument (`socket` of
//! `AF_UNIX`, `ioctl` of `TIOCSTI`) keeps its allow rules, each narrowed to
//! the other values of that argument, written as blocks of the 32-bit value
//! (`SCMP_CMP_MASKED_EQ`, one block a rule; runc reads two conditions on one
//! argument as either-or, so each rule names the argument once). A rule of
//! the engine's that already narrows that argument by `!=` has its value
//! added to the excluded ones; any other such rule cannot be combined and
//! stops the container from being made.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::container::engine::EngineKind;
use crate::error::ShellError;

/// Where the engines' default profile is found: containers-common's, which
/// podman uses and from which docker's was derived.
const BASE_PROFILES: &[&str] = &["/etc/containers/seccomp.json", "/usr/share/containers/seccomp.json"];

/// Calls no command may make at all.
const REFUSED: &[&str] = &["ptrace", "process_vm_readv", "process_vm_writev", "io_uring_setup", "io_uring_enter", "io_uring_register"];

/// A call refused for some values of one argument, as the kernel reads it (32 bits).
struct Narrowed {
    call: &'static str,
    argument: u64,
    refused: Vec<u32>,
}

/// The `seccomp=` security option that gives a container Warden's profile:
/// podman's service reads a file (written once into Warden's private folder),
/// dockerd takes the profile itself.
///
/// All of Warden's rules but one: new Unix sockets stay allowed, because the
/// runner listens on one. Every command starts from the runner, which loads
/// Warden's whole program into it (that rule included, unless the policy
/// allows them), and no command can reach or replace the runner's socket.
pub fn security_option(engine: EngineKind) -> Result<String, ShellError> {
    let profile = for_container(true)?;
    if engine == EngineKind::Docker {
        return Ok(profile);
    }
    let folder = crate::container::engine::own_folder().map_err(ShellError::Engine)?;
    let file = folder.join(format!("seccomp-{}.json", &blake3::hash(profile.as_bytes()).to_hex()[..16]));
    if std::fs::read(&file).is_ok_and(|bytes| bytes == profile.as_bytes()) {
        return Ok(file.display().to_string());
    }
    let written = (|| {
        let temp = folder.join(format!(".seccomp-{}", std::process::id()));
        std::fs::write(&temp, &profile)?;
        std::fs::rename(&temp, &file)
    })();
    written.map_err(|e| ShellError::Engine(format!("cannot write the container's seccomp profile into {}: {e}", folder.display())))?;
    Ok(file.display().to_string())
}

/// Warden's profile for a container whose processes hold no capability.
fn for_container(allow_unix_sockets: bool) -> Result<String, ShellError> {
    let (file, base) = base_profile()?;
    let profile = with_wardens_rules(base, allow_unix_sockets)
        .map_err(|why| ShellError::Policy(format!("Warden cannot add its rules to the seccomp profile {}: {why}", file.display())))?;
    Ok(serde_json::to_string(&profile).expect("a profile serializes"))
}

fn base_profile() -> Result<(PathBuf, Value), ShellError> {
    for file in BASE_PROFILES.iter().map(Path::new) {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let profile = serde_json::from_str(&text).map_err(|e| ShellError::Policy(format!("{} is not a seccomp profile: {e}", file.display())))?;
        return Ok((file.to_owned(), profile));
    }
    Err(ShellError::Policy(format!(
        "a container's commands get Warden's seccomp rules on top of the engine's default profile, which is not here (looked for {}); \
         install containers-common (Debian: apt-get install golang-github-containers-common), which ships it",
        BASE_PROFILES.join(", ")
    )))
}

/// `base` (a seccomp profile in the OCI/Docker form) with Warden's rules,
/// for processes with no capability: rules that need one are dropped, and
/// rules excluded by one are kept.
pub fn with_wardens_rules(mut base: Value, allow_unix_sockets: bool) -> Result<Value, String> {
    let mut narrowed = vec![Narrowed { call: "ioctl", argument: 1, refused: vec![libc::TIOCSTI as u32, libc::TIOCLINUX as u32] }];
    if !allow_unix_sockets {
        narrowed.push(Narrowed { call: "socket", argument: 0, refused: vec![libc::AF_UNIX as u32] });
    }
    let rules = base.get_mut("syscalls").and_then(Value::as_array_mut).ok_or("it has no `syscalls` list")?;
    let mut out = Vec::new();
    for rule in rules.drain(..) {
        let Some(rule) = without_capabilities(rule) else { continue };
        if rule.get("action").and_then(Value::as_str) != Some("SCMP_ACT_ALLOW") {
            out.push(rule);
            continue;
        }
        let names: Vec<String> = rule.get("names").and_then(Value::as_array).into_iter().flatten().filter_map(|n| n.as_str().map(str::to_owned)).collect();
        let plain: Vec<&String> = names.iter().filter(|n| !REFUSED.contains(&n.as_str()) && !narrowed.iter().any(|x| x.call == n.as_str())).collect();
        if !plain.is_empty() {
            let mut kept = rule.clone();
            kept["names"] = json!(plain);
            out.push(kept);
        }
        for call in narrowed.iter().filter(|x| names.iter().any(|n| n == x.call)) {
            out.extend(narrow(&rule, call)?);
        }
    }
    out.push(json!({ "names": REFUSED, "action": "SCMP_ACT_ERRNO", "errnoRet": 1 }));
    for call in &narrowed {
        for &value in &call.refused {
            out.push(json!({ "names": [call.call], "action": "SCMP_ACT_ERRNO", "errnoRet": 1, "args": [block(call.argument, value, 32)] }));
        }
    }
    *rules = out;
    Ok(base)
}

/// A rule as it applies to processes with no capability: `None` when it
/// needs one; its `excludes` of capabilities dropped, since none is held.
fn without_capabilities(mut rule: Value) -> Option<Value> {
    let needs = rule.pointer("/includes/caps").and_then(Value::as_array).is_some_and(|caps| !caps.is_empty());
    if needs {
        return None;
    }
    if let Some(excludes) = rule.get_mut("excludes").and_then(Value::as_object_mut) {
        excludes.remove("caps");
    }
    Some(rule)
}

/// The allow rule `rule`, for `call` alone, narrowed to the values of its
/// argument that are not refused: one rule per block of those values.
fn narrow(rule: &Value, call: &Narrowed) -> Result<Vec<Value>, String> {
    let mut refused = call.refused.clone();
    let mut other = Vec::new();
    for condition in rule.get("args").and_then(Value::as_array).into_iter().flatten() {
        if condition.get("index").and_then(Value::as_u64) != Some(call.argument) {
            other.push(condition.clone());
            continue;
        }
        match (condition.get("op").and_then(Value::as_str), condition.get("value").and_then(Value::as_u64)) {
            (Some("SCMP_CMP_NE"), Some(value)) if value <= u64::from(u32::MAX) => refused.push(value as u32),
            _ => return Err(format!("a rule for {} compares its argument {} in a way Warden cannot narrow: {condition}", call.call, call.argument)),
        }
    }
    Ok(allowed_blocks(&refused)
        .into_iter()
        .map(|(prefix, bits)| {
            let mut narrowed = rule.clone();
            narrowed["names"] = json!([call.call]);
            let mut args = other.clone();
            args.push(block(call.argument, prefix, bits));
            narrowed["args"] = Value::Array(args);
            narrowed
        })
        .collect())
}

/// The 32-bit values outside `refused`, as blocks `(prefix, bits)`: the
/// values whose first `bits` bits are those of `prefix`.
fn allowed_blocks(refused: &[u32]) -> Vec<(u32, u32)> {
    fn split(prefix: u64, bits: u32, refused: &[u32], out: &mut Vec<(u32, u32)>) {
        let size = 1u64 << (32 - bits);
        if !refused.iter().any(|&r| (prefix..prefix + size).contains(&u64::from(r))) {
            out.push((prefix as u32, bits));
        } else if bits < 32 {
            split(prefix, bits + 1, refused, out);
            split(prefix + size / 2, bits + 1, refused, out);
        }
    }
    let mut out = Vec::new();
    split(0, 0, refused, &mut out);
    out
}

/// A condition on argument `index`: its low 32 bits begin with the first `bits` bits of `prefix`.
fn block(index: u64, prefix: u32, bits: u32) -> Value {
    let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
    let mut condition = Map::new();
    condition.insert("index".into(), json!(index));
    condition.insert("value".into(), json!(mask));
    condition.insert("valueTwo".into(), json!(prefix & mask));
    condition.insert("op".into(), json!("SCMP_CMP_MASKED_EQ"));
    Value::Object(condition)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the profile does with one call, read as libseccomp and runc
    /// would: the actions of the rules that match; a rule's conditions all
    /// hold (each names its argument once); masked comparisons on 64 bits.
    fn actions(profile: &Value, call: &str, args: [u64; 6]) -> Vec<String> {
        let mut found = Vec::new();
        for rule in profile["syscalls"].as_array().unwrap() {
            if !rule["names"].as_array().unwrap().iter().any(|n| n == call) {
                continue;
            }
            let conditions = rule.get("args").and_then(Value::as_array).cloned().unwrap_or_default();
            let mut indices: Vec<u64> = conditions.iter().map(|c| c["index"].as_u64().unwrap()).collect();
            indices.sort();
            indices.dedup();
            assert_eq!(indices.len(), conditions.len(), "a rule names an argument twice: {rule}");
            let holds = conditions.iter().all(|c| {
                let arg = args[c["index"].as_u64().unwrap() as usize];
                let (value, two) = (c["value"].as_u64().unwrap(), c.get("valueTwo").and_then(Value::as_u64).unwrap_or(0));
                match c["op"].as_str().unwrap() {
                    "SCMP_CMP_MASKED_EQ" => arg & value == two,
                    "SCMP_CMP_NE" => arg != value,
                    "SCMP_CMP_EQ" => arg == value,
                    op => panic!("{op}"),
                }
            });
            if holds {
                found.push(format!("{}{}", rule["action"].as_str().unwrap(), rule.get("errnoRet").map(|e| format!("({e})")).unwrap_or_default()));
            }
        }
        found
    }

    fn base() -> Value {
        json!({ "defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 38, "syscalls": [
            { "names": ["read", "ptrace", "ioctl", "clone"], "action": "SCMP_ACT_ALLOW" },
            { "names": ["socket"], "action": "SCMP_ACT_ALLOW", "includes": { "caps": ["CAP_AUDIT_WRITE"] } },
            { "names": ["socket"], "action": "SCMP_ACT_ALLOW", "args": [{ "index": 2, "value": 9, "op": "SCMP_CMP_NE" }], "excludes": { "caps": ["CAP_AUDIT_WRITE"] } },
            { "names": ["socket"], "action": "SCMP_ACT_ERRNO", "errnoRet": 22, "args": [
                { "index": 0, "value": 16, "op": "SCMP_CMP_EQ" }, { "index": 2, "value": 9, "op": "SCMP_CMP_EQ" }], "excludes": { "caps": ["CAP_AUDIT_WRITE"] } },
            { "names": ["socket"], "action": "SCMP_ACT_ALLOW", "args": [{ "index": 0, "value": 16, "op": "SCMP_CMP_NE" }], "excludes": { "caps": ["CAP_AUDIT_WRITE"] } },
            { "names": ["mount"], "action": "SCMP_ACT_ALLOW", "includes": { "caps": ["CAP_SYS_ADMIN"] } },
        ] })
    }

    #[test]
    fn refused_calls_and_values_are_refused_and_the_rest_kept() {
        let profile = with_wardens_rules(base(), false).unwrap();
        let allow = |call: &str, args: [u64; 6]| actions(&profile, call, args).iter().any(|a| a == "SCMP_ACT_ALLOW");
        let refused = |call: &str, args: [u64; 6]| actions(&profile, call, args).iter().any(|a| a == "SCMP_ACT_ERRNO(1)");
        assert!(allow("read", [0; 6]) && allow("clone", [0; 6]));
        assert!(!allow("ptrace", [0; 6]) && refused("ptrace", [0; 6]));
        // TIOCSTI, with or without high bits, is refused; other ioctls are not.
        for cmd in [0x5412, 0x1_0000_5412, 0x541c] {
            assert!(!allow("ioctl", [0, cmd, 0, 0, 0, 0]) && refused("ioctl", [0, cmd, 0, 0, 0, 0]), "{cmd:#x}");
        }
        assert!(allow("ioctl", [0, 0x5401, 0, 0, 0, 0]) && !refused("ioctl", [0, 0x5401, 0, 0, 0, 0]));
        // AF_UNIX, with or without high bits, is refused; AF_INET is not; the
        // engine's own narrowing (family 16 only with another protocol than 9) holds.
        for family in [1, 0x1_0000_0001] {
            assert!(!allow("socket", [family, 1, 0, 0, 0, 0]) && refused("socket", [family, 1, 0, 0, 0, 0]));
        }
        assert!(allow("socket", [2, 1, 0, 0, 0, 0]));
        assert!(!allow("socket", [16, 3, 9, 0, 0, 0]));
        assert_eq!(actions(&profile, "socket", [16, 3, 9, 0, 0, 0]), ["SCMP_ACT_ERRNO(22)"]);
        // A rule that needs a capability is gone; none is held.
        assert!(!allow("mount", [0; 6]));
    }

    #[test]
    fn unix_sockets_stay_when_allowed() {
        let profile = with_wardens_rules(base(), true).unwrap();
        let unix = actions(&profile, "socket", [1, 1, 0, 0, 0, 0]);
        assert!(unix.contains(&"SCMP_ACT_ALLOW".to_owned()) && unix.iter().all(|a| a == "SCMP_ACT_ALLOW"), "{unix:?}");
    }

    #[test]
    fn a_rule_that_cannot_be_narrowed_stops_the_profile() {
        let mut profile = base();
        profile["syscalls"].as_array_mut().unwrap().push(json!({ "names": ["ioctl"], "action": "SCMP_ACT_ALLOW", "args": [{ "index": 1, "value": 5, "op": "SCMP_CMP_GT" }] }));
        let why = with_wardens_rules(profile, false).unwrap_err();
        assert!(why.starts_with("a rule for ioctl compares its argument 1 in a way Warden cannot narrow"), "{why}");
    }

    #[test]
    fn the_blocks_cover_every_value_but_the_refused_ones() {
        let blocks = allowed_blocks(&[1, 0x5412]);
        let covered = |v: u32| blocks.iter().filter(|&&(p, bits)| bits == 0 || v >> (32 - bits) == p >> (32 - bits)).count();
        for v in [0, 2, 3, 0x5411, 0x5413, u32::MAX, 0x8000_0000] {
            assert_eq!(covered(v), 1, "{v:#x}");
        }
        assert_eq!((covered(1), covered(0x5412)), (0, 0));
        assert!(blocks.len() <= 64, "{}", blocks.len());
    }

    #[test]
    fn the_profile_this_host_has_takes_wardens_rules() {
        // Installed with podman (policies/setup.sh does).
        let (_, base) = base_profile().unwrap();
        let profile = with_wardens_rules(base, false).unwrap();
        assert!(actions(&profile, "socket", [1, 1, 0, 0, 0, 0]).iter().all(|a| a != "SCMP_ACT_ALLOW"));
        assert!(actions(&profile, "socket", [2, 1, 0, 0, 0, 0]).iter().any(|a| a == "SCMP_ACT_ALLOW"));
        assert!(actions(&profile, "ptrace", [0; 6]).iter().all(|a| a != "SCMP_ACT_ALLOW"));
    }
}
