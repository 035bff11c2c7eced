//! Every rule and every error text of the capability filesystem.

mod common;

use common::{err, Tree};
use warden_fs::{DeriveRequest, EntryKind, ReadOptions};

const READABLE: &str = "Readable paths: /portfolio, /pipeline";

#[test]
fn read_returns_text_in_every_accepted_form() {
    let t = Tree::new();
    let sb = t.sandbox();
    for p in ["/portfolio/notes.md", "portfolio/notes.md", "portfolio:notes.md", "//portfolio//notes.md"] {
        assert_eq!(sb.read(p, ReadOptions::default()).unwrap().text, "hello notes", "{p}");
    }
}

#[test]
fn truncated_read_says_how_to_read_the_rest() {
    let t = Tree::new();
    let sb = t.sandbox();
    let r = sb.read("/portfolio/notes.md", ReadOptions { offset: 2, max_chars: Some(3) }).unwrap();
    assert_eq!(r.text, "llo");
    assert_eq!(
        r.notice().unwrap(),
        "[Truncated: showing characters 2-5 of 11. To read the rest, read again with offset 5.]"
    );
}

#[test]
fn outside_sandbox_lists_readable_paths() {
    let t = Tree::new();
    let sb = t.sandbox();
    assert_eq!(
        err(sb.read("/etc/passwd", ReadOptions::default())),
        format!("Cannot access '/etc/passwd': path is outside sandbox.\n{READABLE}")
    );
}

#[test]
fn write_to_read_only_mount_lists_writable_paths() {
    let t = Tree::new();
    assert_eq!(
        err(t.sandbox().write("/pipeline/x.md", b"x")),
        "Cannot write to '/pipeline/x.md': path is read-only.\nWritable paths: /portfolio"
    );
    assert!(!t.path("pipeline/x.md").exists());
}

#[test]
fn read_only_worker_has_no_writable_paths() {
    let t = Tree::new();
    assert_eq!(
        err(t.worker("analyzer").write("/portfolio/reports/x.md", b"x")),
        "Cannot write to '/portfolio/reports/x.md': path is read-only.\nWritable paths: none"
    );
}

#[test]
fn disallowed_suffix_is_refused_for_read_and_write() {
    let t = Tree::new();
    let sb = t.sandbox();
    let expected = "Cannot access '/portfolio/data.txt': suffix '.txt' not allowed.\nAllowed suffixes: .md, .pdf";
    assert_eq!(err(sb.read("/portfolio/data.txt", ReadOptions::default())), expected);
    assert_eq!(err(sb.read_bytes("/portfolio/data.txt")), expected);
    assert_eq!(err(sb.write("/portfolio/data.txt", b"x")), expected);
    assert_eq!(t.read("portfolio/data.txt"), "hidden by suffix rule");
}

#[test]
fn file_over_max_bytes_is_refused_for_read() {
    let t = Tree::new();
    t.file("portfolio/big.md", &"x".repeat(1001));
    assert_eq!(
        err(t.sandbox().read("/portfolio/big.md", ReadOptions::default())),
        "Cannot read '/portfolio/big.md': file too large (1001 bytes).\nMaximum allowed: 1000 bytes"
    );
}

#[test]
fn content_over_max_bytes_is_refused_for_write_and_keeps_the_old_file() {
    let t = Tree::new();
    assert_eq!(
        err(t.sandbox().write("/portfolio/notes.md", &[b'x'; 1001])),
        "Cannot write to '/portfolio/notes.md': content too large (1001 bytes).\nMaximum allowed: 1000 bytes"
    );
    assert_eq!(t.read("portfolio/notes.md"), "hello notes");
}

#[test]
fn write_creates_parents_and_replaces_atomically() {
    let t = Tree::new();
    let sb = t.sandbox();
    let w = sb.write("/portfolio/a/b/new.md", b"first").unwrap();
    assert!(w.created);
    let w = sb.write("/portfolio/a/b/new.md", b"second").unwrap();
    assert!(!w.created);
    assert_eq!(t.read("portfolio/a/b/new.md"), "second");
    let leftovers: Vec<_> = std::fs::read_dir(t.path("portfolio/a/b")).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
}

