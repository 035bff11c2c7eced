//! Deriving workers, on the policy route (`Sandbox::open_for`) and the library
//! route (`Sandbox::derive`) alike: each test is named after the widening it prevents.

mod common;

use common::{err, Tree};
use warden_fs::{DeriveRequest, ReadOptions, Sandbox};

fn list(v: &[&str]) -> Option<Vec<String>> {
    Some(v.iter().map(|s| s.to_string()).collect())
}

fn read(sb: &Sandbox, path: &str) -> warden_fs::Result<String> {
    sb.read(path, ReadOptions::default()).map(|r| r.text)
}

#[test]
fn inherit_with_allow_write_does_not_widen_to_the_parent() {
    let t = Tree::new();
    for sb in [
        t.worker("writer"),
        t.sandbox().derive(&DeriveRequest { inherit: true, allow_write: list(&["/portfolio/drafts"]), ..Default::default() }).unwrap(),
    ] {
        sb.write("/portfolio/drafts/a.md", b"a").unwrap();
        assert_eq!(read(&sb, "/portfolio/drafts/plan.md").unwrap(), "plan");
        assert_eq!(
            err(sb.write("/portfolio/b.md", b"b")),
            "Cannot access '/portfolio/b.md': path is outside sandbox.\nReadable paths: /portfolio/drafts"
        );
        assert_eq!(
            err(read(&sb, "/portfolio/notes.md")),
            "Cannot access '/portfolio/notes.md': path is outside sandbox.\nReadable paths: /portfolio/drafts"
        );
        assert_eq!(
            err(read(&sb, "/pipeline/status.md")),
            "Cannot access '/pipeline/status.md': path is outside sandbox.\nReadable paths: /portfolio/drafts"
        );
    }
    assert!(!t.path("portfolio/b.md").exists());
    assert_eq!(t.read("portfolio/drafts/a.md"), "a");
}

#[test]
fn inherit_with_allow_read_drops_the_parents_writes() {
    let t = Tree::new();
    let request = DeriveRequest { inherit: true, allow_read: list(&["/portfolio/reports"]), ..Default::default() };
    let sb = t.sandbox().derive(&request).unwrap();
    assert_eq!(read(&sb, "/portfolio/reports/q3.md").unwrap(), "q3 report");
    assert_eq!(
        err(sb.write("/portfolio/reports/x.md", b"x")),
        "Cannot write to '/portfolio/reports/x.md': path is read-only.\nWritable paths: none"
    );
}

#[test]
fn allow_write_beside_allow_read_does_not_make_the_folder_readable() {
    let t = Tree::new();
    let request = DeriveRequest {
        allow_read: list(&["/portfolio/reports"]),
        allow_write: list(&["/portfolio/drafts"]),
        ..Default::default()
    };
    let sb = t.sandbox().derive(&request).unwrap();
    let write_only = "Cannot read '/portfolio/drafts/plan.md': path is write-only.\nReadable paths: /portfolio/reports";
    assert_eq!(err(read(&sb, "/portfolio/drafts/plan.md")), write_only);
    assert_eq!(err(sb.stat("/portfolio/drafts/plan.md")), write_only);
    assert_eq!(err(sb.edit("/portfolio/drafts/plan.md", "plan", "x")), write_only);
    assert_eq!(err(sb.copy("/portfolio/drafts/plan.md", "/portfolio/drafts/c.md")), write_only);
    assert!(sb.list_files(Some("/portfolio/drafts"), None).is_err());
    assert_eq!(
        sb.list_files(Some("/portfolio"), None).unwrap().iter().map(|e| e.path.to_string()).collect::<Vec<_>>(),
        ["/portfolio/reports", "/portfolio/reports/q3.md"]
    );
    assert!(!sb.can_read("/portfolio/drafts/plan.md") && sb.can_write("/portfolio/drafts/plan.md"));
    // Writes go in; nothing comes out, not even by moving it where it can be read.
    assert_eq!(sb.write("/portfolio/drafts/new.md", b"n").unwrap().bytes, 1);
    assert_eq!(t.read("portfolio/drafts/new.md"), "n");
    assert_eq!(
        err(sb.move_path("/portfolio/drafts/plan.md", "/portfolio/reports/plan.md")),
        "Cannot write to '/portfolio/reports/plan.md': path is read-only.\nWritable paths: /portfolio/drafts"
    );
    let wider = DeriveRequest {
        allow_read: list(&["/portfolio/reports"]),
        allow_write: list(&["/portfolio"]),
        ..Default::default()
    };
    let sb = t.sandbox().derive(&wider).unwrap();
    assert_eq!(
        err(sb.move_path("/portfolio/drafts/plan.md", "/portfolio/reports/plan.md")),
        "Cannot read '/portfolio/drafts/plan.md': path is write-only.\nReadable paths: /portfolio/reports"
    );
    sb.move_path("/portfolio/drafts/plan.md", "/portfolio/drafts/moved.md").unwrap();
    assert_eq!(t.read("portfolio/drafts/moved.md"), "plan");
    assert!(!t.path("portfolio/reports/plan.md").exists());
}

