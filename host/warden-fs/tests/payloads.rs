//! The public traversal payload lists in `../shared/corpora/traversal-payloads`
//! against `read`, `write` and `list`, in both namespace layouts. A secret
//! planted beside the mounts must never be returned or changed.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::{Tree, SECRET};
use warden_fs::{ReadOptions, Sandbox};

fn corpus_dir() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.join("../../../shared/corpora/traversal-payloads")
}

/// Every payload, with `{FILE}` filled in, deduplicated.
fn payloads() -> BTreeSet<String> {
    let dir = corpus_dir();
    let mut out = BTreeSet::new();
    let mut files = 0;
    for sub in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        for file in std::fs::read_dir(sub.unwrap().path()).unwrap() {
            let bytes = std::fs::read(file.unwrap().path()).unwrap();
            files += 1;
            for line in String::from_utf8_lossy(&bytes).lines() {
                for target in ["outside/secret.md", "etc/passwd"] {
                    out.insert(line.replace("{FILE}", target));
                }
            }
        }
    }
    assert!(files >= 9 && out.len() > 10_000, "corpus looks incomplete: {files} files, {} payloads", out.len());
    out
}

fn attack(sb: &Sandbox, tree: &Tree, prefixes: &[&str]) {
    let payloads = payloads();
    for payload in &payloads {
        for prefix in prefixes {
            let p = format!("{prefix}{payload}");
            if let Ok(r) = sb.read(&p, ReadOptions::default()) {
                assert!(!r.text.contains(SECRET), "{p:?} read the secret");
            }
            if let Ok(entries) = sb.list_files(Some(&p), None) {
                assert!(entries.iter().all(|e| !e.path.as_str().contains("secret")), "{p:?} listed the secret");
            }
        }
    }
    // Writes are the slow part (each one is fsynced): one prefix suffices.
    for payload in &payloads {
        let _ = sb.write(&format!("{}{payload}", prefixes[0]), b"PWNED");
    }
    tree.assert_secret_intact();
    assert_eq!(std::fs::read_dir(tree.path("outside")).unwrap().count(), 1, "nothing new outside");
}

#[test]
fn traversal_payloads_never_reach_the_secret_with_named_mounts() {
    let t = Tree::new();
    attack(&t.sandbox(), &t, &["/portfolio/", "", "portfolio:", "/portfolio/reports/"]);
}

#[test]
fn traversal_payloads_never_reach_the_secret_in_root_mode() {
    let t = Tree::with_policy("version: 1\nsandbox:\n  root: { root: ./portfolio, readonly: false }\n");
    attack(&t.sandbox(), &t, &["/", "", "/reports/"]);
}
