//! escape: a hostile tool. Each attempt tries to leave the sandbox; returning
//! at all means it got out. Rust twin of guests/python/hostile and
//! guests/js/hostile, with one more attempt: a panic, which must come back as
//! a `failed` error, not a trap.
//!
//! The mounts it expects: /data read-only, /out read-write with only `.md`
//! files allowed. The host test is host/warden-wasm/tests/polyglot.rs.

use serde::Deserialize;
use warden_tool::{json, Error, PathContext, Tool, Value};

fn read(path: &str) -> Result<Value, Error> {
    Ok(Value::String(String::from_utf8_lossy(&std::fs::read(path).at(path)?).into_owned()))
}

fn write(path: &str, text: &[u8]) -> Result<Value, Error> {
    std::fs::write(path, text).at(path)?;
    Ok(json!("written"))
}

/// wasi-libc's symlink(): std's is unstable on WASI.
fn symlink(target: &str, link: &str) -> std::io::Result<()> {
    unsafe extern "C" {
        fn symlink(target: *const std::ffi::c_char, link: *const std::ffi::c_char) -> std::ffi::c_int;
    }
    let (target, link) = (std::ffi::CString::new(target)?, std::ffi::CString::new(link)?);
    // SAFETY: two NUL-terminated strings that live across the call.
    if unsafe { symlink(target.as_ptr(), link.as_ptr()) } == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

fn attempt(name: &str) -> Result<Value, Error> {
    match name {
        "dotdot" => read("/data/../secret.txt"),
        "absolute" => read("/etc/passwd"),
        "proc" => read("/proc/self/environ"),
        "symlink_out" => {
            symlink("../secret.txt", "/out/link.md").at("/out/link.md")?;
            read("/out/link.md")
        }
        "hardlink_out" => {
            std::fs::hard_link("/data/a.md", "/out/linked.md").at("/out/linked.md")?;
            Ok(json!("linked"))
        }
        "write_ro" => write("/data/planted.md", b"planted"),
        "rename_into_ro" => {
            write("/out/moved.md", b"x")?;
            std::fs::rename("/out/moved.md", "/data/moved.md").at("/data/moved.md")?;
            Ok(json!("renamed"))
        }
        "suffix" => write("/out/run.sh", b"echo planted"),
        "oversize" => write("/out/big.md", &vec![b'x'; 2 << 20]),
        "environment" => Ok(json!(std::env::vars().collect::<std::collections::BTreeMap<_, _>>())),
        // What the host's clocks and randomness tell the tool: the same on
        // every run under `--deterministic`, different otherwise.
        "clock_and_random" => {
            use std::hash::BuildHasher;
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
            let seeded = std::collections::hash_map::RandomState::new().hash_one("warden");
            Ok(json!({ "now_ns": now, "seeded_hash": seeded }))
        }
        "panic" => {
            let empty: Vec<u8> = Vec::new();
            Ok(json!(empty[name.len()]))
        }
        other => Err(Error::InvalidInput(format!("no attempt named '{other}'"))),
    }
}

#[derive(Deserialize)]
struct Escape {
    attempt: String,
    /// Give the support crate's class of the error as output, where the
    /// host cannot reword it (it does so for a `failed` after a refusal).
    #[serde(default)]
    report: bool,
}

fn escape(args: Escape) -> Result<Value, Error> {
    match attempt(&args.attempt) {
        Ok(got) => Ok(json!({ "escaped": args.attempt, "got": got })),
        Err(e) if args.report => {
            let (class, said) = match e {
                Error::Denied(said) => ("denied", said),
                Error::Failed(said) => ("failed", said),
                Error::InvalidInput(said) => ("invalid-input", said),
            };
            Ok(json!({ "class": class, "said": said }))
        }
        Err(e) => Err(e),
    }
}

fn tools() -> Vec<Tool> {
    vec![Tool::new(
        "escape",
        "Try one way out of the sandbox.",
        r#"{"type":"object","required":["attempt"],"properties":{"attempt":{"enum":["absolute","clock_and_random","dotdot","environment","hardlink_out","oversize","panic","proc","rename_into_ro","suffix","symlink_out","write_ro"]},"report":{"type":"boolean"}}}"#,
        escape,
    )]
}

warden_tool::export_tools!(tools);