#[test]
fn write_keeps_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let t = Tree::new();
    std::fs::set_permissions(t.path("portfolio/notes.md"), std::fs::Permissions::from_mode(0o640)).unwrap();
    t.sandbox().write("/portfolio/notes.md", b"new").unwrap();
    let mode = std::fs::metadata(t.path("portfolio/notes.md")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
}

#[test]
fn write_to_a_folder_is_refused() {
    let t = Tree::new();
    assert_eq!(err(t.sandbox().write("/portfolio/reports", b"x")), "Cannot write to '/portfolio/reports': it is a folder.");
    assert_eq!(err(t.sandbox().write("/portfolio", b"x")), "Cannot write to '/portfolio': it is a folder.");
}

#[test]
fn edit_replaces_a_unique_text() {
    let t = Tree::new();
    t.sandbox().edit("/portfolio/notes.md", "notes", "world").unwrap();
    assert_eq!(t.read("portfolio/notes.md"), "hello world");
}

#[test]
fn edit_reports_missing_repeated_and_empty_text() {
    let t = Tree::new();
    t.file("portfolio/twice.md", "a-a-a");
    let sb = t.sandbox();
    assert_eq!(err(sb.edit("/portfolio/notes.md", "absent", "x")), "Cannot edit '/portfolio/notes.md': text to replace not found.");
    assert_eq!(
        err(sb.edit("/portfolio/twice.md", "a", "b")),
        "Cannot edit '/portfolio/twice.md': text to replace found 3 times. Include more surrounding text so that it is unique."
    );
    assert_eq!(err(sb.edit("/portfolio/notes.md", "", "x")), "Cannot edit '/portfolio/notes.md': text to replace is empty.");
    assert_eq!(t.read("portfolio/twice.md"), "a-a-a");
}

#[test]
fn edit_in_read_only_mount_is_refused_before_reading() {
    let t = Tree::new();
    assert_eq!(
        err(t.sandbox().edit("/pipeline/status.md", "ok", "bad")),
        "Cannot write to '/pipeline/status.md': path is read-only.\nWritable paths: /portfolio"
    );
    assert_eq!(t.read("pipeline/status.md"), "ok");
}

#[test]
fn missing_file_is_a_failure_not_a_denial() {
    let t = Tree::new();
    let e = t.sandbox().read("/portfolio/nope.md", ReadOptions::default()).unwrap_err();
    assert!(!e.is_denial());
    assert_eq!(e.to_string(), "Cannot read '/portfolio/nope.md': no such file or folder.");
}

#[test]
fn non_utf8_text_points_to_bytes() {
    let t = Tree::new();
    std::fs::write(t.path("portfolio/bin.md"), [0xff, 0xfe]).unwrap();
    let sb = t.sandbox();
    assert_eq!(err(sb.read("/portfolio/bin.md", ReadOptions::default())), "Cannot read '/portfolio/bin.md': file is not UTF-8 text; read it as bytes instead.");
    assert_eq!(sb.read_bytes("/portfolio/bin.md").unwrap(), vec![0xff, 0xfe]);
}

#[test]
fn delete_removes_files_and_empty_folders_only() {
    let t = Tree::new();
    let sb = t.sandbox();
    sb.delete("/portfolio/notes.md").unwrap();
    assert!(!t.path("portfolio/notes.md").exists());
    assert_eq!(err(sb.delete("/portfolio/reports")), "Cannot delete '/portfolio/reports': Directory not empty");
    sb.delete("/portfolio/reports/q3.md").unwrap();
    sb.delete("/portfolio/reports").unwrap();
    assert!(!t.path("portfolio/reports").exists());
    assert_eq!(err(sb.delete("/portfolio")), "Cannot delete '/portfolio': it is a sandbox root.");
    assert_eq!(err(sb.delete("/pipeline/status.md")), "Cannot write to '/pipeline/status.md': path is read-only.\nWritable paths: /portfolio");
    assert_eq!(err(sb.delete("/portfolio/data.txt")), "Cannot access '/portfolio/data.txt': suffix '.txt' not allowed.\nAllowed suffixes: .md, .pdf");
}

