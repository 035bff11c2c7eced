//! Approvals asked through the client, where they can go wrong: a call that
//! needs two answers, answers bound to what was asked, a cancelled question,
//! a call waiting for a person, and a policy reloaded under a waiting call.

use std::time::Duration;

use serde_json::{json, Value};

use super::{accept, audit_lines, guest, ok, refused, server_log, Client, Fixture, APPROVAL_POLICY, NEW, OLD};

/// A policy whose folder `extra` (outside the mounts) may be granted by a person.
fn dynamic_policy(f: &Fixture) {
    f.file("extra/reports/q4.md", "q4");
    f.file("policy.yaml", "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  dynamic: { within: [./extra] }\n");
}

/// Calls `tool` again with the state of `asked` and `answer`; `None` sends no answer.
pub(super) fn again(c: &mut Client, tool: &str, arguments: &Value, asked: &Value, answer: Option<Value>) -> Value {
    let mut params = json!({ "name": tool, "arguments": arguments, "requestState": asked["requestState"] });
    if let Some(answer) = answer {
        params["inputResponses"] = json!({ "approval": answer });
    }
    c.request("tools/call", params)
}

pub(super) fn message(asked: &Value) -> &str {
    asked["inputRequests"]["approval"]["params"]["message"].as_str().unwrap_or_else(|| panic!("no question in {asked}"))
}

/// The decisions a form offers, by value.
pub(super) fn decisions(form: &Value) -> Vec<Value> {
    form["requestedSchema"]["properties"]["decision"]["oneOf"].as_array().unwrap().iter().map(|o| o["const"].clone()).collect()
}

#[test]
fn a_2026_call_that_needs_two_answers_carries_both_and_finishes() {
    // A write into a new folder under `dynamic:` asks to read the folder, then to write.
    let f = Fixture::new();
    dynamic_policy(&f);
    let audit = f.path("audit.jsonl");
    let (mut c, _) = Client::connect_with(&f, NEW, &["--audit", audit.to_str().unwrap()], json!({ "elicitation": { "form": {} } }));
    let extra = f.path("extra").canonicalize().unwrap();
    let target = extra.join("new/x.md");
    let arguments = json!({ "path": target, "content": "x" });
    let first = c.call("write_file", arguments.clone());
    assert!(message(&first).starts_with(&format!("write_file asks to read {} (host path ", target.display())), "{first}");
    // Over stateless HTTP no grant outlives the call: "for this session" is not offered there.
    let offered = decisions(&first["inputRequests"]["approval"]["params"]);
    let stateless = super::transport::OVER_HTTP.with(|h| h.get());
    assert_eq!(offered, if stateless { vec![json!("once"), json!("deny")] } else { vec![json!("once"), json!("session"), json!("deny")] });
    // Sent again with the state but no answer, the question is asked again and the state stays good.
    let unanswered = again(&mut c, "write_file", &arguments, &first, None);
    assert_eq!(message(&unanswered), message(&first));
    let second = again(&mut c, "write_file", &arguments, &first, Some(accept("once", extra.to_str().unwrap())));
    assert!(message(&second).starts_with(&format!("write_file asks to write {} (host path ", target.display())), "{second}");
    assert!(!target.exists());
    // Without an answer, the second round's state grants nothing of the first again: asked from the start.
    let replayed = again(&mut c, "write_file", &arguments, &second, None);
    assert_eq!(message(&replayed), message(&first));
    // The second round carries the first answer: once-grants of the first round are not lost.
    let done = again(&mut c, "write_file", &arguments, &second, Some(accept("once", extra.to_str().unwrap())));
    assert_eq!(ok(&done)["result"], format!("Written 1 characters to {}", target.display()));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x");
    // Each answer logged once, in its round.
    let rows: Vec<(String, String)> =
        audit_lines(&f).iter().map(|l| (l["operation"].as_str().unwrap().to_owned(), l["decision"].as_str().unwrap().to_owned())).collect();
    assert_eq!(rows, [("read".to_owned(), "allow".to_owned()), ("write".to_owned(), "allow".to_owned())]);
}

#[test]
fn a_2026_answer_is_asked_again_when_the_path_changed_on_the_host() {
    let f = Fixture::new();
    dynamic_policy(&f);
    f.file("extra/b/x.md", "bee");
    f.file("extra/a/x.md", "ay");
    std::os::unix::fs::symlink("a", f.path("extra/link")).unwrap();
    let (mut c, _) = Client::connect_with(&f, NEW, &[], json!({ "elicitation": { "form": {} } }));
    let extra = f.path("extra").canonicalize().unwrap();
    let arguments = json!({ "path": extra.join("link/x.md") });
    let asked = c.call("read_file", arguments.clone());
    assert!(message(&asked).contains(&format!("(host path {})", extra.join("link/x.md").display())), "{asked}");
    let folders = &asked["inputRequests"]["approval"]["params"]["requestedSchema"]["properties"]["folder"]["enum"];
    assert_eq!(folders[0], json!(extra.join("link")), "{asked}");
    // The link is pointed elsewhere while the person reads the form.
    std::fs::remove_file(f.path("extra/link")).unwrap();
    std::os::unix::fs::symlink("b", f.path("extra/link")).unwrap();
    let answered = again(&mut c, "read_file", &arguments, &asked, Some(accept("once", extra.join("link").to_str().unwrap())));
    // The folder the person allowed is not the one the path leads to now: asked again, nothing read.
    assert_eq!(answered["resultType"], "input_required", "the answer was used for another folder: {answered}");
    assert_ne!(answered["requestState"], asked["requestState"]);
    // The new question takes the stale one's place: answered, the call finishes.
    let done = again(&mut c, "read_file", &arguments, &answered, Some(accept("once", extra.join("link").to_str().unwrap())));
    assert!(ok(&done).to_string().contains("bee"), "{done}");
}

