//! Approvals at the command line: a person at a real (pseudo-)terminal, answers
//! given in advance, the audit log and `warden suggest`.

use std::process::Command;

use serde_json::Value;

use super::pty::Terminal;
use super::{repo, warden, Fixture};

const POLICY: &str = "\
version: 1
sandbox:
  paths:
    data: { root: ./data, mode: rw, suffixes: [.md], write_approval: true }
    out:  { root: ./out, mode: rw }
  dynamic: { within: [./extra] }
  audit: ./audit.jsonl
";

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.file("policy.yaml", POLICY);
    f.file("data/a.md", "hello");
    f.file("out/.keep", "");
    f.file("extra/reports/q3.md", "q3 figures");
    f
}

/// The tree's canonical host path of `rel`: the virtual path of a dynamic grant.
fn host(f: &Fixture, rel: &str) -> String {
    f.dir.path().canonicalize().unwrap().join(rel).display().to_string()
}

fn audit(f: &Fixture) -> Vec<Value> {
    let text = std::fs::read_to_string(f.path("audit.jsonl")).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `warden fs ARGS` on the fixture's policy.
fn warden_fs(f: &Fixture, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_warden"));
    command.arg("fs").arg("--policy").arg(f.path("policy.yaml")).args(args);
    command
}

/// `warden fs ARGS` on a terminal.
fn at_terminal(f: &Fixture, args: &[&str]) -> Terminal {
    Terminal::spawn(warden_fs(f, args))
}

fn fields(record: &Value, names: &[&str]) -> Vec<Value> {
    names.iter().map(|n| record[n].clone()).collect()
}

#[test]
fn a_person_allows_once_at_the_terminal() {
    let f = fixture();
    let mut t = at_terminal(&f, &["edit", "/data/a.md", "--old", "hello", "--new", "bye"]);
    t.expect("warden: warden fs edit asks to write /data/a.md");
    t.expect("grant write access to /data (host ");
    t.press("o");
    let (status, screen) = t.finish();
    assert!(screen.contains("allowed once\n"), "{screen}");
    assert_eq!(status, 0, "{screen}");
    assert_eq!(std::fs::read_to_string(f.path("data/a.md")).unwrap(), "bye");
    let log = audit(&f);
    assert_eq!(log.len(), 1);
    assert_eq!(
        fields(&log[0], &["operation", "path", "reason", "grant", "scope", "decision", "tool"]),
        ["write", "/data/a.md", "write_approval", "/data", "once", "allow", "warden fs edit"].map(Value::from)
    );
    assert_eq!(log[0]["host_path"], host(&f, "data/a.md"));
}

#[test]
fn a_person_widens_a_grant_and_allows_it_for_the_session() {
    let f = fixture();
    let file = host(&f, "extra/reports/q3.md");
    let mut t = at_terminal(&f, &["read", &file]);
    t.expect(&format!("grant read access to {}", host(&f, "extra/reports")));
    t.expect("[w] widen");
    t.press("w");
    t.expect(&format!("grant read access to {} (host", host(&f, "extra")));
    t.press("s");
    let (status, screen) = t.finish();
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("allowed for this session\nq3 figures"), "{screen}");
    let log = audit(&f);
    assert_eq!(
        fields(&log[0], &["operation", "reason", "grant", "grant_host", "scope", "decision"]),
        [Value::from("read"), "dynamic".into(), host(&f, "extra").into(), host(&f, "extra").into(), "session".into(), "allow".into()]
    );
}

#[test]
fn a_person_denies_and_the_model_is_told_the_user_declined() {
    let f = fixture();
    let mut t = at_terminal(&f, &["edit", "/data/a.md", "--old", "hello", "--new", "bye"]);
    t.expect("[d] deny");
    t.press("d");
    let (status, screen) = t.finish();
    assert_eq!(status, 3, "{screen}");
    assert!(screen.contains("denied\nCannot write to '/data/a.md': the user declined access.\nWritable paths: /out"), "{screen}");
    assert_eq!(std::fs::read_to_string(f.path("data/a.md")).unwrap(), "hello");
    assert_eq!(fields(&audit(&f)[0], &["decision", "grant", "scope"]), [Value::from("deny"), Value::Null, Value::Null]);
}

