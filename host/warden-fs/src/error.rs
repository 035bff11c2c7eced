//! Errors, worded for a language model: virtual paths only, and what *is* allowed.

use std::fmt;
use std::io;

pub use warden_policy::Access;
use warden_policy::{shown, DeriveError, PathError, PolicyError};

/// A refusal by the sandbox. `Display` is the text shown to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denial {
    /// Not inside any readable area. `readable` is the list of readable roots.
    OutsideSandbox { path: String, readable: String },
    /// Inside a readable area only.
    ReadOnly { path: String, writable: String },
    /// Inside a writable area only (a derived folder named in `allow_write` alone).
    WriteOnly { path: String, readable: String },
    /// The string is not a usable virtual path.
    InvalidPath { path: String, reason: PathError, readable: String },
    SuffixNotAllowed { path: String, suffix: String, allowed: String },
    FileTooLarge { path: String, size: u64, max: u64 },
    ContentTooLarge { path: String, size: u64, max: u64 },
    /// The access needs a person's approval and no one could be asked.
    /// `allowed` lists the readable (for reads) or writable (for writes) paths.
    NeedsApproval { access: Access, path: String, allowed: String },
    /// A person was asked and said no.
    Declined { access: Access, path: String, allowed: String },
    /// A connection the sandbox's network does not allow (components).
    Network(warden_policy::NetRefusal),
}

fn verb(access: Access) -> &'static str {
    match access {
        Access::Read => "read",
        Access::Write => "write to",
    }
}

fn allowed_label(access: Access) -> &'static str {
    match access {
        Access::Read => "Readable paths",
        Access::Write => "Writable paths",
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denial::OutsideSandbox { path, readable } => {
                write!(f, "Cannot access '{path}': path is outside sandbox.\nReadable paths: {readable}", path = shown(path))
            }
            Denial::ReadOnly { path, writable } => {
                write!(f, "Cannot write to '{path}': path is read-only.\nWritable paths: {writable}", path = shown(path))
            }
            Denial::WriteOnly { path, readable } => {
                write!(f, "Cannot read '{path}': path is write-only.\nReadable paths: {readable}", path = shown(path))
            }
            Denial::InvalidPath { path, reason, readable } => {
                write!(f, "Cannot access '{path}': {reason}.\nReadable paths: {readable}", path = shown(path))
            }
            Denial::SuffixNotAllowed { path, suffix, allowed } => {
                write!(f, "Cannot access '{path}': suffix '{suffix}' not allowed.\nAllowed suffixes: {allowed}", path = shown(path))
            }
            Denial::FileTooLarge { path, size, max } => {
                write!(f, "Cannot read '{path}': file too large ({size} bytes).\nMaximum allowed: {max} bytes", path = shown(path))
            }
            Denial::ContentTooLarge { path, size, max } => {
                write!(f, "Cannot write to '{path}': content too large ({size} bytes).\nMaximum allowed: {max} bytes", path = shown(path))
            }
            Denial::NeedsApproval { access, path, allowed } => write!(
                f,
                "Cannot {} '{path}': access needs the user's approval, which may be requested.\n{}: {allowed}",
                verb(*access),
                allowed_label(*access),
                path = shown(path)
            ),
            Denial::Declined { access, path, allowed } => write!(
                f,
                "Cannot {} '{path}': the user declined access.\n{}: {allowed}",
                verb(*access),
                allowed_label(*access),
                path = shown(path)
            ),
            Denial::Network(refusal) => refusal.fmt(f),
        }
    }
}

/// What an operation was doing, for messages: "Cannot {verb} '{path}'".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Edit,
    Delete,
    Mkdir,
    Move,
    Copy,
    List,
    Stat,
    Derive,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Read => "read",
            Op::Write => "write to",
            Op::Edit => "edit",
            Op::Delete => "delete",
            Op::Mkdir => "create folder",
            Op::Move => "move",
            Op::Copy => "copy",
            Op::List => "list",
            Op::Stat => "stat",
            Op::Derive => "derive a sandbox for",
        })
    }
}

