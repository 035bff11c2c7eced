//! Approvals and dynamic expansion: what a grant opens, for how long, and what it never opens.

mod common;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use common::Tree;
use warden_fs::approval::{Answer, ApprovalSession, Approver, AuditLog, Decision, DenyAll, Reason, Request, Scope};
use warden_fs::{Access, ReadOptions};

const POLICY: &str = "\
version: 1
sandbox:
  paths:
    portfolio: { root: ./portfolio, mode: rw, suffixes: [.md, .pdf], max_file_bytes: 1000, write_approval: true }
    pipeline:  { root: ./pipeline, mode: ro, read_approval: true }
  dynamic: { within: [./extra] }
workers:
  analyzer: { allow_read: [/portfolio/reports], readonly: true }
  helper:   { inherit: true, dynamic: { within: [./extra/sub] } }
";

/// Gives queued answers in order (then `Deny`) and keeps every request it saw.
#[derive(Clone, Default)]
struct Queue(Arc<Mutex<(VecDeque<Answer>, Vec<Request>)>>);

impl Queue {
    fn new(answers: &[Answer]) -> Queue {
        Queue(Arc::new(Mutex::new((answers.iter().copied().collect(), Vec::new()))))
    }

    fn requests(&self) -> Vec<Request> {
        self.0.lock().unwrap().1.clone()
    }
}

impl Approver for Queue {
    fn decide(&mut self, request: &Request) -> Answer {
        let mut state = self.0.lock().unwrap();
        state.1.push(request.clone());
        state.0.pop_front().unwrap_or(Answer::Deny)
    }
}

const ONCE: Answer = Answer::Allow { scope: Scope::Once, choice: 0 };
const SESSION: Answer = Answer::Allow { scope: Scope::Session, choice: 0 };

fn tree() -> Tree {
    let t = Tree::with_policy(POLICY);
    t.file("extra/a/b.md", "extra b");
    t.file("extra/sub/c.md", "extra c");
    t
}

/// The host path of `rel` in the tree, which is also its virtual path once granted.
fn host(t: &Tree, rel: &str) -> String {
    t.dir.path().canonicalize().unwrap().join(rel).display().to_string()
}

fn session(t: &Tree, worker: Option<&str>, approver: impl Approver + 'static, audit: Option<AuditLog>) -> ApprovalSession {
    ApprovalSession::open(&t.policy(), worker, Box::new(approver), audit).unwrap()
}

fn read(s: &mut ApprovalSession, path: &str) -> Result<String, String> {
    s.attempt(Some("test"), |sb| sb.read(path, ReadOptions::default()).map(|r| r.text)).unwrap().map_err(|e| e.to_string())
}

fn write(s: &mut ApprovalSession, path: &str, text: &str) -> Result<(), String> {
    s.attempt(Some("test"), |sb| sb.write(path, text.as_bytes()).map(drop)).unwrap().map_err(|e| e.to_string())
}

#[test]
fn a_once_grant_lasts_for_one_operation() {
    let t = tree();
    let q = Queue::new(&[ONCE]);
    let mut s = session(&t, None, q.clone(), None);
    write(&mut s, "/portfolio/notes.md", "first").unwrap();
    assert_eq!(
        write(&mut s, "/portfolio/notes.md", "second").unwrap_err(),
        "Cannot write to '/portfolio/notes.md': the user declined access.\nWritable paths: none"
    );
    assert_eq!(t.read("portfolio/notes.md"), "first");
    assert_eq!(q.requests().len(), 2);
}

#[test]
fn a_session_grant_is_remembered_and_asked_once() {
    let t = tree();
    let q = Queue::new(&[SESSION]);
    let mut s = session(&t, None, q.clone(), None);
    write(&mut s, "/portfolio/notes.md", "first").unwrap();
    write(&mut s, "/portfolio/notes.md", "second").unwrap();
    assert_eq!(t.read("portfolio/notes.md"), "second");
    assert_eq!(q.requests().len(), 1);
}

#[test]
fn a_grant_covers_its_folder_only_unless_widened() {
    let t = tree();
    let q = Queue::new(&[SESSION, Answer::Allow { scope: Scope::Session, choice: 1 }]);
    let mut s = session(&t, None, q.clone(), None);
    write(&mut s, "/portfolio/reports/q4.md", "q4").unwrap();
    assert_eq!(q.requests()[0].choices.iter().map(|c| c.path.to_string()).collect::<Vec<_>>(), ["/portfolio/reports", "/portfolio"]);
    // The folder beside it is not covered: a second request, widened to the mount.
    write(&mut s, "/portfolio/drafts/plan.md", "v2").unwrap();
    write(&mut s, "/portfolio/notes.md", "v2").unwrap();
    assert_eq!(q.requests().len(), 2);
    assert_eq!(t.read("portfolio/notes.md"), "v2");
}

