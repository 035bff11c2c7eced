//! The console in a real browser: Debian's chromium, headless, driven by
//! playwright-core (`tests/browser/driver.mjs`), clicking what a person
//! clicks while MCP clients wait on the answers. Nothing here is skipped:
//! without chromium or playwright-core the tests fail and say how to get them.

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{json, Value};

use super::console::{login_url, HttpServer};
use super::{audit_lines, ok, refused, Client, Fixture, APPROVAL_POLICY, OLD};

/// A headless chromium logged in to the console of the server `f` started.
struct Browser {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Browser {
    fn open(f: &Fixture) -> Browser {
        let repo = super::super::repo();
        let tools = repo.join(".tools/browser");
        assert!(
            tools.join("node_modules/playwright-core").is_dir(),
            "playwright-core is not installed: run bash tests/browser/setup.sh (bash policies/demo.sh does)"
        );
        assert!(std::path::Path::new("/usr/bin/chromium").exists(), "chromium is not installed: bash policies/setup.sh installs it (apt)");
        let mut child = Command::new("node")
            .arg(repo.join("tests/browser/driver.mjs"))
            .arg(login_url(f))
            .env("WARDEN_BROWSER_TOOLS", &tools)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(f.path("browser-stderr.log")).unwrap())
            .spawn()
            .expect("node runs the browser driver");
        let stdin = child.stdin.take().unwrap();
        let lines = super::lines_of(child.stdout.take().unwrap());
        let mut browser = Browser { child, stdin, lines };
        let first = browser.next_line(f);
        assert_eq!(first, "ready", "the browser did not log in");
        browser
    }

    fn next_line(&mut self, f: &Fixture) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(90))
            .unwrap_or_else(|_| panic!("no answer from the browser: {}", std::fs::read_to_string(f.path("browser-stderr.log")).unwrap_or_default()))
    }

    /// Sends `command`; the rest of its `ok` line.
    fn run(&mut self, f: &Fixture, command: &str) -> String {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
        let answer = self.next_line(f);
        match answer.strip_prefix("ok") {
            Some(rest) => rest.trim_start().to_owned(),
            None => panic!("{command}: {answer}"),
        }
    }

    /// Starts waiting for a question card holding `text`; [`Browser::waited`] reads the result.
    fn expect_question(&mut self, text: &str) {
        writeln!(self.stdin, "wait-question {text}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The card's id, and the milliseconds from the command to the card on screen.
    /// A `write_file` of `name` by `c`, once its question is on the page: the
    /// call's request id and the question's id. `seen`: text the card holds.
    fn write_asked(&mut self, f: &Fixture, c: &mut Client, name: &str, seen: &str) -> (u64, u64) {
        self.expect_question(seen);
        let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write(name) }));
        (id, self.waited(f).0)
    }

    fn waited(&mut self, f: &Fixture) -> (u64, f64) {
        let answer = self.next_line(f);
        let rest = answer.strip_prefix("ok ").unwrap_or_else(|| panic!("wait-question: {answer}"));
        let (id, ms) = rest.split_once(' ').unwrap();
        (id.parse().unwrap(), ms.parse().unwrap())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.child.wait_timeout_or_kill();
    }
}

trait WaitOrKill {
    fn wait_timeout_or_kill(&mut self) -> std::io::Result<()>;
}

