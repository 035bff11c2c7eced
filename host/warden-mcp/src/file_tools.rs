//! The file tools, with the names, arguments and result shapes of
//! pydantic-ai-filesystem-sandbox 0.9's toolset, over Warden's capability
//! filesystem (so that agents switching to Warden keep their prompts).

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use warden_fs::{EntryKind, ReadOptions, Sandbox};

/// The reference toolset's default window of a read.
const DEFAULT_MAX_READ_CHARS: usize = 20_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileTool {
    Read,
    Write,
    Edit,
    List,
    Delete,
    Move,
    Copy,
}

impl FileTool {
    pub const ALL: [FileTool; 7] =
        [FileTool::Read, FileTool::Write, FileTool::Edit, FileTool::List, FileTool::Delete, FileTool::Move, FileTool::Copy];

    pub fn name(self) -> &'static str {
        match self {
            FileTool::Read => "read_file",
            FileTool::Write => "write_file",
            FileTool::Edit => "edit_file",
            FileTool::List => "list_files",
            FileTool::Delete => "delete_file",
            FileTool::Move => "move_file",
            FileTool::Copy => "copy_file",
        }
    }

    pub fn from_name(name: &str) -> Option<FileTool> {
        FileTool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// One file, read or written whole: no walk of a tree, no copy from one
    /// file to another.
    pub fn is_short(self) -> bool {
        matches!(self, FileTool::Read | FileTool::Write | FileTool::Edit | FileTool::Delete)
    }

    /// The tool as `tools/list` shows it.
    pub fn definition(self) -> Tool {
        let (description, input, output): (&str, Arc<JsonObject>, Arc<JsonObject>) = match self {
            FileTool::Read => (
                "Read a text file from the sandbox. Path format: '/mount/path' (e.g., '/docs/file.txt'). \
                 Do not use this on binary files (PDFs, images, etc) - pass them as attachments instead.",
                schema_for_type::<ReadFileArgs>(),
                schema_for_output::<ReadResult>(),
            ),
            FileTool::Write => (
                "Write a text file to the sandbox. Parent directories are created automatically. \
                 Path format: '/mount/path' (e.g., '/output/file.txt').",
                schema_for_type::<WriteFileArgs>(),
                schema_for_output::<Message>(),
            ),
            FileTool::Edit => (
                "Edit a file by replacing exact text. The old_text must match exactly and appear only once. \
                 Path format: '/mount/path' (e.g., '/output/file.txt').",
                schema_for_type::<EditFileArgs>(),
                schema_for_output::<Message>(),
            ),
            FileTool::List => (
                "List files in the sandbox matching a glob pattern. Path format: '/mount' or '/mount/subdir'. \
                 Use '/' to list all mounts.",
                schema_for_type::<ListFilesArgs>(),
                schema_for_output::<FileList>(),
            ),
            FileTool::Delete => (
                "Delete a file from the sandbox. Path format: '/mount/path' (e.g., '/output/file.txt').",
                schema_for_type::<PathArgs>(),
                schema_for_output::<Message>(),
            ),
            FileTool::Move => (
                "Move or rename a file within the sandbox. Parent directories of destination are created \
                 automatically. Path format: '/mount/path' (e.g., '/output/file.txt').",
                schema_for_type::<MoveFileArgs>(),
                schema_for_output::<Message>(),
            ),
            FileTool::Copy => (
                "Copy a file within the sandbox. Parent directories of destination are created automatically. \
                 Path format: '/mount/path' (e.g., '/output/file.txt').",
                schema_for_type::<CopyFileArgs>(),
                schema_for_output::<Message>(),
            ),
        };
        Tool::new(self.name(), description, input).with_raw_output_schema(output).with_annotations(self.annotations())
    }

    /// What the tool does to the sandbox: nothing outside it (`open_world: false`).
    fn annotations(self) -> ToolAnnotations {
        let (read_only, destructive, idempotent) = match self {
            FileTool::Read | FileTool::List => (true, false, true),
            // Replaces an existing file's content.
            FileTool::Write => (false, true, true),
            FileTool::Edit => (false, true, false),
            FileTool::Delete => (false, true, true),
            FileTool::Move => (false, true, false),
            // Refuses an existing destination.
            FileTool::Copy => (false, false, true),
        };
        ToolAnnotations::new().read_only(read_only).destructive(destructive).idempotent(idempotent).open_world(false)
    }

    /// Does the operation on `sandbox`; the outcome is the structured result.
    pub fn run(self, sandbox: &Sandbox, args: &FileArgs) -> warden_fs::Result<Value> {
        let message = |text: String| Ok(json(&Message { result: text }));
        match args {
            FileArgs::Read(a) => {
                let read = sandbox.read(&a.path, ReadOptions { offset: a.offset, max_chars: Some(a.max_chars) })?;
                let chars_read = read.text.chars().count();
                Ok(json(&ReadResult {
                    truncated: read.is_truncated(),
                    total_chars: read.total_chars,
                    offset: a.offset,
                    chars_read,
                    content: read.text,
                }))
            }
            FileArgs::Write(a) => {
                sandbox.write(&a.path, a.content.as_bytes())?;
                message(format!("Written {} characters to {}", a.content.chars().count(), a.path))
            }
            FileArgs::Edit(a) => {
                sandbox.edit(&a.path, &a.old_text, &a.new_text)?;
                message(format!(
                    "Edited {}: replaced {} chars with {} chars",
                    a.path,
                    a.old_text.chars().count(),
                    a.new_text.chars().count()
                ))
            }
            FileArgs::List(a) => {
                let folder = (!matches!(a.path.trim(), "/" | "." | "")).then_some(a.path.as_str());
                let entries = sandbox.list_files(folder, Some(&a.pattern))?;
                let files = entries.into_iter().filter(|e| e.kind == EntryKind::File).map(|e| e.path.to_string()).collect();
                Ok(json(&FileList { result: files }))
            }
            FileArgs::Delete(a) => {
                sandbox.delete(&a.path)?;
                message(format!("Deleted {}", a.path))
            }
            FileArgs::Move(a) => {
                sandbox.move_path(&a.source, &a.destination)?;
                message(format!("Moved {} to {}", a.source, a.destination))
            }
            FileArgs::Copy(a) => {
                sandbox.copy(&a.source, &a.destination)?;
                message(format!("Copied {} to {}", a.source, a.destination))
            }
        }
    }

    /// Parses and checks a call's arguments.
    pub fn args(self, arguments: Option<JsonObject>) -> Result<FileArgs, String> {
        let name = self.name();
        Ok(match self {
            FileTool::Read => FileArgs::Read(crate::args::parse(name, arguments)?),
            FileTool::Write => FileArgs::Write(crate::args::parse(name, arguments)?),
            FileTool::Edit => FileArgs::Edit(crate::args::parse(name, arguments)?),
            FileTool::List => {
                let mut args: ListFilesArgs = crate::args::parse(name, arguments)?;
                args.pattern = checked_pattern(&args.pattern).map_err(|why| format!("Invalid arguments for {name}: pattern: {why}"))?;
                FileArgs::List(args)
            }
            FileTool::Delete => FileArgs::Delete(crate::args::parse(name, arguments)?),
            FileTool::Move => FileArgs::Move(crate::args::parse(name, arguments)?),
            FileTool::Copy => FileArgs::Copy(crate::args::parse(name, arguments)?),
        })
    }
}

