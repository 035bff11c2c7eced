//! The user guide in `docs/` (an mdBook) as the code sees it: the reference
//! pages rendered from the code (the command line from clap, the policy keys
//! from the JSON Schema, the MCP tools from a real server's `tools/list`), and
//! the checks that keep the guide and the README true (links and anchors in
//! the built book, figures that link to the benchmark that measured them,
//! examples marked runnable).

pub mod blocks;
pub mod cli;
pub mod figures;
pub mod links;
pub mod mcp;
pub mod policy;
mod schema_text;

use std::path::{Path, PathBuf};

/// The reference pages, relative to the repository's root, in the order
/// `warden-docs generate` writes them.
pub const REFERENCE_PAGES: [&str; 3] = [
    "docs/src/reference/cli.md",
    "docs/src/reference/policy.md",
    "docs/src/reference/mcp-tools.md",
];

/// The policy whose `warden mcp` tool list the MCP reference shows.
pub const MCP_POLICY: &str = "policies/example/agent.yaml";

/// The repository's root (this crate sits in `host/warden-docs`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository's root exists")
}

/// Every Markdown file a reader sees: the README, then the book's chapters
/// (generated pages included), sorted.
pub fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut found = files_named(&root.join("docs/src"), "md");
    found.sort();
    found.insert(0, root.join("README.md"));
    found
}

/// The files below `dir` whose extension is `extension`, folders searched
/// depth first.
pub(crate) fn files_named(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for path in entries.flatten().map(|entry| entry.path()) {
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == extension) {
                found.push(path);
            }
        }
    }
    found
}

/// The lines of Markdown text a reader reads as prose, numbered from 1:
/// outside fenced code blocks, with code spans left out.
pub(crate) fn prose_lines(markdown: &str) -> Vec<(usize, String)> {
    let mut prose = Vec::new();
    let mut fenced = false;
    for (index, line) in markdown.lines().enumerate() {
        if blocks::fence(line).is_some() {
            fenced = !fenced;
        } else if !fenced {
            prose.push((
                index + 1,
                line.split('`').step_by(2).collect::<Vec<_>>().join(" "),
            ));
        }
    }
    prose
}