impl WaitOrKill for Child {
    fn wait_timeout_or_kill(&mut self) -> std::io::Result<()> {
        for _ in 0..50 {
            if self.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.kill()?;
        self.wait().map(drop)
    }
}

fn connect(f: &Fixture, capabilities: Value) -> Client {
    let audit = f.path("audit.jsonl");
    Client::connect_with(f, OLD, &["--audit", audit.to_str().unwrap(), "--console", "127.0.0.1:0"], capabilities).0
}

fn write(name: &str) -> Value {
    json!({ "path": format!("/portfolio/drafts/{name}"), "content": "x" })
}

#[test]
fn in_a_browser_allow_once_and_deny_release_the_call_and_the_audit_view_says_via_console() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let mut c = connect(&f, json!({}));
    let mut browser = Browser::open(&f);
    let (id, question) = browser.write_asked(&f, &mut c, "report.md", "report.md");
    // The guide's picture of a pending question (docs/src/mcp/console.md).
    let picture = match std::env::var_os("WARDEN_UPDATE_SCREENSHOT") {
        Some(_) => super::super::repo().join("docs/src/console.png"),
        None => f.path("console.png"),
    };
    browser.run(&f, &format!("screenshot {}", picture.display()));
    assert!(std::fs::read(&picture).unwrap().starts_with(b"\x89PNG"), "no screenshot");
    browser.run(&f, &format!("click {question} Allow once"));
    let response = c.response_within(id, Duration::from_secs(20)).expect("the call ended after the click");
    assert_eq!(ok(&response["result"])["result"], "Written 1 characters to /portfolio/drafts/report.md");
    assert!(f.path("portfolio/drafts/report.md").exists());
    browser.run(&f, &format!("gone {question}"));
    // Deny.
    let (id, question) = browser.write_asked(&f, &mut c, "other.md", "other.md");
    browser.run(&f, &format!("click {question} Deny"));
    let response = c.response_within(id, Duration::from_secs(20)).unwrap();
    assert!(refused(&response["result"]).starts_with("Cannot write to '/portfolio/drafts/other.md'"), "{response}");
    assert!(!f.path("portfolio/drafts/other.md").exists());
    // The audit view, filtered: each answer with where it was given.
    let shown: String = serde_json::from_str(&browser.run(&f, "audit decision allow")).unwrap();
    assert!(shown.contains("/portfolio/drafts/report.md") && shown.contains("console") && !shown.contains("other.md"), "{shown}");
    let shown: String = serde_json::from_str(&browser.run(&f, "audit decision deny")).unwrap();
    assert!(shown.contains("other.md") && !shown.contains("report.md"), "{shown}");
    assert_eq!(audit_lines(&f).iter().map(|l| l["via"].as_str().unwrap()).collect::<Vec<_>>(), ["console", "console"]);
}

#[test]
fn in_a_browser_a_file_named_like_markup_is_shown_as_text() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let mut c = connect(&f, json!({}));
    let mut browser = Browser::open(&f);
    let name = "<img src=x onerror=alert(1)>.md";
    let (id, question) = browser.write_asked(&f, &mut c, name, "onerror");
    // The alerts are counted: one raised by the test itself is.
    assert_eq!(browser.run(&f, "probe-alert"), "1");
    let card = browser.run(&f, &format!("card {question}"));
    let (text, counts) = card.rsplit_once('"').map(|(t, c)| (format!("{t}\""), c.trim().to_owned())).unwrap();
    let text: String = serde_json::from_str(&text).unwrap();
    assert!(text.contains(&format!("/portfolio/drafts/{name}")), "{text}");
    assert_eq!(counts, "0 1", "an img element or another alert: the name was rendered as HTML");
    browser.run(&f, &format!("click {question} Deny"));
    let _ = c.response_within(id, Duration::from_secs(20));
}

#[test]
fn in_a_browser_a_session_grant_is_revoked_and_the_next_write_asks_again() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let mut c = connect(&f, json!({}));
    let mut browser = Browser::open(&f);
    let (id, question) = browser.write_asked(&f, &mut c, "a.md", "a.md");
    browser.run(&f, &format!("click {question} Allow for this session"));
    ok(&c.response_within(id, Duration::from_secs(20)).unwrap()["result"]);
    browser.run(&f, "wait-grant /portfolio/drafts");
    ok(&c.call("write_file", write("b.md")));
    browser.run(&f, "revoke /portfolio/drafts");
    let (id, question) = browser.write_asked(&f, &mut c, "c.md", "c.md");
    browser.run(&f, &format!("click {question} Deny"));
    assert!(refused(&c.response_within(id, Duration::from_secs(20)).unwrap()["result"]).starts_with("Cannot write"));
    assert!(!f.path("portfolio/drafts/c.md").exists());
}

#[test]
fn in_a_browser_cancel_kills_a_running_command() {
    let f = Fixture::new();
    f.file("policy.yaml", &format!("{APPROVAL_POLICY}  shell: {{}}\n"));
    let mut c = connect(&f, json!({}));
    let mut browser = Browser::open(&f);
    let id = c.start_request("tools/call", json!({ "name": "run_command", "arguments": { "command": "sleep 62.75" } }));
    std::thread::sleep(Duration::from_millis(500));
    browser.run(&f, "cancel sleep 62.75");
    let response = c.response_within(id, Duration::from_secs(20)).expect("the cancelled call answers");
    assert!(response["result"]["content"][0]["text"].as_str().unwrap().contains("cancelled"), "{response}");
    let left = Command::new("pgrep").args(["-f", "sleep 62.75"]).output().unwrap();
    assert!(left.stdout.is_empty(), "the command still runs");
}

