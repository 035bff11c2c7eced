//! `warden fs`: one capability-filesystem operation per call.

use std::io::{Read, Write};
use std::time::UNIX_EPOCH;

use warden_fs::{EntryKind, ReadOptions, Sandbox};

use crate::cli::{FsArgs, FsOp};
use crate::exit::Failure;

pub fn run(args: FsArgs) -> Result<(), Failure> {
    let policy = warden_policy::load(&args.policy)?;
    let sandbox = Sandbox::open_for(&policy, args.worker.as_deref())?;
    let mut stdout = std::io::stdout().lock();
    match args.op {
        FsOp::Read { path, offset, max_chars } => {
            let read = sandbox.read(&path, ReadOptions { offset, max_chars })?;
            stdout.write_all(read.text.as_bytes())?;
            if let Some(notice) = read.notice() {
                eprintln!("{notice}");
            }
        }
        FsOp::Write { path } => {
            let mut content = Vec::new();
            std::io::stdin().read_to_end(&mut content)?;
            let written = sandbox.write(&path, &content)?;
            let verb = if written.created { "created" } else { "replaced" };
            writeln!(stdout, "{verb} {path} ({} bytes)", written.bytes)?;
        }
        FsOp::Edit { path, old, new } => {
            sandbox.edit(&path, &old, &new)?;
            writeln!(stdout, "edited {path}")?;
        }
        FsOp::List { path, glob } => {
            for entry in sandbox.list_files(path.as_deref(), glob.as_deref())? {
                let slash = if entry.kind == EntryKind::Dir { "/" } else { "" };
                writeln!(stdout, "{}{slash}", entry.path)?;
            }
        }
        FsOp::Stat { path } => {
            let stat = sandbox.stat(&path)?;
            let modified = stat.modified.and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_secs());
            let json = serde_json::json!({
                "path": stat.path.as_str(),
                "kind": kind_name(stat.kind),
                "size": stat.size,
                "modified": modified,
                "writable": stat.writable,
            });
            writeln!(stdout, "{json}")?;
        }
        FsOp::Delete { path } => {
            sandbox.delete(&path)?;
            writeln!(stdout, "deleted {path}")?;
        }
        FsOp::Mkdir { path } => {
            sandbox.mkdir(&path)?;
            writeln!(stdout, "created folder {path}")?;
        }
        FsOp::Move { src, dst } => {
            sandbox.move_path(&src, &dst)?;
            writeln!(stdout, "moved {src} to {dst}")?;
        }
        FsOp::Copy { src, dst } => {
            sandbox.copy(&src, &dst)?;
            writeln!(stdout, "copied {src} to {dst}")?;
        }
    }
    Ok(())
}

fn kind_name(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::File => "file",
        EntryKind::Dir => "dir",
        EntryKind::Symlink => "symlink",
        EntryKind::Other => "other",
    }
}
