//! Command rules over MCP: `run_command` asks through the client's form
//! (once, or the rule for the session), refuses a forbidden command as
//! `isError` with the justification, and audits every answer.

use serde_json::{json, Value};

use super::{audit_lines, ok, refused, Client, Fixture, NEW, OLD};

const POLICY: &str = "\
version: 1
sandbox:
  paths:
    portfolio: { root: ./portfolio, mode: rw }
  shell:
    rules:
      - { prefix: [touch], decision: ask, justification: \"it writes a file\" }
      - { prefix: [rm], decision: forbid, justification: \"nothing is removed here\" }
";

fn decide(decision: &str) -> Value {
    json!({ "action": "accept", "content": { "decision": decision } })
}

fn connect(f: &Fixture, revision: &str) -> Client {
    f.file("policy.yaml", POLICY);
    let audit = f.path("audit.jsonl");
    Client::connect_with(f, revision, &["--audit", audit.to_str().unwrap()], json!({ "elicitation": { "form": {} } })).0
}

#[test]
fn an_asking_rule_asks_through_the_form_once_then_for_the_session() {
    let f = Fixture::new();
    let mut c = connect(&f, OLD);
    let touch = |name: &str| json!({ "command": format!("true && touch {name}") });
    let (result, forms) = c.call_answering("run_command", touch("a.md"), &[decide("once")]);
    assert_eq!(ok(&result)["exit_code"], 0);
    assert!(f.path("portfolio/a.md").exists());
    assert_eq!(forms.len(), 1);
    assert_eq!(
        forms[0]["message"],
        "run_command asks to run true && touch a.md, because the rule 'touch ...' asks: it writes a file. Allow it?"
    );
    let schema = &forms[0]["requestedSchema"];
    assert_eq!(schema["required"], json!(["decision"]));
    assert_eq!(schema["properties"]["decision"]["default"], "deny");
    // Declined: nothing runs, in the sandbox's words.
    let (result, _) = c.call_answering("run_command", touch("b.md"), &[decide("deny")]);
    assert_eq!(refused(&result), "Cannot run 'true && touch b.md': the user declined it.");
    let (result, _) = c.call_answering("run_command", touch("b.md"), &[json!({ "action": "cancel" })]);
    assert_eq!(refused(&result), "Cannot run 'true && touch b.md': the command needs the user's approval, which may be requested.");
    assert!(!f.path("portfolio/b.md").exists());
    // For the session: the rule's later commands ask no more.
    let (result, forms) = c.call_answering("run_command", touch("c.md"), &[decide("session")]);
    assert_eq!((ok(&result)["exit_code"].clone(), forms.len()), (json!(0), 1));
    let (result, forms) = c.call_answering("run_command", touch("d.md"), &[]);
    assert_eq!((ok(&result)["exit_code"].clone(), forms.len()), (json!(0), 0));
    let lines = audit_lines(&f);
    let decisions: Vec<(&str, Option<&str>, &str)> =
        lines.iter().map(|l| (l["decision"].as_str().unwrap(), l["scope"].as_str(), l["rule"].as_str().unwrap())).collect();
    assert_eq!(
        decisions,
        [("allow", Some("once"), "touch ..."), ("deny", None, "touch ..."), ("unanswered", None, "touch ..."), ("allow", Some("session"), "touch ...")]
    );
    assert!(lines.iter().all(|l| l["operation"] == "run" && l["tool"] == "run_command" && l["via"] == "client"), "{lines:?}");
}

#[test]
fn a_forbidden_command_is_an_error_with_the_justification_and_never_asks() {
    let f = Fixture::new();
    for revision in [OLD, NEW] {
        let mut c = connect(&f, revision);
        let (result, forms) = c.call_answering("run_command", json!({ "command": "true && bash -c 'rm -f notes.md'" }), &[]);
        assert_eq!(refused(&result), "Cannot run 'true && bash -c 'rm -f notes.md'': the policy forbids 'rm ...': nothing is removed here.");
        assert!(forms.is_empty());
        assert!(f.path("portfolio/notes.md").exists());
    }
    let lines = audit_lines(&f);
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l["decision"] == "refused" && l["reason"] == "forbid"), "{lines:?}");
}