#[test]
fn a_mount_needing_read_approval_is_hidden_until_granted() {
    let t = tree();
    let q = Queue::new(&[SESSION]);
    let mut s = session(&t, None, q.clone(), None);
    assert_eq!(s.sandbox().unwrap().readable_list(), "/portfolio");
    assert_eq!(read(&mut s, "/pipeline/status.md").unwrap(), "ok");
    let r = &q.requests()[0];
    assert_eq!(r.access, Access::Read);
    assert!(matches!(&r.reason, Reason::MountRule { mount } if mount.as_str() == "/pipeline"));
    assert_eq!(r.host_path, t.dir.path().canonicalize().unwrap().join("pipeline/status.md"));
}

#[test]
fn with_no_one_to_ask_the_message_says_approval_may_be_requested() {
    let t = tree();
    let mut s = session(&t, None, DenyAll, None);
    assert_eq!(
        read(&mut s, "/pipeline/status.md").unwrap_err(),
        "Cannot read '/pipeline/status.md': access needs the user's approval, which may be requested.\nReadable paths: /portfolio"
    );
}

#[test]
fn messages_never_tell_the_model_to_grant_itself_access() {
    let t = tree();
    for approver in [Box::new(DenyAll) as Box<dyn Approver>, Box::new(Queue::new(&[Answer::Deny]))] {
        let mut s = ApprovalSession::open(&t.policy(), None, approver, None).unwrap();
        let text = read(&mut s, "/pipeline/status.md").unwrap_err().to_lowercase();
        for phrase in ["approve", "grant", "--", "warden", "policy"] {
            assert!(!text.contains(phrase), "{phrase:?} in {text:?}");
        }
    }
}

#[test]
fn dynamic_write_is_an_escalation_after_read() {
    let t = tree();
    let q = Queue::new(&[SESSION, ONCE]);
    let mut s = session(&t, None, q.clone(), None);
    let file = host(&t, "extra/a/b.md");
    assert_eq!(read(&mut s, &file).unwrap(), "extra b");
    write(&mut s, &host(&t, "extra/a/new.md"), "new").unwrap();
    let asked: Vec<_> = q.requests().iter().map(|r| (r.access, r.reason.clone(), r.choices[0].path.to_string())).collect();
    assert_eq!(asked, [(Access::Read, Reason::OutsideMounts, host(&t, "extra/a")), (Access::Write, Reason::OutsideMounts, host(&t, "extra/a"))]);
    assert_eq!(t.read("extra/a/new.md"), "new");
    // The write was once; the read stays for the session.
    assert!(write(&mut s, &host(&t, "extra/a/again.md"), "x").unwrap_err().contains("the user declined access"));
    assert_eq!(read(&mut s, &file).unwrap(), "extra b");
    assert_eq!(q.requests().len(), 3);
}

#[test]
fn dynamic_choices_widen_up_to_the_ceiling_and_no_further() {
    let t = tree();
    t.file("extra/a/deep/x.md", "x");
    let q = Queue::new(&[Answer::Allow { scope: Scope::Session, choice: 2 }]);
    let mut s = session(&t, None, q.clone(), None);
    read(&mut s, &host(&t, "extra/a/deep/x.md")).unwrap();
    let choices: Vec<String> = q.requests()[0].choices.iter().map(|c| c.host.display().to_string()).collect();
    assert_eq!(choices, [host(&t, "extra/a/deep"), host(&t, "extra/a"), host(&t, "extra")]);
    assert_eq!(read(&mut s, &host(&t, "extra/sub/c.md")).unwrap(), "extra c");
    assert_eq!(q.requests().len(), 1);
}

#[test]
fn outside_the_ceiling_nothing_is_asked() {
    let t = tree();
    let q = Queue::new(&[SESSION]);
    let mut s = session(&t, None, q.clone(), None);
    let secret = host(&t, "outside/secret.md");
    assert_eq!(read(&mut s, &secret).unwrap_err(), format!("Cannot access '{secret}': path is outside sandbox.\nReadable paths: /portfolio"));
    assert!(q.requests().is_empty());
    t.assert_secret_intact();
}

#[test]
fn system_folders_are_never_asked_for() {
    let t = Tree::with_policy("version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio }\n  dynamic: true\n");
    let q = Queue::new(&[SESSION, SESSION, SESSION]);
    let mut s = session(&t, None, q.clone(), None);
    for path in ["/etc/passwd", "/proc/self/environ", "/root/.ssh/id_rsa", "/"] {
        assert!(read(&mut s, path).unwrap_err().contains("path is outside sandbox"), "{path}");
    }
    assert!(q.requests().is_empty());
}