#[test]
fn in_a_browser_a_url_mode_client_is_given_the_page_and_completes_after_the_click() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let mut c = connect(&f, json!({ "elicitation": { "url": {} } }));
    let mut browser = Browser::open(&f);
    browser.expect_question("a.md");
    let id = c.start_request("tools/call", json!({ "name": "write_file", "arguments": write("a.md") }));
    let asked = c.wait_for("elicitation/create", Duration::from_secs(20)).unwrap();
    let (question, _) = browser.waited(&f);
    assert!(asked["params"]["url"].as_str().unwrap().ends_with(&format!("/?question={question}")), "{asked}");
    c.send(&json!({ "jsonrpc": "2.0", "id": asked["id"], "result": { "action": "accept" } }).to_string());
    browser.run(&f, &format!("click {question} Allow once"));
    ok(&c.response_within(id, Duration::from_secs(20)).expect("the call ended after the click")["result"]);
}

#[test]
fn in_a_browser_two_clients_questions_are_apart() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let server = HttpServer::start(&f, &[]);
    let mut browser = Browser::open(&f);
    browser.expect_question("first #");
    let first = server.call("first", "write_file", write("one.md"));
    let (one, _) = browser.waited(&f);
    browser.expect_question("second #");
    let second = server.call("second", "write_file", write("two.md"));
    let (two, _) = browser.waited(&f);
    browser.run(&f, &format!("click {one} Allow once"));
    ok(&first.join().unwrap());
    let card: String = serde_json::from_str(browser.run(&f, &format!("card {two}")).rsplitn(3, ' ').last().unwrap()).unwrap();
    assert!(card.contains("second #") && card.contains("two.md"), "{card}");
    assert!(!f.path("portfolio/drafts/two.md").exists());
    // The card moved up when the one above it went, and the page saw that.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let times = browser.run(&f, &format!("moved {two}"));
        let (shown, moved) = times.split_once(' ').unwrap();
        if moved.parse::<u64>().unwrap() > shown.parse::<u64>().unwrap() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the card's move was not seen: {times}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A click on a card that moved as the person aimed (one above it went) answers nothing.
    let said: String = serde_json::from_str(&browser.run(&f, &format!("click-just-moved {two} Allow once"))).unwrap();
    assert_eq!(said, "The questions moved as you clicked: nothing was answered. Click again.");
    assert!(!f.path("portfolio/drafts/two.md").exists());
    browser.run(&f, &format!("click {two} Deny"));
    assert!(refused(&second.join().unwrap()).starts_with("Cannot write"));
}

/// Not a timed test: it prints how long a question took to appear, for the
/// README, with 100 questions pending and 10,000 lines in the audit log.
#[test]
fn in_a_browser_questions_appear_with_100_pending_and_10000_audit_lines() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let line = json!({ "time": "2026-11-27T00:00:00.000Z", "session": "s-old", "worker": null, "tool": "write_file", "client": "old-agent",
                       "operation": "write", "path": "/portfolio/old.md", "reason": "write_approval", "grant": null, "grant_host": null,
                       "scope": null, "decision": "deny" })
    .to_string();
    f.file("audit.jsonl", &format!("{line}\n").repeat(10_000));
    let audit = f.path("audit.jsonl");
    let server = HttpServer::start(&f, &["--audit", audit.to_str().unwrap(), "--max-concurrent", "2"]);
    let mut browser = Browser::open(&f);
    let mut pending = Vec::new();
    for i in 0..100 {
        pending.push(server.call(&format!("loader-{i}"), "write_file", write(&format!("pending-{i}.md"))));
    }
    browser.expect_question("pending-99.md");
    browser.waited(&f);
    let mut times = Vec::new();
    for i in 0..21 {
        let name = format!("timed-{i}.md");
        browser.expect_question(&name);
        let call = server.call("timer", "write_file", write(&name));
        let (question, ms) = browser.waited(&f);
        times.push(ms);
        browser.run(&f, &format!("click {question} Deny"));
        assert!(refused(&call.join().unwrap()).starts_with("Cannot write"));
    }
    times.sort_by(f64::total_cmp);
    eprintln!("console: a question on screen {:.1} ms p50 after its call started ({:.1} ms fastest, {:.1} ms slowest; 100 pending, 10,000 audit lines)", times[10], times[0], times[20]);
    drop(server);
    drop(pending);
}

