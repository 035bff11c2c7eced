//! {{name}}: a Warden tool in Rust. Counts the lines and words of a text file in the sandbox.

use serde::Deserialize;
use warden_tool::{Error, PathContext, Tool};

#[derive(Deserialize)]
struct Count {
    path: String,
}

fn count(args: Count) -> Result<String, Error> {
    // Plain std::fs: the policy's mounts (/data, /out) are the only folders there are.
    // `.at(path)` names the path of a failure: a refusal becomes `denied`, with it.
    let bytes = std::fs::read(&args.path).at(&args.path)?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(format!("{}: {} lines, {} words", args.path, text.matches('\n').count(), text.split_whitespace().count()))
}

fn tools() -> Vec<Tool> {
    vec![Tool::new(
        "{{name}}",
        "Count the lines and words of a text file.",
        r#"{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"e.g. /data/hello.md"}}}"#,
        count,
    )]
}

warden_tool::export_tools!(tools);
