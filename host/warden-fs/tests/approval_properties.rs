//! No sequence of requests and answers lets an access through that the policy
//! plus the answers given does not allow.

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use common::Tree;
use proptest::prelude::*;
use warden_fs::approval::{Answer, ApprovalSession, Approver, Request, Scope};
use warden_fs::{Access, ReadOptions};

const POLICY: &str = "\
version: 1
sandbox:
  paths:
    portfolio: { root: ./portfolio, mode: rw, suffixes: [.md, .pdf], write_approval: true }
    pipeline:  { root: ./pipeline, mode: ro, read_approval: true }
  dynamic: { within: [./extra] }
";

/// Files the operations and probes touch: in mounts, in the ceiling, outside it.
const FILES: &[&str] = &[
    "portfolio/notes.md", "portfolio/reports/q3.md", "pipeline/status.md",
    "extra/a/x.md", "extra/a/deep/y.md", "extra/b/z.md", "outside/secret.md",
];

/// Answers from the generated script; records what each answer granted, by host folder.
struct Script {
    answers: Vec<(u8, usize)>,
    granted: Arc<Mutex<Vec<(Access, PathBuf, Scope)>>>,
}

impl Approver for Script {
    fn decide(&mut self, request: &Request) -> Answer {
        let (kind, choice) = if self.answers.is_empty() { (0, 0) } else { self.answers.remove(0) };
        let answer = match kind % 3 {
            0 => Answer::Deny,
            1 => Answer::Allow { scope: Scope::Once, choice },
            _ => Answer::Allow { scope: Scope::Session, choice },
        };
        if let Answer::Allow { scope, choice } = answer
            && let Some(dir) = request.choices.get(choice)
        {
            self.granted.lock().unwrap().push((request.access, dir.host.clone(), scope));
        }
        answer
    }
}

/// The oracle, independent of the session: may `access` to `rel` happen, given the
/// policy and the grants answered so far (`once` ones only within their operation)?
fn allowed(root: &Path, rel: &str, access: Access, grants: &[(Access, PathBuf, Scope)]) -> bool {
    let by_policy = match (rel.split('/').next().unwrap(), access) {
        ("portfolio", Access::Read) => true,
        ("portfolio" | "pipeline", _) | ("extra", _) | (_, _) => false,
    };
    let host = root.join(rel);
    let granted = grants.iter().any(|(a, dir, _)| *a >= access && host.starts_with(dir));
    let in_ceiling_or_mount = ["portfolio", "pipeline", "extra"].iter().any(|top| host.starts_with(root.join(top)));
    by_policy || (granted && in_ceiling_or_mount && !(rel.starts_with("pipeline") && access == Access::Write))
}

fn virtual_path(root: &Path, rel: &str) -> String {
    match rel.split_once('/') {
        Some((top @ ("portfolio" | "pipeline"), rest)) => format!("/{top}/{rest}"),
        _ => root.join(rel).display().to_string(),
    }
}

fn operation() -> impl Strategy<Value = (bool, usize)> {
    (any::<bool>(), 0..FILES.len())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn no_access_beyond_the_policy_and_the_answers(
        ops in prop::collection::vec(operation(), 1..8),
        answers in prop::collection::vec((any::<u8>(), 0usize..4), 0..16),
    ) {
        let t = Tree::with_policy(POLICY);
        for f in FILES.iter().filter(|f| !t.path(f).exists()) {
            t.file(f, "content");
        }
        let root = t.dir.path().canonicalize().unwrap();
        let granted = Arc::new(Mutex::new(Vec::new()));
        let script = Script { answers, granted: granted.clone() };
        let mut session = ApprovalSession::open(&t.policy(), None, Box::new(script), None).unwrap();
        for (write, file) in ops {
            let path = virtual_path(&root, FILES[file]);
            // Probe inside the operation, where its once-grants hold.
            let mut inside = Vec::new();
            let result = session.attempt(None, |sb| {
                inside = FILES.iter().map(|f| (f, sb.can_read(&virtual_path(&root, f)), sb.can_write(&virtual_path(&root, f)))).collect();
                if write { sb.write(&path, b"new").map(drop) } else { sb.read(&path, ReadOptions::default()).map(drop) }
            }).unwrap();
            let grants = granted.lock().unwrap().clone();
            for (f, r, w) in inside {
                prop_assert!(!r || allowed(&root, f, Access::Read, &grants), "read {} without a grant: {:?}", f, grants);
                prop_assert!(!w || allowed(&root, f, Access::Write, &grants), "write {} without a grant: {:?}", f, grants);
            }
            let access = if write { Access::Write } else { Access::Read };
            if result.is_ok() {
                prop_assert!(allowed(&root, FILES[file], access, &grants), "{:?} {} went through: {:?}", access, FILES[file], grants);
            }
            // Once-grants end with the operation: afterwards only session grants count.
            let session_only: Vec<_> = grants.iter().filter(|g| g.2 == Scope::Session).cloned().collect();
            let after = session.sandbox().unwrap();
            for f in FILES {
                let v = virtual_path(&root, f);
                prop_assert!(!after.can_read(&v) || allowed(&root, f, Access::Read, &session_only), "read {} after its operation", f);
                prop_assert!(!after.can_write(&v) || allowed(&root, f, Access::Write, &session_only), "write {} after its operation", f);
            }
        }
        t.assert_secret_intact();
    }
}