#[test]
fn a_client_that_takes_no_forms_is_refused_and_nothing_runs() {
    let f = Fixture::new();
    f.file("policy.yaml", POLICY);
    let (mut c, _) = Client::connect(&f, OLD, &[]);
    let result = c.call("run_command", json!({ "command": "true && touch e.md" }));
    assert_eq!(refused(&result), "Cannot run 'true && touch e.md': the command needs the user's approval, which may be requested.");
    assert!(!f.path("portfolio/e.md").exists());
}

#[test]
fn a_write_grant_reaches_run_command_for_that_command_alone() {
    let f = Fixture::new();
    f.file(
        "policy.yaml",
        "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw, write_approval: true }\n  shell:\n    rules:\n      \
         - { prefix: [touch], decision: allow, grant: { write: [/portfolio/out] } }\n",
    );
    let (mut c, _) = Client::connect(&f, OLD, &[]);
    let run = |c: &mut Client, command: &str| c.call("run_command", json!({ "command": command, "cwd": "/portfolio" }));
    assert_eq!(ok(&run(&mut c, "touch out/made"))["exit_code"], 0);
    assert!(f.path("portfolio/out/made").exists());
    assert_ne!(ok(&run(&mut c, "touch made"))["exit_code"], 0);
    assert_ne!(ok(&run(&mut c, "cp /dev/null out/copy"))["exit_code"], 0);
    assert!(!f.path("portfolio/made").exists() && !f.path("portfolio/out/copy").exists());
}

#[test]
fn answers_given_in_advance_approve_a_command_over_mcp() {
    let f = Fixture::new();
    f.file("policy.yaml", POLICY);
    let audit = f.path("audit.jsonl");
    let (mut c, _) = Client::connect(&f, OLD, &["--approve", "exec:touch", "--audit", audit.to_str().unwrap()]);
    assert_eq!(ok(&c.call("run_command", json!({ "command": "touch f.md" })))["exit_code"], 0);
    assert!(f.path("portfolio/f.md").exists());
    assert_eq!(audit_lines(&f)[0]["decision"], "allow");
}

#[test]
fn a_2026_client_is_asked_in_the_result_and_answers_by_calling_again() {
    use super::approvals::{again, decisions, message};
    let f = Fixture::new();
    let mut c = connect(&f, NEW);
    let arguments = json!({ "command": "touch a.md" });
    let first = c.call("run_command", arguments.clone());
    assert_eq!(message(&first), "run_command asks to run touch a.md, because the rule 'touch ...' asks: it writes a file. Allow it?");
    let stateless = super::transport::OVER_HTTP.with(|h| h.get());
    let offered = decisions(&first["inputRequests"]["approval"]["params"]);
    assert_eq!(offered, if stateless { vec![json!("once"), json!("deny")] } else { vec![json!("once"), json!("session"), json!("deny")] });
    assert!(!f.path("portfolio/a.md").exists());
    let done = again(&mut c, "run_command", &arguments, &first, Some(json!({ "action": "accept", "content": { "decision": "once" } })));
    assert_eq!(ok(&done)["exit_code"], 0);
    assert!(f.path("portfolio/a.md").exists());
    // Declined in its retry: nothing runs, in the sandbox's words.
    let other = json!({ "command": "touch b.md" });
    let asked = c.call("run_command", other.clone());
    let declined = again(&mut c, "run_command", &other, &asked, Some(json!({ "action": "decline" })));
    assert_eq!(refused(&declined), "Cannot run 'touch b.md': the user declined it.");
    assert!(!f.path("portfolio/b.md").exists());
    // An answer sealed for one command answers no other: asked again.
    let third = json!({ "command": "touch c.md" });
    let replayed = again(&mut c, "run_command", &third, &first, Some(json!({ "action": "accept", "content": { "decision": "once" } })));
    assert!(replayed["isError"] == json!(true) || replayed.get("inputRequests").is_some(), "{replayed}");
    assert!(!f.path("portfolio/c.md").exists());
    let rows: Vec<(String, String)> = audit_lines(&f).iter().map(|l| (l["decision"].as_str().unwrap().to_owned(), l["via"].as_str().unwrap_or("").to_owned())).collect();
    assert_eq!(rows, [("allow".to_owned(), "client".to_owned()), ("deny".to_owned(), "client".to_owned())]);
}

/// The tests above that mean the same over streamable HTTP.
mod over_http {
    #[test]
    fn a_2026_client_is_asked_in_the_result_and_answers_by_calling_again() {
        super::super::transport::OVER_HTTP.with(|h| h.set(true));
        super::a_2026_client_is_asked_in_the_result_and_answers_by_calling_again()
    }
}