#[test]
fn entry_leading_out_through_a_symlink_is_refused_even_beside_a_covering_entry() {
    let t = Tree::new();
    t.symlink(t.path("outside/secret.md"), "portfolio/out.md");
    t.symlink("../outside", "portfolio/out_dir");
    let expected = |entry: &str, list: &str| {
        format!(
            "SandboxPermissionEscalationError: cannot grant {list} access to '{entry}': it leads out of the parent \
             sandbox through a symbolic link. Request a folder that lies inside {} itself.",
            if list == "read" { "/portfolio, /pipeline" } else { "/portfolio" }
        )
    };
    for read_list in [vec!["/portfolio/out.md"], vec!["/portfolio", "/portfolio/out.md"], vec!["/portfolio/out_dir/x"]] {
        let entry = *read_list.last().unwrap();
        let request = DeriveRequest { allow_read: list(&read_list), ..Default::default() };
        let e = t.sandbox().derive(&request).unwrap_err();
        assert!(e.is_denial(), "{e}");
        assert_eq!(e.to_string(), expected(entry, "read"));
    }
    let request = DeriveRequest { allow_write: list(&["/portfolio/drafts", "/portfolio/out.md"]), ..Default::default() };
    assert_eq!(err(t.sandbox().derive(&request)), expected("/portfolio/out.md", "write"));
    t.assert_secret_intact();
}

#[test]
fn symlinked_entry_inside_the_mount_grants_what_it_points_to_at_its_own_path() {
    let t = Tree::new();
    t.symlink("reports", "portfolio/latest");
    let sb = t.sandbox().derive(&DeriveRequest { allow_read: list(&["/portfolio/latest"]), ..Default::default() }).unwrap();
    assert_eq!(read(&sb, "/portfolio/latest/q3.md").unwrap(), "q3 report");
    assert!(err(read(&sb, "/portfolio/reports/q3.md")).ends_with("Readable paths: /portfolio/latest"));
}

#[test]
fn missing_entry_is_an_unusable_policy_not_a_missing_file() {
    let t = Tree::new();
    std::fs::write(
        t.path("policy.yaml"),
        "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\nworkers:\n  w: { allow_write: [/portfolio/new] }\n",
    )
    .unwrap();
    let e = Sandbox::open_for(&t.policy(), Some("w")).unwrap_err();
    assert!(e.is_usage() && !e.is_denial(), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "{}:6:6: workers.w.allow_write[0]: '/portfolio/new' does not exist or cannot be opened; every allow_read \
             and allow_write entry must name an existing folder or file when the sandbox is derived (create it first)",
            t.path("policy.yaml").display()
        )
    );
    assert!(!t.path("portfolio/new").exists());
    let e = t.sandbox().derive(&DeriveRequest { allow_read: list(&["/portfolio/new"]), ..Default::default() }).unwrap_err();
    assert!(e.is_usage(), "{e:?}");
}

#[test]
fn worker_escalation_found_on_the_host_is_reported_like_a_policy_error() {
    let t = Tree::new();
    t.symlink(t.path("outside"), "portfolio/link");
    std::fs::write(
        t.path("policy.yaml"),
        "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\nworkers:\n  w:\n    allow_read: [/portfolio, /portfolio/link]\n",
    )
    .unwrap();
    let e = Sandbox::open_for(&t.policy(), Some("w")).unwrap_err();
    assert!(e.is_usage() && !e.is_denial(), "{e:?}");
    assert!(
        e.to_string().starts_with(&format!(
            "{}:7:5: workers.w.allow_read[1]: SandboxPermissionEscalationError: cannot grant read access to '/portfolio/link'",
            t.path("policy.yaml").display()
        )),
        "{e}"
    );
}

#[test]
fn paths_with_surrounding_whitespace_are_the_path_not_a_missing_file() {
    let t = Tree::new();
    let sb = t.sandbox();
    assert_eq!(read(&sb, "/portfolio/notes.md ").unwrap(), "hello notes");
    assert_eq!(read(&sb, " /portfolio/notes.md").unwrap(), "hello notes");
    assert_eq!(read(&sb, "portfolio:notes.md\n").unwrap(), "hello notes");
    sb.write("/portfolio/drafts/w.md\t", b"w").unwrap();
    assert_eq!(t.read("portfolio/drafts/w.md"), "w");
    assert!(!t.path("portfolio/drafts/w.md\t").exists());
}
