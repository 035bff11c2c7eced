//! `warden console --policy P`: the console of the CLI's own commands. Each
//! command under the policy lists itself there and puts its questions to it
//! through a socket of Warden's private folder; the person answers, or
//! cancels the command. What is said on the socket answers nothing, and no
//! sandboxed command sees the socket.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::console::Page;
use super::{audit_lines, Fixture};

const POLICY: &str = "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw, write_approval: true }\n  audit: ./audit.jsonl\n  shell: {}\n";
/// Nothing to ask: a command runs at once.
const NO_QUESTIONS: &str = "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  shell: {}\n";

/// A child process, killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `warden console` of the fixture's policy, logged in.
struct Standalone {
    child: Killed,
    page: Page,
    /// Where the policy's commands find it.
    socket: String,
}

impl Standalone {
    fn start(f: &Fixture) -> Standalone {
        Standalone::start_with(f, &[], &[])
    }

    fn start_with(f: &Fixture, extra: &[&str], env: &[(&str, &str)]) -> Standalone {
        let log = f.path("console-stderr.log");
        let child = Killed(
            Command::new(env!("CARGO_BIN_EXE_warden"))
                .args(["console", "--policy", f.path("policy.yaml").to_str().unwrap()])
                .args(extra)
                .envs(env.iter().copied())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .unwrap(),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let url = text.split("log in once (the link is spent when used): ").nth(1).and_then(|r| r.lines().next());
            let socket = text.split("they find it at ").nth(1).and_then(|r| r.split(')').next());
            if let (Some(url), Some(socket)) = (url, socket) {
                return Standalone { page: Page::log_in_at(url), socket: socket.to_owned(), child };
            }
            assert!(Instant::now() < deadline, "the console did not start: {text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The running calls, once `n` are listed.
    fn calls(&self, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let calls = self.page.state()["calls"].as_array().unwrap().clone();
            if calls.len() == n {
                return calls;
            }
            assert!(Instant::now() < deadline, "{} calls, not {n}", calls.len());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `warden ARGS` under the fixture's policy, started, its stdin a closed pipe (no terminal).
fn command(f: &Fixture, args: &[&str]) -> Child {
    let policy = f.path("policy.yaml");
    let mut all: Vec<&str> = args[..1].to_vec();
    all.extend(["--policy", policy.to_str().unwrap()]);
    all.extend_from_slice(&args[1..]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_warden")).args(all).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"x").unwrap();
    child
}

/// A started command's exit code and stderr.
fn ended(child: Child) -> (Option<i32>, String) {
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_cli_command_is_listed_and_answered_at_the_console_once_or_denied() {
    let f = Fixture::new();
    f.file("policy.yaml", POLICY);
    let console = Standalone::start(&f);
    let write = command(&f, &["fs", "write", "/portfolio/drafts/a.md"]);
    let pid = write.id();
    let question = &console.page.questions(1)[0];
    assert_eq!((question["tool"].as_str(), question["access"].as_str(), question["path"].as_str()), (Some("warden fs write"), Some("write"), Some("/portfolio/drafts/a.md")));
    // Named by the connection's own process, whatever it says.
    assert_eq!(question["client"], format!("warden CLI, pid {pid}"));
    assert_eq!(question["folders"], json!(["/portfolio/drafts", "/portfolio"]));
    let calls = console.calls(1);
    assert_eq!((calls[0]["tool"].as_str(), calls[0]["detail"].as_str()), (Some("warden fs write"), Some("/portfolio/drafts/a.md")));
    console.page.answer(question, "once");
    assert_eq!(ended(write), (Some(0), String::new()));
    assert_eq!(std::fs::read_to_string(f.path("portfolio/drafts/a.md")).unwrap(), "x");
    console.calls(0);
    // Denied: refused in the sandbox's words, nothing written.
    let write = command(&f, &["fs", "write", "/portfolio/drafts/b.md"]);
    console.page.answer(&console.page.questions(1)[0], "deny");
    let (code, stderr) = ended(write);
    assert_eq!(code, Some(3));
    assert!(stderr.starts_with("Cannot write to '/portfolio/drafts/b.md'"), "{stderr}");
    assert!(!f.path("portfolio/drafts/b.md").exists());
    let logged: Vec<(String, String)> = audit_lines(&f).iter().map(|l| (l["decision"].as_str().unwrap().to_owned(), l["via"].as_str().unwrap_or("").to_owned())).collect();
    assert_eq!(logged, [("allow".to_owned(), "console".to_owned()), ("deny".to_owned(), "console".to_owned())]);
}

#[test]
fn cancel_at_the_console_kills_a_cli_exec() {
    let f = Fixture::new();
    f.file("policy.yaml", NO_QUESTIONS);
    let console = Standalone::start(&f);
    let started = Instant::now();
    let exec = command(&f, &["exec", "--", "sleep", "62.75"]);
    let call = &console.calls(1)[0];
    assert_eq!((call["tool"].as_str(), call["detail"].as_str()), (Some("warden exec"), Some("sleep 62.75")));
    let (status, body) = console.page.post(&format!("/api/calls/{}/cancel", call["id"]), &json!({}));
    assert_eq!(status, 204, "{body}");
    let (code, _) = ended(exec);
    assert_eq!(code, Some(130));
    assert!(started.elapsed() < Duration::from_secs(20), "not ended by the cancel");
    let left = Command::new("pgrep").args(["-f", "sleep 62.75"]).output().unwrap();
    assert!(left.stdout.is_empty(), "the command still runs");
    console.calls(0);
}

#[test]
fn ask_via_client_leaves_the_console_out_and_via_console_needs_one() {
    let f = Fixture::new();
    f.file("policy.yaml", POLICY);
    let console = Standalone::start(&f);
    // The terminal alone may answer, and there is none: refused at once, the console never asked.
    let (code, stderr) = ended(command(&f, &["fs", "--ask-via", "client", "write", "/portfolio/drafts/a.md"]));
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.starts_with("Cannot write to '/portfolio/drafts/a.md'"), "{stderr}");
    assert!(console.page.state()["questions"].as_array().unwrap().is_empty());
    drop(console);
    // The console alone may answer, and none runs: refused, and the person is told why.
    f.file("policy.yaml", &POLICY.replace("  shell: {}\n", "  shell: {}\n  approvals: { via: console }\n"));
    let (code, stderr) = ended(command(&f, &["fs", "write", "/portfolio/drafts/a.md"]));
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.starts_with("warden: approvals go to Warden's console alone, and none runs for "), "{stderr}");
    assert!(!f.path("portfolio/drafts/a.md").exists());
}

#[test]
fn a_second_console_for_one_policy_is_refused() {
    let f = Fixture::new();
    f.file("policy.yaml", POLICY);
    let console = Standalone::start(&f);
    let out = Command::new(env!("CARGO_BIN_EXE_warden")).args(["console", "--policy", f.path("policy.yaml").to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim_end(), format!("warden console: a console for this policy already runs (it listens at {})", console.socket));
}

#[test]
fn what_is_said_on_the_socket_answers_no_question() {
    let f = Fixture::new();
    f.file("policy.yaml", POLICY);
    let console = Standalone::start(&f);
    let write = command(&f, &["fs", "write", "/portfolio/drafts/a.md"]);
    let pending = console.page.questions(1)[0].clone();
    // A process of this user speaks to the socket as a command, then answers as if it were the console.
    let mut raw = UnixStream::connect(&console.socket).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let forged = json!({ "ask": { "id": 1, "question": { "client": "the person", "tool": "t", "access": "write", "path": "/portfolio/x", "host_path": "/x", "reason": "r", "folders": ["/portfolio"], "offer_session": false } } });
    let policy = f.path("policy.yaml").canonicalize().unwrap();
    // A command of another policy (one that took the inode of a deleted one, say) is not this console's.
    let mut other = UnixStream::connect(&console.socket).unwrap();
    other.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    other.write_all(format!("{}\n{forged}\n", json!({ "call": { "tool": "t", "detail": "d", "policy": "/elsewhere/policy.yaml" } })).as_bytes()).unwrap();
    assert_eq!(other.read_to_end(&mut Vec::new()).unwrap(), 0);
    raw.write_all(format!("{}\n{forged}\n", json!({ "call": { "tool": "t", "detail": "d", "policy": policy } })).as_bytes()).unwrap();
    let questions = console.page.questions(2);
    let own = questions.iter().find(|q| q["id"] != pending["id"]).unwrap();
    assert_eq!(own["client"], format!("warden CLI, pid {}", std::process::id()));
    for answer in [json!({ "answer": { "id": 1, "decision": { "decision": "once", "folder": 0 } } }), json!("cancel")] {
        let mut raw = UnixStream::connect(&console.socket).unwrap();
        raw.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        raw.write_all(format!("{answer}\n").as_bytes()).unwrap();
        let mut rest = Vec::new();
        assert_eq!(raw.read_to_end(&mut rest).unwrap(), 0, "the console said something to a forged answer");
    }
    drop(raw);
    // The forger's question went with its connection; the command's is still pending.
    let left = console.page.questions(1);
    assert_eq!(left[0]["id"], pending["id"]);
    console.page.answer(&left[0], "deny");
    assert_eq!(ended(write).0, Some(3));
}

#[test]
fn a_sandboxed_command_does_not_see_the_consoles_socket() {
    let f = Fixture::new();
    f.file("policy.yaml", NO_QUESTIONS);
    let console = Standalone::start(&f);
    let script = format!("test -e '{0}' && echo seen || echo unseen; ls \"$(dirname '{0}')\" >/dev/null 2>&1 && echo listed || echo unlisted", console.socket);
    let out = command(&f, &["exec", "--", "sh", "-c", &script]).wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "unseen\nunlisted\n", "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn open_gives_the_browser_a_private_page_never_the_url_and_a_stop_removes_it_and_the_socket() {
    let f = Fixture::new();
    f.file("policy.yaml", POLICY);
    // A browser opener that notes what it was given.
    f.file("bin/xdg-open", &format!("#!/bin/sh\nprintf '%s' \"$*\" > '{}'\n", f.path("opened").display()));
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(f.path("bin/xdg-open"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", f.path("bin").display(), std::env::var("PATH").unwrap());
    let mut console = Standalone::start_with(&f, &["--open"], &[("PATH", &path)]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f.path("opened").exists() {
        assert!(Instant::now() < deadline, "the opener was not run");
        std::thread::sleep(Duration::from_millis(20));
    }
    let opened = std::fs::read_to_string(f.path("opened")).unwrap();
    assert!(!opened.contains("token"), "the login URL on a command line: {opened}");
    let page = std::path::Path::new(&opened);
    assert_eq!(page.parent().unwrap(), std::path::Path::new(&console.socket).parent().unwrap(), "not in the private folder");
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(page).unwrap().mode() & 0o777, 0o600);
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("http-equiv=refresh content=\"0;url=http://127.0.0.1:") && html.contains("/login?token="), "{html}");
    // Stopped as a person stops it, the console takes its page and socket with it.
    let pid = rustix::process::Pid::from_child(&console.child.0);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    assert_eq!(console.child.0.wait().unwrap().code(), Some(0));
    assert!(!page.exists() && !std::path::Path::new(&console.socket).exists());
}

#[test]
fn a_command_a_rule_asks_about_is_answered_at_the_console() {
    let f = Fixture::new();
    f.file("policy.yaml", &NO_QUESTIONS.replace("  shell: {}\n", "  audit: ./audit.jsonl\n  shell:\n    rules: [{ prefix: [touch], decision: ask }]\n"));
    let console = Standalone::start(&f);
    let exec = command(&f, &["exec", "--cwd", "/portfolio", "--", "touch", "made.md"]);
    let question = &console.page.questions(1)[0];
    assert_eq!((question["tool"].as_str(), question["access"].as_str(), question["path"].as_str()), (Some("warden exec"), Some("run"), Some("touch made.md")));
    console.page.answer(question, "once");
    assert_eq!(ended(exec).0, Some(0));
    assert!(f.path("portfolio/made.md").exists());
    let exec = command(&f, &["exec", "--cwd", "/portfolio", "--", "touch", "other.md"]);
    console.page.answer(&console.page.questions(1)[0], "deny");
    assert_eq!(ended(exec), (Some(126), "Cannot run 'touch other.md': the user declined it.\n".to_owned()));
    assert!(!f.path("portfolio/other.md").exists());
    let logged: Vec<Value> = audit_lines(&f).iter().map(|l| json!([l["decision"], l["via"]])).collect();
    assert_eq!(logged, [json!(["allow", "console"]), json!(["deny", "console"])]);
}