/// A glob relative to the listed folder, as the reference accepts it.
fn checked_pattern(pattern: &str) -> Result<String, &'static str> {
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return Ok("**/*".to_owned());
    }
    if pattern.contains('\0') {
        return Err("must not contain NUL bytes");
    }
    if pattern.starts_with(['/', '~', '\\']) || pattern.as_bytes().get(1) == Some(&b':') {
        return Err("must be relative (not start with '/', '~' or a drive letter)");
    }
    if pattern.split(['/', '\\']).any(|part| part == "..") {
        return Err("must not contain '..'");
    }
    Ok(pattern.to_owned())
}

fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("tool results serialize")
}

/// A call's arguments, by tool.
pub enum FileArgs {
    Read(ReadFileArgs),
    Write(WriteFileArgs),
    Edit(EditFileArgs),
    List(ListFilesArgs),
    Delete(PathArgs),
    Move(MoveFileArgs),
    Copy(CopyFileArgs),
}

fn default_max_chars() -> usize {
    DEFAULT_MAX_READ_CHARS
}

fn default_list_path() -> String {
    "/".to_owned()
}

fn default_pattern() -> String {
    "**/*".to_owned()
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// Virtual path to file (e.g., '/docs/file.txt')
    path: String,
    /// Maximum characters to read (default 20,000)
    #[serde(default = "default_max_chars")]
    max_chars: usize,
    /// Character position to start reading from (default 0)
    #[serde(default)]
    offset: usize,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// Virtual path to file (e.g., '/output/file.txt')
    path: String,
    /// Content to write to the file
    content: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// Virtual path to file (e.g., '/output/file.txt')
    path: String,
    /// Exact text to find (must match exactly and be unique)
    old_text: String,
    /// Text to replace old_text with
    new_text: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// Virtual path to list (e.g., '/', '/docs', '/docs/sub'). Default: '/'
    #[serde(default = "default_list_path")]
    path: String,
    /// Glob pattern to match (default: '**/*')
    #[serde(default = "default_pattern")]
    pattern: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathArgs {
    /// Virtual path to file (e.g., '/output/file.txt')
    path: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveFileArgs {
    /// Source virtual path (e.g., '/output/old.txt')
    source: String,
    /// Destination virtual path (e.g., '/output/new.txt')
    destination: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CopyFileArgs {
    /// Source virtual path (e.g., '/input/file.txt')
    source: String,
    /// Destination virtual path (e.g., '/output/file.txt')
    destination: String,
}

/// Result of reading a file from the sandbox.
#[derive(Serialize, JsonSchema)]
pub struct ReadResult {
    /// The file content read
    content: String,
    /// True if more content exists after this chunk
    truncated: bool,
    /// Total file size in characters
    total_chars: usize,
    /// Starting character position used
    offset: usize,
    /// Number of characters actually returned
    chars_read: usize,
}

/// What an operation did.
#[derive(Serialize, JsonSchema)]
pub struct Message {
    result: String,
}

/// Matching file paths, as /mount/relative, sorted.
#[derive(Serialize, JsonSchema)]
pub struct FileList {
    result: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_must_stay_below_the_listed_folder() {
        assert_eq!(checked_pattern(" "), Ok("**/*".to_owned()));
        assert_eq!(checked_pattern("*.md"), Ok("*.md".to_owned()));
        assert!(checked_pattern("/etc/*").is_err());
        assert!(checked_pattern("~/x").is_err());
        assert!(checked_pattern("a/../../b").is_err());
        assert!(checked_pattern("C:/x").is_err());
        assert!(checked_pattern("a\0b").is_err());
    }

    #[test]
    fn every_tool_has_an_object_output_schema_and_honest_hints() {
        for tool in FileTool::ALL {
            let def = tool.definition();
            assert_eq!(def.output_schema.as_ref().unwrap()["type"], "object", "{}", tool.name());
            let hints = def.annotations.unwrap();
            assert_eq!(hints.open_world_hint, Some(false));
            assert_eq!(hints.read_only_hint == Some(true), matches!(tool, FileTool::Read | FileTool::List));
        }
    }
}
