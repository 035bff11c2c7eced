//! `warden run`, `call`, `tools` and `compile` as a contract: outputs, messages, exit statuses.


use super::{repo, warden, Fixture, Run};

fn guest(name: &str) -> String {
    let path = repo().join("guests/out").join(name);
    assert!(path.exists(), "{} is missing: run guests/build.sh first", path.display());
    path.to_str().unwrap().to_owned()
}

fn cache() -> String {
    repo().join("target/test-cwasm").to_str().unwrap().to_owned()
}

fn run(args: &[&str]) -> Run {
    let cache = cache();
    let mut all = vec![args[0], "--cache-dir", &cache];
    all.extend_from_slice(&args[1..]);
    warden(&all, "")
}

fn policy(f: &Fixture) -> String {
    f.path("policy.yaml").to_str().unwrap().to_owned()
}

#[test]
fn run_passes_stdio_and_arguments_through() {
    let r = run(&["run", &guest("hello.wasm"), "tool authors"]);
    assert_eq!((r.status, r.stdout.as_str(), r.stderr.as_str()), (0, "hello, tool authors!\n", ""));
}

#[test]
fn run_exits_with_the_components_own_code() {
    let f = Fixture::new();
    let r = run(&["run", "--policy", &policy(&f), &guest("wc.wasm"), "/portfolio/notes.md", "/portfolio/gone.md"]);
    assert_eq!(r.status, 1);
    assert_eq!(r.stdout, "      0       2      11 /portfolio/notes.md\n");
    assert_eq!(r.stderr, "wc: /portfolio/gone.md: No such file or directory\n");
}

#[test]
fn a_rust_command_runs_and_exits_with_its_own_code_like_the_c_one() {
    let f = Fixture::new();
    for wc in ["wc.wasm", "wc_rs.wasm"] {
        let r = run(&["run", "--policy", &policy(&f), &guest(wc), "/portfolio/notes.md", "/portfolio/gone.md"]);
        assert_eq!(r.status, 1, "{wc}");
        assert_eq!(r.stdout, "      0       2      11 /portfolio/notes.md\n", "{wc}");
        assert_eq!(r.stderr, "wc: /portfolio/gone.md: No such file or directory\n", "{wc}");
    }
}

#[test]
fn run_with_dir_flags_needs_no_policy_file() {
    let f = Fixture::new();
    let dir = format!("{}::/p:ro", f.path("portfolio").display());
    let r = run(&["run", "--dir", &dir, &guest("wc.wasm"), "/p/notes.md"]);
    assert_eq!((r.status, r.stdout.as_str()), (0, "      0       2      11 /p/notes.md\n"));
    let r = run(&["run", "--dir", "/etc::/etc", &guest("wc.wasm")]);
    assert_eq!(r.status, 2);
    assert!(r.stderr.starts_with("invalid policy: --dir: sandbox.paths.etc.root: "), "{}", r.stderr);
}

#[test]
fn a_timeout_exits_124_naming_the_limit() {
    let r = run(&["run", "--timeout", "300ms", &guest("hostile/loop.wasm")]);
    assert_eq!((r.status, r.stderr.as_str()), (124, "warden: the tool ran past its time limit of 300ms\n"));
}

#[test]
fn other_limits_exit_125_naming_the_limit() {
    let r = run(&["run", "--fuel", "1000", &guest("hostile/loop.wasm")]);
    assert_eq!((r.status, r.stderr.as_str()), (125, "warden: the tool ran out of fuel (limit: 1000)\n"));
    let r = run(&["run", "--max-memory", "16MiB", &guest("hostile/membomb.wasm")]);
    assert_eq!(
        (r.status, r.stderr.as_str()),
        (125, "warden: the tool tried to use more than the memory limit of 16777216 bytes\n")
    );
    let r = run(&["run", "--max-output", "1KiB", &guest("hostile/flood.wasm")]);
    assert_eq!(r.status, 125);
    assert!(r.stderr.ends_with("warden: the tool wrote more than the output limit of 1024 bytes to stdout\n"), "{}", r.stderr);
    assert!(r.stdout.len() <= 1024);
}

#[test]
fn a_trap_exits_125_with_its_reason() {
    let r = run(&["run", &guest("hostile/trap.wasm")]);
    assert_eq!(
        (r.status, r.stderr.as_str()),
        (125, "warden: the tool trapped: wasm trap: wasm `unreachable` instruction executed\n")
    );
}

#[test]
fn bad_limit_flags_are_usage_errors() {
    let r = run(&["run", "--timeout", "soon", &guest("hello.wasm")]);
    assert_eq!((r.status, r.stderr.as_str()), (2, "--timeout: 'soon' is not a duration; write e.g. 500ms, 10s or 2m\n"));
}

