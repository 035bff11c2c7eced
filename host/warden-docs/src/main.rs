//! `warden-docs generate` writes the guide's reference pages from the code;
//! `warden-docs check` says which of them are out of date (the tests run it).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use warden_docs::{MCP_POLICY, REFERENCE_PAGES, cli, mcp, policy, repo_root};

/// The user guide's reference pages (docs/src/reference), generated from the
/// code: the command line from clap, the policy keys from the JSON Schema, the
/// MCP tools from a real `warden mcp`'s `tools/list`.
#[derive(Parser)]
#[command(name = "warden-docs", max_term_width = 100)]
struct Args {
    #[command(subcommand)]
    action: Action,
    /// The `warden` binary whose MCP server lists the tools (default: the one
    /// built beside this program).
    #[arg(long, global = true)]
    warden: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Action {
    /// Write the reference pages.
    Generate,
    /// Exit 1, naming each reference page that differs from what the code
    /// generates now.
    Check,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let root = repo_root();
    let warden = args.warden.unwrap_or_else(beside_this_program);
    let pages = match generate(&root, &warden) {
        Ok(pages) => pages,
        Err(e) => {
            eprintln!("warden-docs: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stale = Vec::new();
    for (relative, text) in REFERENCE_PAGES.iter().zip(pages) {
        let path = root.join(relative);
        match args.action {
            Action::Generate => {
                if let Err(e) = std::fs::write(&path, text) {
                    eprintln!("warden-docs: cannot write {}: {e}", path.display());
                    return ExitCode::FAILURE;
                }
            }
            Action::Check => {
                if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                    stale.push(*relative);
                }
            }
        }
    }
    if stale.is_empty() {
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "warden-docs: out of date (the code changed since they were generated): {}\n\
         regenerate them with: cargo build -p warden && cargo run -p warden-docs -- generate (after bash guests/build.sh, for the MCP tools of textkit)",
        stale.join(", ")
    );
    ExitCode::FAILURE
}

fn generate(root: &Path, warden: &Path) -> Result<[String; 3], String> {
    let schema: serde_json::Value = serde_json::from_str(&warden_policy::json_schema())
        .map_err(|e| format!("the policy schema: {e}"))?;
    let tools = mcp::list_tools(warden, &root.join(MCP_POLICY))?;
    Ok([
        cli::reference(warden_cli::command()),
        policy::reference(&schema)?,
        mcp::reference(&tools, MCP_POLICY),
    ])
}

fn beside_this_program() -> PathBuf {
    let this = std::env::current_exe().unwrap_or_default();
    this.with_file_name("warden")
}
