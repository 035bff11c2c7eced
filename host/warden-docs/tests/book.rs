//! The guide and the README, checked as a reader meets them: the book builds
//! without a warning, every link and anchor resolves, the reference pages are
//! what the code generates now, figures name their benchmark, and every example
//! marked runnable runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use warden_docs::{blocks, figures, links, markdown_files, repo_root};

fn warden() -> PathBuf {
    let warden = Path::new(env!("CARGO_BIN_EXE_warden-docs")).with_file_name("warden");
    assert!(
        warden.exists(),
        "{} is missing: build it first (cargo build -p warden)",
        warden.display()
    );
    warden
}

fn shown(path: &Path) -> String {
    path.strip_prefix(repo_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn the_reference_pages_are_what_the_code_generates_now() {
    let done = Command::new(env!("CARGO_BIN_EXE_warden-docs"))
        .arg("check")
        .arg("--warden")
        .arg(warden())
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
}

#[test]
fn the_book_builds_without_a_warning_and_every_link_resolves() {
    let root = repo_root();
    let mdbook = root.join(".tools/cargo/bin/mdbook");
    assert!(
        mdbook.exists(),
        "{} is missing: bash docs/build.sh installs it",
        mdbook.display()
    );
    let version = Command::new(&mdbook).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        "mdbook v0.5.4\n",
        "the mdbook docs/build.sh pins"
    );
    let site = tempfile::tempdir().unwrap();
    let mut build = Command::new(&mdbook);
    // mdbook reads settings (its log filter, book.toml's keys) from MDBOOK_*
    // variables: none may turn a warning off or the book's settings round.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("MDBOOK") {
            build.env_remove(name);
        }
    }
    let done = build
        .arg("build")
        .arg(root.join("docs"))
        .arg("--dest-dir")
        .arg(site.path())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&done.stdout),
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(done.status.success(), "mdbook build failed:\n{said}");
    let complaints: Vec<&str> = said
        .lines()
        .filter(|line| line.contains("WARN") || line.contains("ERROR"))
        .collect();
    assert!(
        complaints.is_empty(),
        "mdbook build warned:\n{}",
        complaints.join("\n")
    );
    assert!(
        site.path().join("shell/landlock.html").exists(),
        "the book has no page for shell/landlock.md"
    );

    let book = links::Site::load(site.path());
    // An include mdbook could not resolve is left in the page as written.
    let unincluded = book.pages_containing("{{#");
    assert!(
        unincluded.is_empty(),
        "pages with an unresolved {{{{#...}}}}: {unincluded:?}"
    );

    let mut broken = book.broken();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    broken.extend(book.broken_in_readme(&readme, &root));
    for file in markdown_files(&root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines = links::reference_style(&text);
        broken.extend(lines.into_iter().map(|line| {
            format!(
                "{}:{line}: a reference-style link (write it inline)",
                shown(&file)
            )
        }));
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_figure_links_to_the_benchmark_that_measured_it() {
    let root = repo_root();
    let mut unsourced = Vec::new();
    for file in markdown_files(&root) {
        let relative = shown(&file);
        if relative == "docs/src/benchmarks.md" || relative.starts_with("docs/src/reference/") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        unsourced.extend(
            figures::unsourced(&text)
                .into_iter()
                .map(|(line, figure)| format!("{relative}:{line}: {figure}")),
        );
    }
    assert!(
        unsourced.is_empty(),
        "figures without a link to the benchmarks chapter:\n{}",
        unsourced.join("\n")
    );
}

#[test]
fn the_readme_is_short_and_opens_with_install_quickstart_and_mcp() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    assert!(
        lines.len() <= 150,
        "the README has {} lines; the guide in docs/ is the place for more",
        lines.len()
    );
    let first_screen = lines[..lines.len().min(60)].join("\n");
    for needed in [
        "bash policies/demo.sh",
        "cargo nextest run --workspace",
        "## Quickstart",
        " mcp --policy ",
    ] {
        assert!(
            first_screen.contains(needed),
            "the README's first 60 lines do not show {needed:?}"
        );
    }
}

/// A copy of the example tree laid out as the repository is, so that an
/// example runs as written from the repository's root without changing it.
fn scratch_checkout() -> tempfile::TempDir {
    let root = repo_root();
    let scratch = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(scratch.path().join("policies")).unwrap();
    let copied = Command::new("cp")
        .arg("-r")
        .arg(root.join("policies/example"))
        .arg(scratch.path().join("policies/example"))
        .status()
        .unwrap();
    assert!(copied.success());
    std::fs::create_dir_all(scratch.path().join("guests")).unwrap();
    std::os::unix::fs::symlink(root.join("guests/out"), scratch.path().join("guests/out")).unwrap();
    std::fs::create_dir_all(scratch.path().join("target")).unwrap();
    std::os::unix::fs::symlink(
        warden().parent().unwrap(),
        scratch.path().join("target/debug"),
    )
    .unwrap();
    scratch
}

#[test]
fn every_example_marked_runnable_runs() {
    let root = repo_root();
    let mut ran = Vec::new();
    let mut failed = Vec::new();
    for file in markdown_files(&root) {
        let text = std::fs::read_to_string(&file).unwrap();
        for block in blocks::runnable(&text) {
            let at = format!("{}:{}", shown(&file), block.line);
            let scratch = scratch_checkout();
            let done = match block.language.as_str() {
                "sh" => Command::new("bash")
                    .arg("-euo")
                    .arg("pipefail")
                    .arg("-c")
                    .arg(&block.body)
                    .current_dir(scratch.path())
                    .output(),
                "yaml" => {
                    let policy = scratch.path().join("policies/example/from-the-guide.yaml");
                    std::fs::write(&policy, &block.body).unwrap();
                    Command::new(warden()).arg("check").arg(&policy).output()
                }
                other => panic!("{at}: a runnable block must be sh or yaml, not {other:?}"),
            }
            .unwrap();
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&done.stdout),
                String::from_utf8_lossy(&done.stderr)
            );
            // A command that ran without its sandbox proves nothing about the example.
            let unsandboxed = said.contains("WITHOUT an OS sandbox");
            let missing: Vec<&str> = block
                .output
                .as_deref()
                .unwrap_or_default()
                .lines()
                .filter(|line| !line.trim().is_empty() && !said.contains(line.trim()))
                .collect();
            if !done.status.success() || unsandboxed || !missing.is_empty() {
                failed.push(format!(
                    "{at}: its output lacks {missing:?}{}",
                    if unsandboxed {
                        "; a command ran WITHOUT an OS sandbox"
                    } else {
                        ""
                    }
                ));
                failed.push(format!(
                    "{at} ({}):\n{}\n--- stdout:\n{}\n--- stderr:\n{}",
                    done.status,
                    block.body,
                    String::from_utf8_lossy(&done.stdout),
                    String::from_utf8_lossy(&done.stderr)
                ));
            }
            ran.push(at);
        }
    }
    assert!(
        failed.is_empty(),
        "runnable examples failed:\n{}",
        failed.join("\n")
    );
    assert!(
        ran.iter().any(|at| at.starts_with("README.md:")),
        "the README's quickstart is not marked runnable: {ran:?}"
    );
    let with_output = markdown_files(&root)
        .iter()
        .flat_map(|file| blocks::runnable(&std::fs::read_to_string(file).unwrap()))
        .filter(|block| block.output.is_some())
        .count();
    assert!(
        with_output >= 2,
        "only {with_output} runnable examples show their output in a `text output` block"
    );
    assert!(
        ran.len() >= 5,
        "only {} runnable examples: {ran:?}",
        ran.len()
    );
}