#[test]
fn call_prints_the_tools_output() {
    let f = Fixture::new();
    let r = run(&["call", "--policy", &policy(&f), &guest("textkit.wasm"), "count", "--input", r#"{"path":"/portfolio/notes.md"}"#]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "{\"path\":\"/portfolio/notes.md\",\"lines\":0,\"words\":2,\"bytes\":11}\n");
}

#[test]
fn call_reads_json_from_stdin_when_input_is_absent() {
    let f = Fixture::new();
    let cache = cache();
    let (p, g) = (policy(&f), guest("textkit.wasm"));
    let r = warden(&["call", "--cache-dir", &cache, "--policy", &p, &g, "grep"], r#"{"pattern":"q","path":"/portfolio/reports"}"#);
    assert_eq!((r.status, r.stdout.as_str()), (0, "/portfolio/reports/q3.md:1: q3\n1 match\n"));
}

#[test]
fn a_denied_call_exits_3_with_the_sandboxs_message() {
    let f = Fixture::new();
    let input = r#"{"source":"/portfolio","output":"/pipeline/report.md"}"#;
    let r = run(&["call", "--policy", &policy(&f), &guest("textkit.wasm"), "report", "--input", input]);
    assert_eq!(
        (r.status, r.stdout.as_str(), r.stderr.as_str()),
        (3, "", "Cannot write to '/pipeline/report.md': path is read-only.\nWritable paths: /portfolio\n")
    );
    assert!(!f.path("pipeline/report.md").exists());
}

#[test]
fn a_tool_error_exits_1() {
    let r = run(&["call", &guest("textkit.wasm"), "nope", "--input", "{}"]);
    assert_eq!((r.status, r.stderr.as_str()), (1, "invalid input: unknown tool; see describe\n"));
    let r = run(&["call", &guest("textkit.wasm"), "count", "--input", "{not json"]);
    assert_eq!(r.status, 2);
    assert!(r.stderr.starts_with("the input is not JSON: "), "{}", r.stderr);
}

#[test]
fn tools_prints_names_descriptions_and_schemas() {
    let r = run(&["tools", &guest("textkit.wasm")]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let tools: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(tools[1]["name"], "count");
    assert_eq!(tools[1]["description"], "Count the lines, words and bytes of a file.");
    assert_eq!(tools[1]["input_schema"]["required"][0], "path");
}

#[test]
fn a_command_is_not_a_tool_and_the_other_way_round() {
    let r = run(&["call", &guest("wc.wasm"), "count", "--input", "{}"]);
    assert_eq!(r.status, 2);
    assert_eq!(r.stderr, "warden: this component is a command (it exports `wasi:cli/run`), not a tool; use `warden run`\n");
    let r = run(&["run", &guest("textkit.wasm")]);
    assert_eq!(r.status, 2);
}

#[test]
fn compile_fills_the_cache_once() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap();
    let g = guest("wc.wasm");
    let first = warden(&["compile", "--cache-dir", dir, &g], "");
    assert_eq!(first.status, 0, "{}", first.stderr);
    assert!(first.stdout.ends_with(&format!(": Command (Compiled), cache {dir}\n")), "{}", first.stdout);
    let second = warden(&["compile", "--cache-dir", dir, &g], "");
    assert!(second.stdout.contains(": Command (Hit)"), "{}", second.stdout);
    let mut files: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files[0].ends_with(".v3.blake3") && files[1].ends_with(".v3.cwasm"), "the code and its digest: {files:?}");
}

#[test]
fn run_asks_before_the_command_starts_and_hides_what_was_not_granted() {
    let f = Fixture::new();
    f.file("policy.yaml", "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, read_approval: true }\n  audit: ./audit.jsonl\n");
    let r = run(&["run", "--policy", &policy(&f), &guest("wc.wasm"), "/portfolio/notes.md"]);
    assert_eq!((r.status, r.stderr.as_str()), (1, "wc: /portfolio/notes.md: No such file or directory\n"));
    let r = run(&["run", "--policy", &policy(&f), "--approve", "read:/portfolio", &guest("wc.wasm"), "/portfolio/notes.md"]);
    assert_eq!((r.status, r.stdout.as_str()), (0, "      0       2      11 /portfolio/notes.md\n"));
    let log = std::fs::read_to_string(f.path("audit.jsonl")).unwrap();
    let decisions: Vec<&str> = log.lines().map(|l| if l.contains("\"decision\":\"allow\"") { "allow" } else { "other" }).collect();
    assert_eq!(decisions, ["other", "allow"]);
    assert!(log.contains("\"tool\":\"wc.wasm\""), "{log}");
}

#[test]
fn only_named_environment_variables_pass() {
    let cache = cache();
    let g = guest("hostile/env.wasm");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_warden"));
    child.args(["run", "--cache-dir", &cache, "--env", "A=1", "--env", "FROM_HOST", &g]);
    child.env("FROM_HOST", "passed").env("NOT_NAMED", "secret");
    let out = child.output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "A=1\nFROM_HOST=passed\n");
}

#[test]
fn a_tool_that_crashes_after_its_refusals_still_leaves_them_in_the_audit_log() {
    let f = Fixture::new();
    f.file("policy.yaml", "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  audit: ./audit.jsonl\n");
    let r = run(&["call", "--policy", &policy(&f), &guest("hostile/stuck.wasm"), "sneak", "--input", "{}"]);
    assert_eq!(r.status, 125, "{}", r.stderr);
    assert!(r.stderr.starts_with("warden: the tool trapped: "), "{}", r.stderr);
    // 100 refusals: the first 32 one by one, then one line for the rest, written at once.
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(f.path("audit.jsonl")).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 33);
    assert_eq!(
        (lines[0]["path"].as_str(), lines[0]["reason"].as_str(), lines[0]["decision"].as_str(), lines[0]["tool"].as_str()),
        (Some("/outside-0.md"), Some("outside_sandbox"), Some("refused"), Some("stuck.wasm sneak"))
    );
    assert_eq!(lines[31]["path"], "/outside-31.md");
    assert_eq!((lines[32]["reason"].as_str(), lines[32]["refusal"].as_str()), (Some("more_refusals"), Some("68 more refusals in this run, not logged one by one")));
}