#[test]
fn in_a_browser_the_python_sdk_without_forms_is_answered_at_the_console() {
    let f = Fixture::new();
    f.file("policy.yaml", APPROVAL_POLICY);
    let repo = super::super::repo();
    let python = repo.join(".tools/py/bin/python");
    assert!(python.exists(), "{} is missing: run `bash guests/build.sh` (the README's first command does)", python.display());
    let mut sdk = Command::new(python)
        .arg(repo.join("tests/clients/console_sdk.py"))
        .args([env!("CARGO_BIN_EXE_warden"), f.path("policy.yaml").to_str().unwrap(), f.path("audit.jsonl").to_str().unwrap(), "from-sdk.md"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        // The server's stderr, where the console's login file is named.
        .stderr(std::fs::File::create(f.path("mcp-stderr.log")).unwrap())
        .spawn()
        .unwrap();
    let said = super::lines_of(sdk.stdout.take().unwrap());
    assert_eq!(said.recv_timeout(Duration::from_secs(60)).as_deref(), Ok("calling"), "{}", std::fs::read_to_string(f.path("mcp-stderr.log")).unwrap_or_default());
    let mut browser = Browser::open(&f);
    browser.expect_question("from-sdk.md");
    let (question, _) = browser.waited(&f);
    let card: String = serde_json::from_str(browser.run(&f, &format!("card {question}")).rsplitn(3, ' ').last().unwrap()).unwrap();
    assert!(card.contains("python-sdk #0") && card.contains("/portfolio/drafts/from-sdk.md"), "{card}");
    assert!(said.recv_timeout(Duration::from_millis(300)).is_err(), "the call ended before the person answered");
    browser.run(&f, &format!("click {question} Allow once"));
    let result = said.recv_timeout(Duration::from_secs(20)).expect("the SDK's call ended after the click");
    assert!(result.starts_with("ok ") && result.contains("Written 1 characters to /portfolio/drafts/from-sdk.md"), "{result}");
    assert!(f.path("portfolio/drafts/from-sdk.md").exists());
    assert_eq!(audit_lines(&f)[0]["via"], "console");
    assert!(sdk.wait().unwrap().success());
}

#[test]
fn in_a_browser_a_command_a_rule_asks_about_is_shown_as_text_and_allowed() {
    let f = Fixture::new();
    f.file("policy.yaml", "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  shell:\n    rules: [{ prefix: [touch], decision: ask, justification: \"it writes\" }]\n");
    let mut c = connect(&f, json!({}));
    let mut browser = Browser::open(&f);
    browser.expect_question("onerror");
    let command = "touch '<img src=x onerror=alert(1)>'";
    let id = c.start_request("tools/call", json!({ "name": "run_command", "arguments": { "command": command } }));
    let question = browser.waited(&f).0;
    assert_eq!(browser.run(&f, "probe-alert"), "1");
    let card = browser.run(&f, &format!("card {question}"));
    let (text, counts) = card.rsplit_once('"').map(|(t, c)| (format!("{t}\""), c.trim().to_owned())).unwrap();
    let text: String = serde_json::from_str(&text).unwrap();
    assert!(text.contains(&format!("run_command asks to run {command}")) && text.contains("because the rule 'touch ...' asks: it writes"), "{text}");
    assert!(!text.contains("Folder to grant") && !text.contains("host path"), "{text}");
    assert_eq!(counts, "0 1", "the command was rendered as HTML");
    browser.run(&f, &format!("click {question} Allow once"));
    let response = c.response_within(id, Duration::from_secs(20)).expect("the call ended after the click");
    assert_eq!(ok(&response["result"])["exit_code"], 0);
    assert!(f.path("portfolio/<img src=x onerror=alert(1)>").exists());
}
