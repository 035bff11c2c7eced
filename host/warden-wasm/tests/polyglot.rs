//! The Python, JavaScript and Rust guests: the same tools and the same
//! hostile tool, built by componentize-py, componentize-js and rustc with
//! guests/rust/warden-tool, held to the same answers. Each check runs once
//! per language (`python::…`, `js::…`, `rust::…`).

mod common;

use common::*;
use warden_wasm::{CallOutcome, ComponentKind, RunConfig, ToolError};

#[derive(Clone, Copy)]
enum Lang {
    Python,
    Js,
    Rust,
}

impl Lang {
    fn guest(self, name: &str) -> String {
        let suffix = match self {
            Lang::Python => "py",
            Lang::Js => "js",
            Lang::Rust => "rs",
        };
        format!("{name}_{suffix}.wasm")
    }
}

/// Each listed check, as one test per language.
macro_rules! per_language {
    ($($check:ident),* $(,)?) => {
        mod python { $( #[test] fn $check() { super::$check(super::Lang::Python) } )* }
        mod js { $( #[test] fn $check() { super::$check(super::Lang::Js) } )* }
        mod rust { $( #[test] fn $check() { super::$check(super::Lang::Rust) } )* }
    };
}

per_language!(
    describe_lists_search_and_summarize,
    search_reads_through_the_sandbox_in_name_order,
    summarize_writes_its_result_file,
    summarize_into_a_read_only_mount_is_denied_and_writes_nothing,
    a_path_under_no_mount_is_denied_in_the_sandboxs_words,
    a_missing_field_is_invalid_input,
    an_unknown_tool_is_invalid_input,
    an_exception_becomes_a_failed_tool_error_not_a_trap,
    a_missing_file_is_failed_not_denied,
    escape_by_dotdot_is_refused,
    escape_by_absolute_path_is_refused,
    escape_through_proc_self_is_refused,
    escape_by_planted_symlink_is_refused,
    escape_by_hard_link_across_mounts_is_refused,
    write_to_a_read_only_mount_is_refused,
    rename_into_a_read_only_mount_is_refused,
    refused_suffix_is_refused,
    oversized_write_is_refused,
    environment_holds_only_the_policys_variables,
);

const NOTES_POLICY: &str = "version: 1
sandbox:
  paths:
    data: { root: ./data, mode: ro }
    out: { root: ./out, mode: rw, suffixes: [.md] }
";

fn notes_tree() -> Tree {
    let tree = Tree::new();
    tree.file("data/plan.md", "# Plan\nbuy milk\nQ3 results\n")
        .file("data/sub/more.md", "# Sub note\nq3 again\n")
        .file("data/.hidden/zzz.md", "no q3 match expected before sub\n")
        .folder("out");
    tree
}

fn call(lang: Lang, guest: &str, config: &RunConfig, tool: &str, input: &str) -> CallOutcome {
    let runtime = runtime();
    let loaded = load(&runtime, &lang.guest(guest));
    assert_eq!(loaded.kind, ComponentKind::Tool);
    runtime.call(&loaded, config, tool, input).unwrap_or_else(|e| panic!("the call trapped: {e}"))
}

fn notes(lang: Lang, tree: &Tree, tool: &str, input: &str) -> CallOutcome {
    call(lang, "notes", &tree.config(NOTES_POLICY), tool, input)
}

fn describe_lists_search_and_summarize(lang: Lang) {
    let runtime = runtime();
    let tools = runtime.describe(&load(&runtime, &lang.guest("notes")), &RunConfig::default()).unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["search", "summarize"]);
    for tool in &tools {
        let schema: serde_json::Value = serde_json::from_str(&tool.input_schema).unwrap();
        assert_eq!(schema["type"], "object", "{}", tool.name);
        assert!(schema["required"].as_array().is_some_and(|r| !r.is_empty()), "{}", tool.name);
    }
}

fn search_reads_through_the_sandbox_in_name_order(lang: Lang) {
    let tree = notes_tree();
    let out = notes(lang, &tree, "search", r#"{"pattern":"q3","path":"/data"}"#);
    assert_eq!(
        out.result.unwrap(),
        "/data/.hidden/zzz.md:1: no q3 match expected before sub\n/data/plan.md:3: Q3 results\n\
         /data/sub/more.md:2: q3 again\n3 matches"
    );
}

fn summarize_writes_its_result_file(lang: Lang) {
    let tree = notes_tree();
    let out = notes(lang, &tree, "summarize", r#"{"path":"/data/sub","output":"/out/summary.md"}"#);
    let expected = "# Summary of /data/sub\n\n| file | lines | words | first heading |\n|---|---|---|---|\n\
                    | /data/sub/more.md | 2 | 5 | Sub note |\n\n1 files.\n";
    assert_eq!(out.result.unwrap(), format!("wrote /out/summary.md ({} bytes, 1 files)", expected.len()));
    assert_eq!(tree.read("out/summary.md").unwrap(), expected);
    assert_eq!(out.report.logs.last().map(|l| l.message.as_str()), Some("summarized 1 files"));
}

fn summarize_into_a_read_only_mount_is_denied_and_writes_nothing(lang: Lang) {
    let tree = notes_tree();
    let out = notes(lang, &tree, "summarize", r#"{"path":"/data","output":"/data/summary.md"}"#);
    assert_denied(&out, "Cannot write to '/data/summary.md': path is read-only.\nWritable paths: /out");
    assert!(!tree.path("data/summary.md").exists());
}

fn a_path_under_no_mount_is_denied_in_the_sandboxs_words(lang: Lang) {
    let tree = notes_tree();
    let out = notes(lang, &tree, "search", r#"{"pattern":"root","path":"/etc/passwd"}"#);
    assert_denied(&out, "Cannot access '/etc/passwd': path is outside sandbox.\nReadable paths: /data, /out");
}

fn a_missing_field_is_invalid_input(lang: Lang) {
    let out = notes(lang, &notes_tree(), "search", r#"{"pattern":"q3"}"#);
    assert_eq!(out.result, Err(ToolError::InvalidInput("missing field 'path'".into())));
}

fn an_unknown_tool_is_invalid_input(lang: Lang) {
    let out = notes(lang, &notes_tree(), "delete_everything", "{}");
    let expected = "no tool named 'delete_everything'; this component offers: search, summarize";
    assert_eq!(out.result, Err(ToolError::InvalidInput(expected.into())));
}

fn an_exception_becomes_a_failed_tool_error_not_a_trap(lang: Lang) {
    // A `null` where a text belongs: Python and JavaScript raise; Rust's typed input refuses it.
    let out = notes(lang, &notes_tree(), "search", r#"{"pattern":null,"path":"/data"}"#);
    let kind = match lang {
        Lang::Python => "AttributeError: ",
        Lang::Js => "TypeError: ",
        Lang::Rust => {
            assert_eq!(out.result, Err(ToolError::InvalidInput("invalid type: null, expected a string".into())));
            // Rust's exception is a panic: caught, it is a `failed` error, and it is in the log.
            let tree = Tree::new();
            tree.folder("data").folder("out");
            let out = call(lang, "hostile/escape", &tree.config(ESCAPE_POLICY), "escape", r#"{"attempt":"panic"}"#);
            let expected = "panicked at hostile/src/lib.rs:";
            assert!(matches!(&out.result, Err(ToolError::Failed(m)) if m.starts_with(expected) && m.ends_with("index out of bounds: the len is 0 but the index is 5")), "{:?}", out.result);
            assert!(out.report.logs.iter().any(|l| l.message.starts_with("panic: panicked at hostile/src/lib.rs:")), "{:?}", out.report.logs);
            return;
        }
    };
    assert!(matches!(&out.result, Err(ToolError::Failed(m)) if m.starts_with(kind)), "{:?}", out.result);
}

fn a_missing_file_is_failed_not_denied(lang: Lang) {
    let out = notes(lang, &notes_tree(), "search", r#"{"pattern":"q3","path":"/data/nope.md"}"#);
    assert!(matches!(&out.result, Err(ToolError::Failed(m)) if m.contains("/data/nope.md")), "{:?}", out.result);
    assert!(out.report.denials.is_empty(), "{:?}", out.report.denials);
}

#[test]
fn the_rust_tools_output_and_fuel_are_the_same_on_every_deterministic_run() {
    let tree = notes_tree();
    tree.folder("out");
    let mut config = tree.config(NOTES_POLICY);
    config.limits = warden_wasm::RunLimits::resolve(Default::default(), true);
    // A search, then what the tool reads of the clock and of randomness.
    let run = |config: &RunConfig| {
        let search = call(Lang::Rust, "notes", config, "search", r#"{"pattern":"q3","path":"/data"}"#);
        let entropy = call(Lang::Rust, "hostile/escape", config, "escape", r#"{"attempt":"clock_and_random"}"#);
        (search.result, search.report.fuel_consumed, entropy.result.unwrap(), entropy.report.fuel_consumed)
    };
    config.deterministic = Some(7);
    let runs: Vec<_> = (0..4).map(|_| run(&config)).collect();
    assert!(runs[0].0.as_ref().is_ok_and(|r| r.ends_with("3 matches")), "{:?}", runs[0]);
    assert!(runs[0].1 > 0 && runs[0].3 > 0);
    assert!(runs.iter().all(|r| *r == runs[0]), "{runs:?}");
    // The control: without it the clock and the seed differ from run to run.
    config.deterministic = None;
    let (free, again) = (run(&config).2, run(&config).2);
    assert_ne!(free, again);
    assert_ne!(free, runs[0].2);
}

fn assert_denied(out: &CallOutcome, expected: &str) {
    assert_eq!(out.result, Err(ToolError::Denied(expected.into())));
}

// The hostile tool: /data read-only, /out read-write for `.md` files of at
// most 1 MiB, a secret beside the mounts.

const ESCAPE_POLICY: &str = "version: 1
sandbox:
  paths:
    data: { root: ./data, mode: ro }
    out: { root: ./out, mode: rw, suffixes: [.md], max_file_bytes: 1048576 }
  env: { GREETING: hello }
";

/// Runs one attempt; checks that it was refused in `expected` words, and
/// that the host's files are as they were, plus `left_in_out`.
fn attempt(lang: Lang, what: &str, expected: &str, left_in_out: &[&str]) {
    let tree = Tree::new();
    tree.file("secret.txt", SECRET).file("data/a.md", "# A\n").folder("out");
    let out = call(lang, "hostile/escape", &tree.config(ESCAPE_POLICY), "escape", &format!(r#"{{"attempt":"{what}"}}"#));
    assert_denied(&out, expected);
    assert_eq!(tree.read("secret.txt").unwrap(), SECRET);
    assert_eq!(names_in(&tree, "data"), ["a.md"]);
    assert_eq!(names_in(&tree, "out"), left_in_out);
}

fn names_in(tree: &Tree, folder: &str) -> Vec<String> {
    let mut names: Vec<_> =
        std::fs::read_dir(tree.path(folder)).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    names
}

const OUTSIDE: &str = "path is outside sandbox.\nReadable paths: /data, /out";

fn escape_by_dotdot_is_refused(lang: Lang) {
    attempt(lang, "dotdot", &format!("Cannot access '/secret.txt': {OUTSIDE}"), &[]);
}

fn escape_by_absolute_path_is_refused(lang: Lang) {
    attempt(lang, "absolute", &format!("Cannot access '/etc/passwd': {OUTSIDE}"), &[]);
}

fn escape_through_proc_self_is_refused(lang: Lang) {
    attempt(lang, "proc", &format!("Cannot access '/proc/self/environ': {OUTSIDE}"), &[]);
}

fn escape_by_planted_symlink_is_refused(lang: Lang) {
    // The guest may plant the link (it is a name in its own folder); following it is refused.
    attempt(lang, "symlink_out", "Cannot access '/out/link.md': suffix '.txt' not allowed.\nAllowed suffixes: .md", &["link.md"]);
}

fn escape_by_hard_link_across_mounts_is_refused(lang: Lang) {
    attempt(lang, "hardlink_out", &format!("Cannot access '/out/linked.md': {OUTSIDE}"), &[]);
}

fn write_to_a_read_only_mount_is_refused(lang: Lang) {
    attempt(lang, "write_ro", "Cannot write to '/data/planted.md': path is read-only.\nWritable paths: /out", &[]);
}

fn rename_into_a_read_only_mount_is_refused(lang: Lang) {
    attempt(lang, "rename_into_ro", "Cannot write to '/data/moved.md': path is read-only.\nWritable paths: /out", &["moved.md"]);
}

fn refused_suffix_is_refused(lang: Lang) {
    attempt(lang, "suffix", "Cannot access '/out/run.sh': suffix '.sh' not allowed.\nAllowed suffixes: .md", &[]);
}

fn oversized_write_is_refused(lang: Lang) {
    // Python writes in 64 KiB stream chunks up to the limit, Rust (through the
    // preview1 adapter) in 4 KiB ones; JavaScript asks for all 2 MiB at once.
    let size = match lang {
        Lang::Python => 1_114_112,
        Lang::Js => 2_097_152,
        Lang::Rust => 1_052_672,
    };
    let expected = format!("Cannot write to '/out/big.md': content too large ({size} bytes).\nMaximum allowed: 1048576 bytes");
    attempt(lang, "oversize", &expected, &["big.md"]);
}

fn environment_holds_only_the_policys_variables(lang: Lang) {
    let tree = Tree::new();
    tree.folder("data").folder("out");
    let out = call(lang, "hostile/escape", &tree.config(ESCAPE_POLICY), "escape", r#"{"attempt":"environment"}"#);
    let got: serde_json::Value = serde_json::from_str(&out.result.unwrap()).unwrap();
    assert_eq!(got, serde_json::json!({"escaped": "environment", "got": {"GREETING": "hello"}}));
}

#[test]
fn the_rust_support_crate_classes_every_refusal_as_denied_with_its_path() {
    // The host rewords a `failed` that follows a refusal, so the escape tests
    // above would pass with the crate's errno mapping wrong; here the tool
    // gives its own class as output, which the host passes on untouched.
    let expected = [
        ("dotdot", "/data/../secret.txt"),
        ("absolute", "/etc/passwd"),
        ("proc", "/proc/self/environ"),
        ("symlink_out", "/out/link.md"),
        ("hardlink_out", "/out/linked.md"),
        ("write_ro", "/data/planted.md"),
        ("rename_into_ro", "/data/moved.md"),
        ("suffix", "/out/run.sh"),
        ("oversize", "/out/big.md"),
    ];
    for (what, path) in expected {
        let tree = Tree::new();
        tree.file("secret.txt", SECRET).file("data/a.md", "# A\n").folder("out");
        let input = format!(r#"{{"attempt":"{what}","report":true}}"#);
        let out = call(Lang::Rust, "hostile/escape", &tree.config(ESCAPE_POLICY), "escape", &input);
        let got: serde_json::Value = serde_json::from_str(&out.result.unwrap()).unwrap();
        assert_eq!(got, serde_json::json!({ "class": "denied", "said": path }), "{what}");
        assert_eq!(tree.read("secret.txt").unwrap(), SECRET);
    }
}