#[test]
fn mkdir_creates_parents_and_accepts_existing_folders() {
    let t = Tree::new();
    let sb = t.sandbox();
    sb.mkdir("/portfolio/x/y/z").unwrap();
    sb.mkdir("/portfolio/x/y/z").unwrap();
    assert!(t.path("portfolio/x/y/z").is_dir());
    assert_eq!(err(sb.mkdir("/pipeline/x")), "Cannot write to '/pipeline/x': path is read-only.\nWritable paths: /portfolio");
}

#[test]
fn move_creates_parents_and_refuses_an_existing_destination() {
    let t = Tree::new();
    let sb = t.sandbox();
    sb.move_path("/portfolio/notes.md", "/portfolio/archive/2026/notes.md").unwrap();
    assert_eq!(t.read("portfolio/archive/2026/notes.md"), "hello notes");
    assert!(!t.path("portfolio/notes.md").exists());
    assert_eq!(
        err(sb.move_path("/portfolio/archive/2026/notes.md", "/portfolio/drafts/plan.md")),
        "Cannot move to '/portfolio/drafts/plan.md': destination already exists."
    );
    assert_eq!(t.read("portfolio/drafts/plan.md"), "plan");
}

#[test]
fn move_moves_folders_and_checks_both_ends() {
    let t = Tree::new();
    let sb = t.sandbox();
    sb.move_path("/portfolio/reports", "/portfolio/old/reports").unwrap();
    assert_eq!(t.read("portfolio/old/reports/q3.md"), "q3 report");
    assert_eq!(err(sb.move_path("/pipeline/status.md", "/portfolio/s.md")), "Cannot write to '/pipeline/status.md': path is read-only.\nWritable paths: /portfolio");
    assert_eq!(err(sb.move_path("/portfolio/notes.md", "/portfolio/notes.txt")), "Cannot access '/portfolio/notes.txt': suffix '.txt' not allowed.\nAllowed suffixes: .md, .pdf");
    assert_eq!(err(sb.move_path("/portfolio/notes.md", "/pipeline/notes.md")), "Cannot write to '/pipeline/notes.md': path is read-only.\nWritable paths: /portfolio");
    assert_eq!(t.read("portfolio/notes.md"), "hello notes");
}

#[test]
fn copy_goes_from_a_read_only_mount_to_a_writable_one() {
    let t = Tree::new();
    let sb = t.sandbox();
    sb.copy("/pipeline/status.md", "/portfolio/in/status.md").unwrap();
    assert_eq!(t.read("portfolio/in/status.md"), "ok");
    assert_eq!(t.read("pipeline/status.md"), "ok");
    assert_eq!(err(sb.copy("/portfolio/notes.md", "/pipeline/n.md")), "Cannot write to '/pipeline/n.md': path is read-only.\nWritable paths: /portfolio");
    assert_eq!(err(sb.copy("/pipeline/status.md", "/portfolio/notes.md")), "Cannot copy to '/portfolio/notes.md': destination already exists.");
    assert_eq!(err(sb.copy("/portfolio/reports", "/portfolio/r2.md")), "Cannot copy '/portfolio/reports': it is a folder; copy its files one by one.");
}

#[test]
fn copy_into_a_smaller_limit_is_refused() {
    let t = Tree::with_policy(
        "version: 1\nsandbox:\n  paths:\n    pipeline: { root: ./pipeline }\n    portfolio: { root: ./portfolio, mode: rw, max_file_bytes: 1 }\n",
    );
    assert_eq!(
        err(t.sandbox().copy("/pipeline/status.md", "/portfolio/s.md")),
        "Cannot write to '/portfolio/s.md': content too large (2 bytes).\nMaximum allowed: 1 bytes"
    );
    assert!(!t.path("portfolio/s.md").exists());
}