#[derive(Debug)]
pub enum FsError {
    Denied(Denial),
    NotFound { op: Op, path: String },
    AlreadyExists { op: Op, path: String },
    IsADirectory { op: Op, path: String },
    NotADirectory { op: Op, path: String },
    NotText { path: String },
    EditNotFound { path: String },
    EditNotUnique { path: String, count: usize },
    EditEmpty { path: String },
    MountRoot { op: Op, path: String },
    Unsupported { op: Op, path: String, why: &'static str },
    InvalidGlob { glob: String, why: String },
    Derive(DeriveError),
    /// A policy's worker that cannot be derived on this host (e.g. an entry
    /// that leads out through a symlink), reported as the policy's error.
    Policy(PolicyError),
    UnknownWorker { name: String, known: Vec<String> },
    /// Any other I/O failure. The OS text carries no path.
    Io { op: Op, path: String, source: io::Error },
}

impl FsError {
    /// A sandbox refusal (as opposed to a missing file or a failed write).
    pub fn is_denial(&self) -> bool {
        matches!(self, FsError::Denied(_) | FsError::Derive(DeriveError::Escalation { .. }))
    }

    /// A mistake in the request's own arguments.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            FsError::InvalidGlob { .. }
                | FsError::UnknownWorker { .. }
                | FsError::Policy(_)
                | FsError::Derive(DeriveError::InvalidEntry { .. } | DeriveError::MissingEntry { .. } | DeriveError::ReadonlyWithWrites)
        )
    }
}

impl From<Denial> for FsError {
    fn from(d: Denial) -> Self {
        FsError::Denied(d)
    }
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FsError::Denied(d) => d.fmt(f),
            FsError::NotFound { op, path } => write!(f, "Cannot {op} '{path}': no such file or folder.", path = shown(path)),
            FsError::AlreadyExists { op: op @ (Op::Move | Op::Copy), path } => {
                write!(f, "Cannot {op} to '{path}': destination already exists.", path = shown(path))
            }
            FsError::AlreadyExists { op, path } => write!(f, "Cannot {op} '{path}': it already exists.", path = shown(path)),
            FsError::IsADirectory { op, path } => write!(f, "Cannot {op} '{path}': it is a folder.", path = shown(path)),
            FsError::NotADirectory { op, path } => write!(f, "Cannot {op} '{path}': it is not a folder.", path = shown(path)),
            FsError::NotText { path } => {
                write!(f, "Cannot read '{path}': file is not UTF-8 text; read it as bytes instead.", path = shown(path))
            }
            FsError::EditNotFound { path } => write!(f, "Cannot edit '{path}': text to replace not found.", path = shown(path)),
            FsError::EditNotUnique { path, count } => write!(
                f,
                "Cannot edit '{path}': text to replace found {count} times. Include more surrounding text so that it is unique.",
                path = shown(path)
            ),
            FsError::EditEmpty { path } => write!(f, "Cannot edit '{path}': text to replace is empty.", path = shown(path)),
            FsError::MountRoot { op, path } => write!(f, "Cannot {op} '{path}': it is a sandbox root.", path = shown(path)),
            FsError::Unsupported { op, path, why } => write!(f, "Cannot {op} '{path}': {why}.", path = shown(path)),
            FsError::InvalidGlob { glob, why } => write!(f, "Invalid glob '{glob}': {why}"),
            FsError::Derive(e) => e.fmt(f),
            FsError::Policy(e) => e.fmt(f),
            FsError::UnknownWorker { name, known } => {
                let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
                write!(f, "unknown worker '{name}'; the policy defines: {known}")
            }
            FsError::Io { op, path, source } => write!(f, "Cannot {op} '{path}': {}", io_text(source), path = shown(path)),
        }
    }
}

/// The OS's words without the "(os error N)" tail.
fn io_text(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

impl std::error::Error for FsError {}

pub type Result<T, E = FsError> = std::result::Result<T, E>;
