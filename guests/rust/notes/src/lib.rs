//! notes: search a folder of notes, and write a summary of it. Rust twin of
//! guests/python/notes and guests/js/notes: the same tools, the same answers.

use serde::Deserialize;
use warden_tool::{log, Error, Level, PathContext, Tool};

const MAX_MATCHES: usize = 200;

/// The files at or under `path`, in name order; the sandbox lists in that order too.
fn files_under(path: &str) -> Result<Vec<String>, Error> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Ok(vec![path.to_owned()]);
    }
    let mut entries: Vec<_> = std::fs::read_dir(path).at(path)?.collect::<Result<_, _>>().at(path)?;
    entries.sort_by_key(|e| e.file_name());
    let mut files = Vec::new();
    for entry in entries {
        let child = format!("{}/{}", path.trim_end_matches('/'), entry.file_name().to_string_lossy());
        let kind = entry.file_type().at(&child)?;
        if kind.is_dir() {
            files.extend(files_under(&child)?);
        } else if kind.is_file() {
            files.push(child);
        }
    }
    Ok(files)
}

fn read_text(path: &str) -> Result<String, Error> {
    Ok(String::from_utf8_lossy(&std::fs::read(path).at(path)?).into_owned())
}

#[derive(Deserialize)]
struct Search {
    pattern: String,
    path: String,
}

fn search(args: Search) -> Result<String, Error> {
    let pattern = args.pattern.to_lowercase();
    if pattern.is_empty() {
        return Err(Error::InvalidInput("the pattern is empty".into()));
    }
    let (mut lines, mut found) = (Vec::new(), 0usize);
    for path in files_under(&args.path)? {
        for (index, line) in read_text(&path)?.lines().enumerate() {
            if line.to_lowercase().contains(&pattern) {
                found += 1;
                if found <= MAX_MATCHES {
                    lines.push(format!("{path}:{}: {}", index + 1, line.trim_end()));
                }
            }
        }
    }
    lines.push(format!("{found} match{}", if found == 1 { "" } else { "es" }));
    Ok(lines.join("\n"))
}

#[derive(Deserialize)]
struct Summarize {
    path: String,
    output: String,
}

fn summarize(args: Summarize) -> Result<String, Error> {
    let mut rows = Vec::new();
    for path in files_under(&args.path)? {
        let text = read_text(&path)?;
        let heading = text.lines().find(|l| l.starts_with('#')).map(|l| l.trim_start_matches(['#', ' ']).trim()).unwrap_or("");
        rows.push(format!("| {path} | {} | {} | {heading} |", text.matches('\n').count(), text.split_whitespace().count()));
    }
    let mut document = format!("# Summary of {}\n\n| file | lines | words | first heading |\n|---|---|---|---|\n", args.path);
    for row in &rows {
        document.push_str(row);
        document.push('\n');
    }
    document.push_str(&format!("\n{} files.\n", rows.len()));
    std::fs::write(&args.output, &document).at(&args.output)?;
    log(Level::Info, &format!("summarized {} files", rows.len()));
    Ok(format!("wrote {} ({} bytes, {} files)", args.output, document.len(), rows.len()))
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "search",
            "Find the lines containing a text (case-insensitive) in a file or a folder of files.",
            r#"{"type":"object","required":["pattern","path"],"properties":{"pattern":{"type":"string","minLength":1},"path":{"type":"string"}}}"#,
            search,
        ),
        Tool::new(
            "summarize",
            "Write a Markdown summary (lines, words, first heading of each file) of a folder to a file.",
            r#"{"type":"object","required":["path","output"],"properties":{"path":{"type":"string"},"output":{"type":"string"}}}"#,
            summarize,
        ),
    ]
}

warden_tool::export_tools!(tools);