#[test]
fn list_is_sorted_recursive_and_hides_disallowed_suffixes() {
    let t = Tree::new();
    let sb = t.sandbox();
    let all: Vec<String> = sb.list_files(None, None).unwrap().into_iter().map(|e| e.path.to_string()).collect();
    assert_eq!(
        all,
        [
            "/pipeline", "/pipeline/status.md", "/portfolio", "/portfolio/drafts", "/portfolio/drafts/plan.md",
            "/portfolio/notes.md", "/portfolio/reports", "/portfolio/reports/q3.md"
        ]
    );
}

#[test]
fn list_glob_matches_names_anywhere_or_paths_with_a_slash() {
    let t = Tree::new();
    let sb = t.sandbox();
    let names = |path: Option<&str>, glob: &str| -> Vec<String> {
        sb.list_files(path, Some(glob)).unwrap().into_iter().map(|e| e.path.to_string()).collect()
    };
    assert_eq!(names(Some("/portfolio"), "q*.md"), ["/portfolio/reports/q3.md"]);
    assert_eq!(names(Some("/portfolio"), "*/*.md"), ["/portfolio/drafts/plan.md", "/portfolio/reports/q3.md"]);
    assert_eq!(names(None, "portfolio/*.md"), ["/portfolio/notes.md"]);
    assert_eq!(err(sb.list_files(None, Some("a[b"))), "Invalid glob 'a[b': unclosed character class; missing ']'");
}

#[test]
fn list_of_a_virtual_folder_leads_to_the_worker_areas() {
    let t = Tree::new();
    let sb = t.worker("analyzer");
    let all: Vec<(String, EntryKind)> = sb.list_files(Some("/"), None).unwrap().into_iter().map(|e| (e.path.to_string(), e.kind)).collect();
    assert_eq!(
        all,
        [
            ("/portfolio".to_owned(), EntryKind::Dir),
            ("/portfolio/reports".to_owned(), EntryKind::Dir),
            ("/portfolio/reports/q3.md".to_owned(), EntryKind::File)
        ]
    );
    assert_eq!(err(sb.list_files(Some("/pipeline"), None)), "Cannot access '/pipeline': path is outside sandbox.\nReadable paths: /portfolio/reports");
}

#[test]
fn stat_describes_files_folders_and_rights() {
    let t = Tree::new();
    let sb = t.sandbox();
    let s = sb.stat("/portfolio/notes.md").unwrap();
    assert_eq!((s.kind, s.size, s.writable), (EntryKind::File, 11, true));
    let s = sb.stat("/pipeline/status.md").unwrap();
    assert_eq!((s.kind, s.writable), (EntryKind::File, false));
    assert_eq!(sb.stat("/").unwrap().kind, EntryKind::Dir);
    assert_eq!(sb.stat("/portfolio/reports").unwrap().kind, EntryKind::Dir);
}

#[test]
fn queries_answer_for_mounts_modes_and_suffixes() {
    let t = Tree::new();
    let sb = t.sandbox();
    assert!(sb.can_read("/portfolio/notes.md"));
    assert!(sb.can_write("/portfolio/new.md"));
    assert!(sb.can_write("/portfolio/reports"));
    assert!(!sb.can_read("/portfolio/data.txt"));
    assert!(sb.can_read("/pipeline/status.md"));
    assert!(!sb.can_write("/pipeline/status.md"));
    assert!(!sb.can_read("/etc/passwd"));
    let r = sb.resolve("portfolio:reports/q3.md").unwrap();
    assert_eq!((r.mount.as_str(), r.relative.to_str().unwrap()), ("/portfolio", "reports/q3.md"));
    let roots = |v: Vec<warden_policy::VPath>| v.into_iter().map(|p| p.to_string()).collect::<Vec<_>>();
    assert_eq!(roots(sb.readable_roots()), ["/portfolio", "/pipeline"]);
    assert_eq!(roots(sb.writable_roots()), ["/portfolio"]);
}