#[test]
fn any_other_key_asks_again_and_end_of_input_denies() {
    let f = fixture();
    let mut t = at_terminal(&f, &["edit", "/data/a.md", "--old", "hello", "--new", "bye"]);
    t.expect("[d] deny");
    t.press("x");
    t.press("\x04");
    let (status, screen) = t.finish();
    assert_eq!(status, 3, "{screen}");
    assert_eq!(screen.matches("[o] allow once").count(), 2, "{screen}");
    assert_eq!(std::fs::read_to_string(f.path("data/a.md")).unwrap(), "hello");
}

#[test]
fn a_key_typed_before_the_question_is_shown_never_answers_it() {
    let f = fixture();
    let edit = warden_fs(&f, &["edit", "/data/a.md", "--old", "hello", "--new", "bye"]);
    let mut t = Terminal::spawn_after_typing(edit, "s");
    t.expect("[d] deny");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!t.screen().contains("allowed"), "{}", t.screen());
    t.press("d");
    let (status, screen) = t.finish();
    assert_eq!(status, 3, "{screen}");
    assert_eq!(screen.matches("[o] allow once").count(), 1, "{screen}");
    assert_eq!(std::fs::read_to_string(f.path("data/a.md")).unwrap(), "hello");
}

#[test]
fn without_a_terminal_nobody_is_asked_and_nothing_is_granted() {
    let f = fixture();
    let policy = f.path("policy.yaml");
    let r = warden(&["fs", "--policy", policy.to_str().unwrap(), "write", "/data/a.md"], "bye");
    assert_eq!(r.status, 3);
    assert_eq!(r.stderr, "Cannot write to '/data/a.md': access needs the user's approval, which may be requested.\nWritable paths: /out\n");
    assert_eq!(std::fs::read_to_string(f.path("data/a.md")).unwrap(), "hello");
    assert_eq!(audit(&f)[0]["decision"], "unanswered");
}

#[test]
fn answers_given_in_advance_grant_only_what_they_name() {
    let f = fixture();
    let policy = f.path("policy.yaml");
    let p = policy.to_str().unwrap();
    let extra = host(&f, "extra");
    let r = warden(&["fs", "--policy", p, "--approve", &format!("read:{extra}"), "read", &host(&f, "extra/reports/q3.md")], "");
    assert_eq!((r.status, r.stdout.as_str()), (0, "q3 figures"));
    // A read answer does not cover a write: the write is denied and the folder untouched.
    let target = host(&f, "extra/new.md");
    let r = warden(&["fs", "--policy", p, "--approve", &format!("read:{extra}"), "write", &target], "x");
    assert_eq!((r.status, r.stderr.lines().next().unwrap()), (3, format!("Cannot write to '{target}': the user declined access.").as_str()));
    assert!(!f.path("extra/new.md").exists());
    let answers = f.path("answers.txt");
    std::fs::write(&answers, format!("# for the test\nwrite-once:{extra}\n")).unwrap();
    let r = warden(&["fs", "--policy", p, "--answers", answers.to_str().unwrap(), "write", &target], "x");
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(f.path("extra/new.md")).unwrap(), "x");
}

#[test]
fn a_bad_answer_is_a_usage_error() {
    let f = fixture();
    let policy = f.path("policy.yaml");
    let r = warden(&["fs", "--policy", policy.to_str().unwrap(), "--approve", "grant:/data", "read", "/data/a.md"], "");
    assert_eq!(r.status, 2);
    assert_eq!(r.stderr, "--approve: 'grant:/data' is not an answer; write VERB:PATH, VERB one of read, write, read-once, write-once, deny, or exec:COMMAND, exec-once:COMMAND, deny-exec:COMMAND\n");
}