#[test]
fn dynamic_symlink_into_a_mount_is_not_offered() {
    // The ceiling holds the mount, so only the overlap check stands in the way.
    let t = Tree::with_policy("version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, suffixes: [.md] }\n  dynamic: { within: [.] }\n");
    t.file("extra/a/b.md", "extra b");
    t.symlink(t.path("portfolio"), "extra/into-portfolio");
    let q = Queue::new(&[SESSION]);
    let mut s = session(&t, None, q.clone(), None);
    // Granting it would reach /portfolio's files past its suffix and approval rules.
    assert!(read(&mut s, &host(&t, "extra/into-portfolio/data.txt")).unwrap_err().contains("path is outside sandbox"));
    assert!(q.requests().is_empty());
}

#[test]
fn dynamic_symlink_out_of_the_ceiling_is_not_offered() {
    let t = tree();
    t.symlink("/etc", "extra/etc");
    t.symlink(t.path("outside"), "extra/out");
    let q = Queue::new(&[SESSION, SESSION]);
    let mut s = session(&t, None, q.clone(), None);
    assert!(read(&mut s, &host(&t, "extra/etc/passwd")).is_err());
    assert!(read(&mut s, &host(&t, "extra/out/secret.md")).is_err());
    assert!(q.requests().is_empty());
}

#[test]
fn dynamic_folder_holding_a_mount_is_not_offered() {
    let t = Tree::with_policy("version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio }\n  dynamic: { within: [.] }\n");
    let q = Queue::new(&[Answer::Allow { scope: Scope::Session, choice: 5 }]);
    let mut s = session(&t, None, q.clone(), None);
    let _ = read(&mut s, &host(&t, "outside/secret.md"));
    // The tree's root holds /portfolio: only `outside` itself may be granted.
    let choices: Vec<String> = q.requests()[0].choices.iter().map(|c| c.host.display().to_string()).collect();
    assert_eq!(choices, [host(&t, "outside")]);
}

#[test]
fn an_answer_naming_no_choice_is_a_denial() {
    let t = tree();
    let q = Queue::new(&[Answer::Allow { scope: Scope::Session, choice: 9 }]);
    let mut s = session(&t, None, q, None);
    assert!(write(&mut s, "/portfolio/notes.md", "x").unwrap_err().contains("the user declined access"));
    assert_eq!(t.read("portfolio/notes.md"), "hello notes");
}

#[test]
fn a_worker_is_never_granted_beyond_its_ceiling() {
    let t = tree();
    let q = Queue::new(&[SESSION, SESSION]);
    let mut s = session(&t, Some("helper"), q.clone(), None);
    assert!(read(&mut s, &host(&t, "extra/a/b.md")).unwrap_err().contains("path is outside sandbox"));
    assert_eq!(read(&mut s, &host(&t, "extra/sub/c.md")).unwrap(), "extra c");
    let choices: Vec<String> = q.requests()[0].choices.iter().map(|c| c.host.display().to_string()).collect();
    assert_eq!(choices, [host(&t, "extra/sub")]);
    assert_eq!(q.requests()[0].worker.as_deref(), Some("helper"));
}

#[test]
fn a_worker_without_dynamic_asks_only_inside_its_mounts() {
    let t = tree();
    let q = Queue::new(&[SESSION]);
    let mut s = session(&t, Some("analyzer"), q.clone(), None);
    assert!(read(&mut s, &host(&t, "extra/a/b.md")).is_err());
    // Its derived mount is read-only: a write is no request, whatever the parent's rule.
    assert!(write(&mut s, "/portfolio/reports/q3.md", "x").unwrap_err().contains("path is read-only"));
    assert!(q.requests().is_empty());
}

#[test]
fn every_answer_is_in_the_audit_log() {
    let t = tree();
    let log_path = t.path("logs/audit.jsonl");
    let q = Queue::new(&[SESSION, Answer::Deny]);
    let mut s = session(&t, None, q, Some(AuditLog::open(&log_path).unwrap()));
    read(&mut s, &host(&t, "extra/a/b.md")).unwrap();
    let _ = write(&mut s, "/portfolio/notes.md", "x");
    let records = AuditLog::read(&log_path).unwrap();
    assert_eq!(records.len(), 2);
    let r = &records[0];
    assert_eq!((r.operation.as_str(), r.reason.as_str(), r.decision, r.scope.as_deref()), ("read", "dynamic", Decision::Allow, Some("session")));
    assert_eq!((r.path.clone(), r.grant.clone(), r.tool.as_deref()), (host(&t, "extra/a/b.md"), Some(host(&t, "extra/a")), Some("test")));
    assert_eq!(r.session, s.info().id);
    let r = &records[1];
    assert_eq!((r.operation.as_str(), r.reason.as_str(), r.decision, r.grant.as_deref()), ("write", "write_approval", Decision::Deny, None));
    assert_eq!(r.host_path, Some(PathBuf::from(host(&t, "portfolio/notes.md"))));
}

