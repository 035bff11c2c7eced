//! `warden fs`: one capability-filesystem operation per call.

use std::io::{Read, Write};
use std::time::UNIX_EPOCH;

use warden_fs::{EntryKind, ReadOptions, Sandbox};

use crate::cli::{FsArgs, FsOp};
use crate::exit::Failure;

pub fn run(args: FsArgs) -> Result<(), Failure> {
    let policy = warden_policy::load(&args.policy)?;
    let tool = format!("warden fs {}", op_name(&args.op));
    let listed = crate::approve::Listed { tool: tool.clone(), detail: paths_of(&args.op).join(" ") };
    let approvals = crate::approve::Approvals::open(&policy, args.worker.as_deref(), &args.approvals, &listed)?;
    let content = match &args.op {
        FsOp::Write { .. } => {
            let mut content = Vec::new();
            std::io::stdin().read_to_end(&mut content)?;
            content
        }
        _ => Vec::new(),
    };
    // Cancelled at the console while it read its input: nothing is done. (Cancelled while a question
    // waits, the question goes unanswered and the operation is refused.)
    approvals.not_cancelled()?;
    let mut session = approvals.session;
    let printed = session.attempt(Some(&tool), |sandbox| perform(sandbox, &args.op, &content))??;
    std::io::stdout().lock().write_all(printed.stdout.as_bytes())?;
    if let Some(notice) = printed.notice {
        eprintln!("{notice}");
    }
    Ok(())
}

/// What an operation prints: on stdout, and a notice for stderr.
struct Printed {
    stdout: String,
    notice: Option<String>,
}

impl From<String> for Printed {
    fn from(stdout: String) -> Printed {
        Printed { stdout, notice: None }
    }
}

/// Does one operation; it may run again after a person grants access, so it
/// prints nothing itself.
fn perform(sandbox: &Sandbox, op: &FsOp, content: &[u8]) -> warden_fs::Result<Printed> {
    let line = match op {
        FsOp::Read { path, offset, max_chars } => {
            let read = sandbox.read(path, ReadOptions { offset: *offset, max_chars: *max_chars })?;
            let notice = read.notice();
            return Ok(Printed { stdout: read.text, notice });
        }
        FsOp::Write { path } => {
            let written = sandbox.write(path, content)?;
            let verb = if written.created { "created" } else { "replaced" };
            format!("{verb} {path} ({} bytes)", written.bytes)
        }
        FsOp::Edit { path, old, new } => {
            sandbox.edit(path, old, new)?;
            format!("edited {path}")
        }
        FsOp::List { path, glob } => {
            let entries = sandbox.list_files(path.as_deref(), glob.as_deref())?;
            let slash = |kind| if kind == EntryKind::Dir { "/" } else { "" };
            let lines: String = entries.iter().map(|e| format!("{}{}\n", e.path, slash(e.kind))).collect();
            return Ok(Printed::from(lines));
        }
        FsOp::Stat { path } => {
            let stat = sandbox.stat(path)?;
            let modified = stat.modified.and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_secs());
            let json = serde_json::json!({
                "path": stat.path.as_str(),
                "kind": stat.kind.as_str(),
                "size": stat.size,
                "modified": modified,
                "writable": stat.writable,
            });
            format!("{json}")
        }
        FsOp::Delete { path } => {
            sandbox.delete(path)?;
            format!("deleted {path}")
        }
        FsOp::Mkdir { path } => {
            sandbox.mkdir(path)?;
            format!("created folder {path}")
        }
        FsOp::Move { src, dst } => {
            sandbox.move_path(src, dst)?;
            format!("moved {src} to {dst}")
        }
        FsOp::Copy { src, dst } => {
            sandbox.copy(src, dst)?;
            format!("copied {src} to {dst}")
        }
    };
    Ok(Printed::from(format!("{line}\n")))
}

/// The paths an operation names, for the console.
fn paths_of(op: &FsOp) -> Vec<&str> {
    match op {
        FsOp::Read { path, .. } | FsOp::Write { path } | FsOp::Edit { path, .. } | FsOp::Stat { path } | FsOp::Delete { path } | FsOp::Mkdir { path } => vec![path],
        FsOp::List { path, .. } => vec![path.as_deref().unwrap_or("/")],
        FsOp::Move { src, dst } | FsOp::Copy { src, dst } => vec![src, dst],
    }
}

fn op_name(op: &FsOp) -> &'static str {
    match op {
        FsOp::Read { .. } => "read",
        FsOp::Write { .. } => "write",
        FsOp::Edit { .. } => "edit",
        FsOp::List { .. } => "list",
        FsOp::Stat { .. } => "stat",
        FsOp::Delete { .. } => "delete",
        FsOp::Mkdir { .. } => "mkdir",
        FsOp::Move { .. } => "move",
        FsOp::Copy { .. } => "copy",
    }
}