#[test]
fn suggest_turns_session_grants_into_a_policy_snippet() {
    let f = fixture();
    let p = f.path("policy.yaml");
    let (p, extra) = (p.to_str().unwrap(), host(&f, "extra"));
    let answers = ["--approve", "write:/data", "--approve", &format!("write:{extra}")];
    let mut args = vec!["fs", "--policy", p];
    args.extend(answers);
    args.extend(["write", "/data/b.md"]);
    assert_eq!(warden(&args, "b").status, 0);
    let session = audit(&f)[0]["session"].as_str().unwrap().to_owned();
    let r = warden(&["suggest", "--audit", f.path("audit.jsonl").to_str().unwrap()], "");
    assert_eq!(
        r.stdout,
        format!(
            "# Grants of session {session}, made permanent. Review before adding to a policy.\n\
             # Inside mounts with approval rules:\n\
             #   /data: write was granted; drop `write_approval` from its mount to keep it\n\
             # No folders outside the mounts were granted for the session.\n"
        )
    );
    let q4 = format!("{extra}/reports/q4.md");
    let mut args = vec!["fs", "--policy", p];
    args.extend(answers);
    args.extend(["write", &q4]);
    let r = warden(&args, "q4");
    assert_eq!(r.status, 0, "{}", r.stderr);
    let r = warden(&["suggest", "--audit", f.path("audit.jsonl").to_str().unwrap()], "");
    let snippet = r.stdout.split_once("sandbox:\n").map(|(_, s)| format!("sandbox:\n{s}")).unwrap();
    assert_eq!(snippet, format!("sandbox:\n  paths:\n    extra: {{ root: \"{extra}\", mode: rw }}\n"));
    // The snippet is a valid policy.
    f.file("suggested.yaml", &format!("version: 1\n{snippet}"));
    assert_eq!(warden(&["check", f.path("suggested.yaml").to_str().unwrap()], "").status, 0);
    // A later run that was only refused is logged, and is not the session suggested by default.
    assert_eq!(warden(&["fs", "--policy", p, "read", "/etc/passwd"], "").status, 3);
    assert_eq!(audit(&f).last().unwrap()["decision"], "refused");
    let again = warden(&["suggest", "--audit", f.path("audit.jsonl").to_str().unwrap()], "");
    assert_eq!(again.stdout, r.stdout);
}

#[test]
fn a_component_call_runs_again_with_the_granted_folder_among_its_preopens() {
    let f = fixture();
    let textkit = repo().join("guests/out/textkit.wasm");
    let cache = repo().join("target/test-cwasm");
    let file = host(&f, "extra/reports/q3.md");
    let input = format!("{{\"path\":\"{file}\"}}");
    let policy = f.path("policy.yaml");
    let base = ["call", "--cache-dir", cache.to_str().unwrap(), "--policy", policy.to_str().unwrap()];
    let mut args: Vec<&str> = base.to_vec();
    args.extend([textkit.to_str().unwrap(), "count", "--input", &input]);
    let r = warden(&args, "");
    assert_eq!(r.status, 3);
    assert_eq!(r.stderr, format!("Cannot read '{file}': access needs the user's approval, which may be requested.\nReadable paths: /data, /out\n"));
    let approve = format!("read:{}", host(&f, "extra/reports"));
    let mut args: Vec<&str> = base.to_vec();
    args.extend(["--approve", &approve, textkit.to_str().unwrap(), "count", "--input", &input]);
    let r = warden(&args, "");
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stdout.contains("\"words\":2"), "{}", r.stdout);
    let log = audit(&f);
    assert_eq!(fields(&log[1], &["decision", "scope", "tool"]), ["allow", "session", "textkit.wasm count"].map(Value::from));
}

#[test]
fn check_shows_the_dynamic_ceiling_and_the_audit_log() {
    let f = fixture();
    let r = warden(&["check", f.path("policy.yaml").to_str().unwrap()], "");
    assert_eq!(r.status, 0);
    assert!(r.stdout.contains(&format!("\naudit: {}/audit.jsonl\n", f.dir.path().display())), "{}", r.stdout);
    assert!(r.stdout.ends_with(&format!("  dynamic: folders within {}\n", host(&f, "extra"))), "{}", r.stdout);
}