#[test]
fn a_refusal_nobody_could_lift_is_audited_with_the_text_the_agent_saw() {
    let t = tree();
    let log_path = t.path("audit.jsonl");
    let q = Queue::new(&[]);
    let mut s = session(&t, Some("analyzer"), q.clone(), Some(AuditLog::open(&log_path).unwrap()));
    let refused = write(&mut s, "/portfolio/reports/q3.md", "x").unwrap_err();
    let _ = read(&mut s, "/portfolio/../../etc/passwd");
    let _ = read(&mut s, "/portfolio/reports/a\0b.md");
    let _ = read(&mut s, "/pipeline/status.md");
    let records = AuditLog::read(&log_path).unwrap();
    let rows: Vec<(&str, &str, &str, Decision)> =
        records.iter().map(|r| (r.operation.as_str(), r.path.as_str(), r.reason.as_str(), r.decision)).collect();
    assert_eq!(
        rows,
        [
            ("write", "/portfolio/reports/q3.md", "read_only", Decision::Refused),
            ("access", "/portfolio/../../etc/passwd", "outside_sandbox", Decision::Refused),
            // As the message shows it: the NUL escaped, never written raw.
            ("access", r"/portfolio/reports/a\0b.md", "invalid_path", Decision::Refused),
            ("access", "/pipeline/status.md", "outside_sandbox", Decision::Refused),
        ]
    );
    let r = &records[0];
    assert_eq!((r.refusal.as_deref(), r.tool.as_deref(), r.worker.as_deref(), r.host_path.as_ref()), (Some(refused.as_str()), Some("test"), Some("analyzer"), None));
    assert!(q.requests().is_empty());
    // A refusal a person was asked about is logged once, as the answer.
    let mut s = session(&t, None, Queue::new(&[Answer::Deny]), Some(AuditLog::open(&log_path).unwrap()));
    let _ = write(&mut s, "/portfolio/notes.md", "x");
    let last = AuditLog::read(&log_path).unwrap().pop().unwrap();
    assert_eq!((last.reason.as_str(), last.decision, last.refusal), ("write_approval", Decision::Deny, None));
    assert_eq!(AuditLog::read(&log_path).unwrap().len(), 5);
}

/// An outcome that met several refusals and ended on the last one, as a tool call does.
struct Several(Vec<warden_fs::Denial>);

impl warden_fs::approval::Refusable for Several {
    fn denial(&self) -> Option<&warden_fs::Denial> {
        self.0.last()
    }

    fn with_denial(mut self, denial: warden_fs::Denial) -> Self {
        self.0.pop();
        self.0.push(denial);
        self
    }

    fn refusals(&self) -> Vec<&warden_fs::Denial> {
        self.0.iter().collect()
    }
}

#[test]
fn refusals_met_before_a_question_are_logged_whatever_the_answer() {
    let t = tree();
    let log_path = t.path("audit.jsonl");
    let mut s = session(&t, None, Queue::new(&[Answer::Deny]), Some(AuditLog::open(&log_path).unwrap()));
    let _ = s
        .attempt(Some("test"), |sb| {
            let refused = |path: &str| sb.write(path, b"x").err().and_then(|e| if let warden_fs::FsError::Denied(d) = e { Some(d) } else { None });
            // One refusal nobody may lift, then one a person is asked about.
            Several(vec![refused("/portfolio/a\0.md").unwrap(), refused("/portfolio/notes.md").unwrap()])
        })
        .unwrap();
    let rows: Vec<(String, String, Decision)> = AuditLog::read(&log_path).unwrap().into_iter().map(|r| (r.path, r.reason, r.decision)).collect();
    assert_eq!(
        rows,
        [
            (r"/portfolio/a\0.md".to_owned(), "invalid_path".to_owned(), Decision::Refused),
            ("/portfolio/notes.md".to_owned(), "write_approval".to_owned(), Decision::Deny),
        ]
    );
}

#[test]
fn a_full_disk_under_the_audit_log_grants_nothing() {
    let t = tree();
    let full = AuditLog::open(std::path::Path::new("/dev/full")).unwrap();
    let mut s = session(&t, None, Queue::new(&[SESSION]), Some(full));
    let e = s.attempt(None, |sb| sb.write("/portfolio/notes.md", b"x").map(drop)).err().unwrap();
    assert_eq!(e.to_string(), "Cannot write to 'the audit log': No space left on device");
    assert_eq!(t.read("portfolio/notes.md"), "hello notes");
    assert!(s.session_grants().is_empty());
}