#[test]
fn root_mode_accepts_slash_and_relative_paths() {
    let t = Tree::with_policy("version: 1\nsandbox:\n  root: { root: ./portfolio, readonly: false }\n");
    let sb = t.sandbox();
    assert_eq!(sb.read("/notes.md", ReadOptions::default()).unwrap().text, "hello notes");
    assert_eq!(sb.read("reports/q3.md", ReadOptions::default()).unwrap().text, "q3 report");
    sb.write("new.md", b"n").unwrap();
    assert_eq!(t.read("portfolio/new.md"), "n");
    assert_eq!(err(sb.read("/../outside/secret.md", ReadOptions::default())), "Cannot access '/../outside/secret.md': path is outside sandbox.\nReadable paths: /");
}

#[test]
fn empty_derive_sees_nothing() {
    let t = Tree::new();
    let sb = t.sandbox().derive(&DeriveRequest::default()).unwrap();
    assert_eq!(
        err(sb.read("/portfolio/notes.md", ReadOptions::default())),
        "Cannot access '/portfolio/notes.md': path is outside sandbox.\nReadable paths: none"
    );
    assert!(sb.list_files(None, None).is_err());
}

#[test]
fn entry_naming_a_file_allows_its_folder() {
    let t = Tree::new();
    let sb = t.worker("drafter");
    assert_eq!(sb.readable_roots()[0].as_str(), "/portfolio/drafts");
    sb.write("/portfolio/drafts/other.md", b"o").unwrap();
    assert!(!sb.can_read("/portfolio/notes.md"));
}

#[test]
fn derived_child_holds_a_handle_to_its_subfolder_not_the_parent_root() {
    let t = Tree::new();
    let sb = t.worker("analyzer");
    let mount = &sb.mounts()[0];
    assert_eq!(mount.host_root, t.policy().mounts[0].host_root.join("reports"));
    // The handle itself cannot name the parent's files: `..` is refused by cap-std.
    assert!(mount.dir().read_to_string("../notes.md").is_err());
    assert_eq!(mount.dir().read_to_string("q3.md").unwrap(), "q3 report");
}

#[test]
fn derive_escalation_is_a_denial_naming_request_boundary_and_alternative() {
    let t = Tree::new();
    let sb = t.worker("analyzer");
    let request = DeriveRequest { allow_write: Some(vec!["/portfolio/reports".into()]), ..Default::default() };
    let e = sb.derive(&request).unwrap_err();
    assert!(e.is_denial());
    assert_eq!(
        e.to_string(),
        "SandboxPermissionEscalationError: cannot grant write access to '/portfolio/reports': the parent sandbox \
         can write only to: none. Request read access instead: allow_read: [/portfolio/reports]."
    );
    let request = DeriveRequest { readonly: Some(false), inherit: true, ..Default::default() };
    assert!(sb.derive(&request).unwrap_err().to_string().starts_with("SandboxPermissionEscalationError: cannot grant readonly: false"));
}

#[test]
fn approval_flags_are_exposed() {
    let t = Tree::with_policy(
        "version: 1\nsandbox:\n  paths:\n    p: { root: ./portfolio, mode: rw, read_approval: true, write_approval: true }\n",
    );
    let sb = t.sandbox();
    let rules = &sb.mounts()[0].rules;
    assert!(rules.read_approval && rules.write_approval);
}

#[test]
fn unknown_worker_is_an_error_not_the_program_sandbox() {
    let t = Tree::new();
    let e = warden_fs::Sandbox::open_for(&t.policy(), Some("ghost")).unwrap_err();
    assert!(e.is_usage());
    assert_eq!(e.to_string(), "unknown worker 'ghost'; the policy defines: analyzer, writer, drafter");
}