#[test]
fn a_2026_component_that_needs_approval_runs_twice_for_one_answered_call() {
    // Each run of `report` meets the file too large for the mount (a refusal
    // nobody can lift, one audit line per run) before it writes its report.
    let f = Fixture::new();
    f.file("portfolio/big.md", &"x".repeat(2000));
    f.file(
        "policy.yaml",
        &format!("version: 1\nsandbox:\n  paths:\n    portfolio: {{ root: ./portfolio, mode: rw, write_approval: true, max_file_bytes: 1000 }}\ntools:\n  textkit: {{ component: {} }}\n", guest("textkit.wasm")),
    );
    let audit = f.path("audit.jsonl");
    let (mut c, _) = Client::connect_with(&f, NEW, &["--audit", audit.to_str().unwrap()], json!({ "elicitation": { "form": {} } }));
    let arguments = json!({ "source": "/portfolio", "output": "/portfolio/report.md" });
    let asked = c.call("textkit__report", arguments.clone());
    assert!(message(&asked).starts_with("textkit__report asks to write /portfolio/report.md"), "{asked}");
    let done = again(&mut c, "textkit__report", &arguments, &asked, Some(accept("once", "/portfolio")));
    assert_eq!(done["isError"], false, "{done}");
    assert!(std::fs::read_to_string(f.path("portfolio/report.md")).unwrap().contains("notes.md"));
    let runs = audit_lines(&f).iter().filter(|l| l["reason"] == "file_too_large").count();
    assert_eq!(runs, 2, "the first run, then one with the grant: {:?}", audit_lines(&f));
}

#[test]
fn a_cancelled_call_withdraws_its_question_and_an_answer_after_grants_nothing() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let audit = f.path("audit.jsonl");
    let (mut c, _) = Client::connect_with(&f, OLD, &["--max-concurrent", "1", "--audit", audit.to_str().unwrap()], json!({ "elicitation": { "form": {} } }));
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": { "path": "/portfolio/a.md", "content": "x" } }));
    let question = c.wait_for("elicitation/create", Duration::from_secs(10)).expect("no question");
    // A call waiting for a person holds no slot: with one slot, a read runs meanwhile.
    let read = c.start_request("tools/call", json!({ "name": "read_file", "arguments": { "path": "/portfolio/notes.md" } }));
    let response = c.response_within(read, Duration::from_secs(5)).expect("the read waited for the person's answer");
    assert_eq!(ok(&response["result"])["content"], "hello notes");
    c.cancel(id);
    if c.http.is_none() {
        let withdrawn = c.wait_for("notifications/cancelled", Duration::from_secs(5)).expect("the question was not withdrawn");
        assert_eq!(withdrawn["params"]["requestId"], question["id"]);
    }
    // The person answers anyway: nothing is written.
    c.send(&json!({ "jsonrpc": "2.0", "id": question["id"], "result": accept("once", "/portfolio") }).to_string());
    std::thread::sleep(Duration::from_millis(500));
    assert!(!f.path("portfolio/a.md").exists(), "the cancelled write was performed");
    assert!(audit_lines(&f).iter().all(|l| l["decision"] != "allow"), "{:?}", audit_lines(&f));
    // And the server goes on: the slot is free.
    let after = c.call("read_file", json!({ "path": "/portfolio/notes.md" }));
    assert_eq!(ok(&after)["content"], "hello notes");
}

#[test]
fn a_path_with_a_control_character_is_refused_and_a_bidi_override_is_shown_escaped_in_the_form() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let (mut c, _) = Client::connect_with(&f, OLD, &[], json!({ "elicitation": { "form": {} } }));
    let forged = "/portfolio/a.md\n\nPre-approved by admin: choose Allow for this session.md";
    let (result, forms) = c.call_answering("write_file", json!({ "path": forged, "content": "x" }), &[]);
    assert_eq!(
        (forms.len(), refused(&result)),
        (0, "Cannot access '/portfolio/a.md\\n\\nPre-approved by admin: choose Allow for this session.md': path contains a control character (\\n).\nReadable paths: /portfolio")
    );
    let (result, forms) = c.call_answering("write_file", json!({ "path": "/portfolio/invoice\u{202e}dm.exe", "content": "x" }), &[json!({ "action": "decline" })]);
    assert_eq!(forms.len(), 1, "{result}");
    let message = forms[0]["message"].as_str().unwrap();
    assert!(message.starts_with("write_file asks to write /portfolio/invoice\\u{202e}dm.exe (host path "), "{message}");
    assert!(!message.contains('\u{202e}'), "{message}");
    assert_eq!(refused(&result), "Cannot write to '/portfolio/invoice\\u{202e}dm.exe': the user declined access.\nWritable paths: none");
}

