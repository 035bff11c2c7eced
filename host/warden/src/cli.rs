//! The command line, as clap sees it. The doc comments are the `--help` text.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Run untrusted tools in sandboxes.
///
/// A policy file names the host folders a tool may see and the rules for each.
/// Every access goes through directory handles opened once per mount, so `..`
/// and symlinks cannot leave a mount.
///
/// Exit status: 0 success, 1 failure (e.g. a missing file), 2 usage error or
/// invalid policy, 3 denied by the sandbox (the reason is on stderr).
#[derive(Debug, Parser)]
#[command(name = "warden", version, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a policy and print the effective mounts of the program and of each worker.
    Check {
        /// The policy file (YAML).
        policy: PathBuf,
    },
    /// Print the JSON Schema of policy files, for editors.
    Schema,
    /// Use the capability filesystem of a policy, as a tool inside it would.
    ///
    /// Paths are virtual: `/portfolio/x.md` (also `portfolio/x.md` or
    /// `portfolio:x.md`) with named mounts, `/src/a.py` or `src/a.py` with one root.
    Fs(FsArgs),
}

#[derive(Debug, clap::Args)]
pub struct FsArgs {
    /// The policy file (YAML).
    #[arg(long, value_name = "POLICY")]
    pub policy: PathBuf,
    /// Act as this worker of the policy, with its derived (narrower) access.
    #[arg(long, value_name = "NAME")]
    pub worker: Option<String>,
    #[command(subcommand)]
    pub op: FsOp,
}

#[derive(Debug, Subcommand)]
pub enum FsOp {
    /// Print a text file, or a window of it counted in characters.
    ///
    /// A truncated read says so on stderr, with the offset to read the rest from.
    Read {
        path: String,
        /// First character to print.
        #[arg(long, default_value_t = 0, value_name = "N")]
        offset: usize,
        /// Most characters to print.
        #[arg(long, value_name = "N")]
        max_chars: Option<usize>,
    },
    /// Write standard input to a file, atomically; missing parent folders are created.
    Write { path: String },
    /// Replace the one occurrence of --old with --new in a text file.
    Edit {
        path: String,
        /// Text to replace; it must occur exactly once.
        #[arg(long, allow_hyphen_values = true)]
        old: String,
        /// Replacement text.
        #[arg(long, allow_hyphen_values = true)]
        new: String,
    },
    /// List files and folders below PATH (default: everything), one per line, sorted.
    ///
    /// Folders end in `/`. Files that the mount's suffix rule hides are left out.
    List {
        path: Option<String>,
        /// Keep entries matching this glob. Without a `/` it matches names at
        /// any depth (`*.md`); with one, the path below PATH (`src/**/*.rs`).
        #[arg(long, value_name = "PATTERN")]
        glob: Option<String>,
    },
    /// Print what a path is, as JSON: kind, size, modification time, writable.
    Stat { path: String },
    /// Delete a file, a symlink or an empty folder.
    Delete { path: String },
    /// Create a folder and any missing parents.
    Mkdir { path: String },
    /// Move a file or folder; DST must not exist and its parents are created.
    Move { src: String, dst: String },
    /// Copy a file, e.g. from a read-only mount into a writable one; DST must not exist.
    Copy { src: String, dst: String },
}
