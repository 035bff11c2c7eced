//! The C tool component guests/c/textkit: grep, count and report through the sandbox.

mod common;

use common::*;
use warden_wasm::{CallOutcome, ComponentKind, RunConfig, ToolError};

const POLICY: &str = "version: 1
sandbox:
  paths:
    notes: { root: ./notes, mode: rw, suffixes: [.md] }
    archive: { root: ./archive, mode: ro }
workers:
  reader: { allow_read: [/notes/2025], readonly: true }
";

fn tree() -> Tree {
    let tree = Tree::new();
    tree.file("notes/todo.md", "buy milk\ncall Bob about the risk memo\n")
        .file("notes/2025/risk.md", "Risk: rates\nno risk here? RISK everywhere\n")
        .file("notes/.env", "TOKEN=risk\n")
        .file("archive/old.txt", "an old risk\n");
    tree
}

fn call(config: &RunConfig, tool: &str, input: &str) -> CallOutcome {
    let runtime = runtime();
    let loaded = load(&runtime, "textkit.wasm");
    assert_eq!(loaded.kind, ComponentKind::Tool);
    runtime.call(&loaded, config, tool, input).unwrap()
}

#[test]
fn describe_lists_three_tools_with_schemas() {
    let runtime = runtime();
    let tools = runtime.describe(&load(&runtime, "textkit.wasm"), &RunConfig::default()).unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["grep", "count", "report"]);
    for tool in &tools {
        let schema: serde_json::Value = serde_json::from_str(&tool.input_schema).unwrap();
        assert_eq!(schema["type"], "object", "{}", tool.name);
    }
}

#[test]
fn grep_searches_below_a_folder_in_sorted_order_and_skips_hidden_suffixes() {
    let tree = tree();
    let out = call(&tree.config(POLICY), "grep", r#"{"pattern":"risk","path":"/notes","ignore_case":true}"#);
    assert_eq!(
        out.result.unwrap(),
        "/notes/2025/risk.md:1: Risk: rates\n/notes/2025/risk.md:2: no risk here? RISK everywhere\n\
         /notes/todo.md:2: call Bob about the risk memo\n3 matches\n"
    );
}

#[test]
fn count_reports_lines_words_bytes() {
    let tree = tree();
    let out = call(&tree.config(POLICY), "count", r#"{"path":"/archive/old.txt"}"#);
    assert_eq!(out.result.unwrap(), r#"{"path":"/archive/old.txt","lines":1,"words":3,"bytes":12}"#);
}

#[test]
fn count_of_a_hidden_suffix_is_denied_in_the_sandboxs_words() {
    let tree = tree();
    let out = call(&tree.config(POLICY), "count", r#"{"path":"/notes/.env"}"#);
    assert!(matches!(out.result, Err(ToolError::Denied(_))), "{:?}", out.result);
    assert_eq!(
        out.report.denials.last().unwrap().to_string(),
        "Cannot access '/notes/.env': suffix '(none)' not allowed.\nAllowed suffixes: .md"
    );
}

#[test]
fn report_writes_its_file_into_a_writable_mount() {
    let tree = tree();
    let out = call(&tree.config(POLICY), "report", r#"{"source":"/notes","output":"/notes/report.md"}"#);
    assert_eq!(out.result.unwrap(), "wrote /notes/report.md (179 bytes, 2 files)");
    let report = tree.read("notes/report.md").unwrap();
    assert!(report.starts_with("# Report on /notes\n"), "{report}");
    assert!(report.contains("| /notes/todo.md | 2 | 8 | 38 |"), "{report}");
}

#[test]
fn report_into_a_read_only_mount_is_denied_and_writes_nothing() {
    let tree = tree();
    let out = call(&tree.config(POLICY), "report", r#"{"source":"/notes","output":"/archive/report.md"}"#);
    assert!(matches!(out.result, Err(ToolError::Denied(_))), "{:?}", out.result);
    assert_eq!(
        out.report.denials.last().unwrap().to_string(),
        "Cannot write to '/archive/report.md': path is read-only.\nWritable paths: /notes"
    );
    assert!(!tree.path("archive/report.md").exists());
}

#[test]
fn a_worker_sees_only_its_derived_folder() {
    let tree = tree();
    let config = tree.config_for(POLICY, Some("reader"));
    let guest_paths: Vec<_> = config.preopens.iter().map(|p| p.guest_path.as_str()).collect();
    assert_eq!(guest_paths, ["/notes/2025"]);
    let out = call(&config, "grep", r#"{"pattern":"milk","path":"/notes/todo.md"}"#);
    let outside = "Cannot access '/notes/todo.md': path is outside sandbox.\nReadable paths: /notes/2025";
    assert!(matches!(out.result, Err(ToolError::Denied(ref m)) if m == outside), "{:?}", out.result);
    let out = call(&config, "count", r#"{"path":"/notes/2025/risk.md"}"#);
    assert!(out.result.is_ok(), "{:?}", out.result);
    let out = call(&config, "report", r#"{"source":"/notes/2025","output":"/notes/2025/r.md"}"#);
    assert!(matches!(out.result, Err(ToolError::Denied(_))), "{:?}", out.result);
}

#[test]
fn bad_input_is_invalid_input_not_a_trap() {
    let out = call(&RunConfig::default(), "grep", r#"{"path":"/x"}"#);
    assert!(
        matches!(&out.result, Err(ToolError::InvalidInput(m)) if m == "give a non-empty \"pattern\" and a \"path\""),
        "{:?}",
        out.result
    );
}

#[test]
fn json_escapes_in_the_input_reach_the_tool_decoded() {
    let tree = tree();
    tree.file("notes/café.md", "un café noir\n😀 smile\n");
    let config = tree.config(POLICY);
    // \u00e9 (é), a surrogate pair (😀), and the path itself escaped.
    let out = call(&config, "grep", r#"{"pattern":"caf\u00e9","path":"/notes/caf\u00e9.md"}"#);
    assert_eq!(out.result.unwrap(), "/notes/café.md:1: un café noir\n1 match\n");
    let out = call(&config, "grep", r#"{"pattern":"\ud83d\ude00","path":"/notes/café.md"}"#);
    assert_eq!(out.result.unwrap(), "/notes/café.md:2: 😀 smile\n1 match\n");
}

#[test]
fn a_nul_escape_is_invalid_input_not_a_shorter_path() {
    // In C, "/notes/todo.md\u0000.txt" would end at the NUL and name another file.
    let out = call(&tree().config(POLICY), "grep", r#"{"pattern":"milk","path":"/notes/todo.md\u0000.txt"}"#);
    assert_eq!(out.result, Err(ToolError::InvalidInput("give a non-empty \"pattern\" and a \"path\"".into())));
}