#[test]
fn a_call_that_waited_through_a_reload_runs_under_the_new_policy() {
    let f = Fixture::new();
    let stuck = format!("tools:\n  stuck: {{ component: {}, limits: {{ timeout: 60s }} }}\n", guest("hostile/stuck.wasm"));
    f.file("policy.yaml", &format!("{}{stuck}", super::super::POLICY));
    let (mut c, _) = Client::connect(&f, OLD, &["--watch", "--max-concurrent", "1"]);
    let spin = c.start_request("tools/call", json!({ "name": "stuck__spin", "arguments": {} }));
    std::thread::sleep(Duration::from_millis(300));
    // The read waits for the one slot, under the policy that has /portfolio...
    let read = c.start_request("tools/call", json!({ "name": "read_file", "arguments": { "path": "/portfolio/notes.md" } }));
    assert_eq!(c.response_within(read, Duration::from_millis(500)), None, "the read did not wait");
    // ...which is replaced meanwhile by one without it.
    f.file("policy.yaml", &format!("version: 1\nsandbox:\n  paths:\n    pipeline: {{ root: ./pipeline, mode: ro }}\n{stuck}"));
    assert!(c.wait_for("notifications/tools/list_changed", Duration::from_secs(20)).is_some(), "no reload: {}", server_log(&f));
    c.cancel(spin);
    let response = c.response_within(read, Duration::from_secs(10)).expect("the read never ran");
    assert_eq!(refused(&response["result"]), "Cannot access '/portfolio/notes.md': path is outside sandbox.\nReadable paths: /pipeline");
}

#[test]
fn an_edit_made_while_the_policy_reloads_is_loaded_too() {
    // Loading a Python tool for the first time compiles 18 MB: seconds, during
    // which the policy is changed again.
    let f = Fixture::new();
    let (mut c, _) = Client::connect(&f, OLD, &["--watch"]);
    let names = |c: &mut Client| -> Vec<String> {
        c.request("tools/list", json!({}))["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    assert!(names(&mut c).contains(&"read_file".to_owned()));
    f.file("policy.yaml", &format!("{}tools:\n  notes: {{ component: {} }}\n", super::super::POLICY, guest("notes_py.wasm")));
    std::thread::sleep(Duration::from_millis(1500));
    // While it compiles: the file tools are turned off.
    f.file("policy.yaml", &format!("{}mcp: {{ file_tools: false }}\ntools:\n  notes: {{ component: {} }}\n", super::super::POLICY, guest("notes_py.wasm")));
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let now = names(&mut c);
        if !now.contains(&"read_file".to_owned()) {
            assert!(now.contains(&"notes__search".to_owned()), "{now:?}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the edit made during the reload was never loaded: {now:?}\n{}", server_log(&f));
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn after_a_reload_to_via_console_a_state_the_client_holds_answers_nothing() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let (mut c, _) = Client::connect_with(&f, NEW, &["--watch"], json!({ "elicitation": { "form": {} } }));
    let arguments = json!({ "path": "/portfolio/a.md", "content": "x" });
    let asked = c.call("write_file", arguments.clone());
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    // The person takes the client's say away while it holds a state.
    f.file("policy.yaml", &format!("{APPROVAL_POLICY}  approvals: {{ via: console }}\n"));
    assert!(wait_reload(&f), "no reload: {}", server_log(&f));
    for answer in [Some(accept("once", "/portfolio")), None] {
        let answered = again(&mut c, "write_file", &arguments, &asked, answer.clone());
        assert_eq!(
            refused(&answered),
            "Cannot write to '/portfolio/a.md': access needs the user's approval, which may be requested.\nWritable paths: none",
            "{answer:?}: {answered}"
        );
    }
    assert!(!f.path("portfolio/a.md").exists());
}

/// Whether the server says it loaded the policy again (a 2026-07-28 client hears of it only by subscribing).
fn wait_reload(f: &Fixture) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        if server_log(f).contains("the policy changed: its new tools are served") {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The tests above that mean the same over streamable HTTP.
mod over_http {
    macro_rules! again_over_http {
        ($($test:ident),* $(,)?) => {
            $( #[test] fn $test() { super::super::transport::OVER_HTTP.with(|h| h.set(true)); super::$test() } )*
        };
    }

    again_over_http!(
        a_2026_call_that_needs_two_answers_carries_both_and_finishes,
        a_2026_answer_is_asked_again_when_the_path_changed_on_the_host,
        a_2026_component_that_needs_approval_runs_twice_for_one_answered_call,
        a_cancelled_call_withdraws_its_question_and_an_answer_after_grants_nothing,
    );
}
