//! Properties over random policies, derive requests and paths: a derived
//! child has exactly the access the derive rules give it (checked against an
//! oracle written from the rules, not from `plan_derive`), never more than its
//! parent, and every successful read or write lands inside the mount that served it.

use std::fs;
use std::path::Path;

use proptest::prelude::*;
use warden_fs::{DeriveRequest, Sandbox};

const SECRET: &str = "outside/secret.md";

/// Every file holds its own path relative to the tree, so a read proves where it landed.
fn build_tree(root: &Path) {
    for f in ["m1/a/x.md", "m1/a/b/y.txt", "m1/z.md", "m2/p/q.md", "m2/r.txt", SECRET] {
        let p = root.join(f);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, f).unwrap();
    }
    let link = |target: &str, at: &str| std::os::unix::fs::symlink(target, root.join(at)).unwrap();
    link("../outside", "m1/link_out");
    link("a", "m1/link_in");
    link("../outside/secret.md", "m1/file_link.md");
    link("../../m2", "m1/a/to_m2");
}

const PARTS: &[&str] = &[
    "m1", "m2", "a", "b", "x.md", "y.txt", "z.md", "link_out", "link_in", "file_link.md", "to_m2",
    "secret.md", "..", ".", "outside", "p", "q.md", "r.txt", "new.md",
];

/// Half free-form, half anchored at a mount so that accesses often succeed.
fn vpath() -> impl Strategy<Value = String> {
    let parts = || prop::collection::vec(prop::sample::select(PARTS), 0..5);
    prop_oneof![
        (any::<bool>(), parts()).prop_map(|(abs, p)| format!("{}{}", if abs { "/" } else { "" }, p.join("/"))),
        (prop::sample::select(&["/m1", "/m2", "m1:", "m2", " /m1"][..]), parts()).prop_map(|(m, p)| format!("{m}/{}", p.join("/"))),
    ]
}

/// Entries: mostly places that exist (folders, files, symlinks in and out),
/// sometimes anything.
fn entry() -> impl Strategy<Value = String> {
    const PLACES: &[&str] = &[
        "/m1", "/m1/a", "/m1/a/b", "m1:a/b", " /m2/p ", "/m2", "/m1/z.md", "/m2/r.txt", "/m1/a/b/y.txt",
        "/m1/link_in", "/m1/link_in/b", "/m1/link_out", "/m1/file_link.md", "/m1/a/to_m2", "/m1/a/../a",
        "/m1/new", "/", "/outside",
    ];
    let parts = prop::collection::vec(prop::sample::select(PARTS), 0..3);
    prop_oneof![
        4 => prop::sample::select(PLACES).prop_map(str::to_owned),
        1 => (prop::sample::select(&["/m1", "/m2", "m1:", "/m1/a", "/"][..]), parts).prop_map(|(m, p)| format!("{m}/{}", p.join("/"))),
    ]
}

fn mount_yaml(name: &str, rw: bool, suffix: u8) -> String {
    let suffixes = ["null", "[.md]", "[.txt]"][suffix as usize % 3];
    format!("    {name}: {{ root: ./{name}, mode: {}, suffixes: {suffixes} }}\n", if rw { "rw" } else { "ro" })
}

fn request() -> impl Strategy<Value = DeriveRequest> {
    let list = || prop::option::of(prop::collection::vec(entry(), 0..3));
    (list(), list(), prop::option::of(any::<bool>()), any::<bool>())
        .prop_map(|(allow_read, allow_write, readonly, inherit)| DeriveRequest { allow_read, allow_write, readonly, inherit })
}

/// The oracle's own reading of a virtual path: `/`-separated parts with `.`
/// and `..` folded, `m1:x` meaning `/m1/x`, whitespace around it dropped.
/// `None` when it climbs above `/`.
fn normalize(input: &str) -> Option<Vec<String>> {
    let input = input.trim();
    let body = match input.trim_start_matches('/').split_once(':') {
        Some((mount @ ("m1" | "m2"), rest)) => format!("{mount}/{rest}"),
        _ => input.to_owned(),
    };
    let mut parts: Vec<String> = Vec::new();
    for part in body.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name.to_owned()),
        }
    }
    Some(parts)
}

fn under(path: &[String], folder: &[String]) -> bool {
    path.starts_with(folder)
}

/// What the rules say a child may do, worked out from the request and the tree.
struct Oracle {
    reads: Vec<Vec<String>>,
    writes: Vec<Vec<String>>,
}

impl Oracle {
    /// `None` when the rules refuse the request.
    fn new(tree: &Path, rw: [bool; 2], req: &DeriveRequest) -> Option<Oracle> {
        let mount_rw = |parts: &[String]| match parts.first().map(String::as_str) {
            Some("m1") => Some(rw[0]),
            Some("m2") => Some(rw[1]),
            _ => None,
        };
        // An entry inside the parent's access of its kind, looked up on the host
        // with the standard library: a file means its folder; an entry that leads
        // out of its mount or does not exist is refused.
        let folder = |input: &String, write: bool| -> Option<Vec<String>> {
            let parts = normalize(input)?;
            let writable = mount_rw(&parts)?;
            if write && !writable {
                return None;
            }
            let host = tree.join(parts.join("/"));
            let real = host.canonicalize().ok()?;
            if !real.starts_with(tree.join(&parts[0])) {
                return None;
            }
            if real.is_dir() { Some(parts) } else { Some(parts[..parts.len() - 1].to_vec()) }
        };
        let all = |list: &Vec<String>, write| list.iter().map(|e| folder(e, write)).collect::<Option<Vec<_>>>();
        let both: Vec<Vec<String>> = vec![vec!["m1".into()], vec!["m2".into()]];
        let parent_writes: Vec<Vec<String>> = both.iter().filter(|m| mount_rw(m) == Some(true)).cloned().collect();
        if req.readonly == Some(true) && req.allow_write.as_ref().is_some_and(|w| !w.is_empty()) {
            return None;
        }
        if req.readonly == Some(false) && parent_writes.is_empty() {
            return None;
        }
        let (reads, writes) = match (&req.allow_read, &req.allow_write) {
            (None, None) if req.inherit => (both, if req.readonly == Some(true) { vec![] } else { parent_writes }),
            (None, None) => (vec![], vec![]),
            (None, Some(w)) => (all(w, false)?, all(w, true)?),
            (Some(r), None) => (all(r, false)?, vec![]),
            (Some(r), Some(w)) => (all(r, false)?, all(w, true)?),
        };
        Some(Oracle { reads, writes })
    }

    fn may_read(&self, parent: &Sandbox, path: &str) -> bool {
        parent.can_read(path) && normalize(path).is_some_and(|p| self.reads.iter().any(|r| under(&p, r)))
    }

    fn may_write(&self, parent: &Sandbox, path: &str) -> bool {
        parent.can_write(path) && normalize(path).is_some_and(|p| self.writes.iter().any(|w| under(&p, w)))
    }
}

/// A successful read returned a file from below one of the sandbox's mounts.
fn read_lands_inside(sb: &Sandbox, tree: &Path, path: &str) -> Result<(), TestCaseError> {
    if let Ok(bytes) = sb.read_bytes(path) {
        let text = String::from_utf8(bytes).unwrap();
        prop_assert_ne!(&text, SECRET);
        let inside = sb.mounts().iter().any(|m| {
            let rel = m.host_root.strip_prefix(tree).unwrap().to_str().unwrap().to_owned();
            // A symlink may lead to another place inside the same top-level mount.
            let top = rel.split('/').next().unwrap().to_owned();
            text.starts_with(&format!("{top}/"))
        });
        prop_assert!(inside, "{} read {} outside its mounts", path, text);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn child_has_exactly_the_access_the_rules_give_and_stays_in_its_mounts(
        rw1 in any::<bool>(), rw2 in any::<bool>(), s1 in 0u8..3, s2 in 0u8..3,
        req in request(),
        paths in prop::collection::vec(vpath(), 1..12),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().canonicalize().unwrap();
        build_tree(&tree);
        let yaml = format!("version: 1\nsandbox:\n  paths:\n{}{}", mount_yaml("m1", rw1, s1), mount_yaml("m2", rw2, s2));
        fs::write(tree.join("policy.yaml"), yaml).unwrap();
        let policy = warden_policy::load(&tree.join("policy.yaml")).unwrap();
        let parent = Sandbox::open(&policy).unwrap();
        let oracle = Oracle::new(&tree, [rw1, rw2], &req);
        let derived = parent.derive(&req);
        prop_assert_eq!(derived.is_ok(), oracle.is_some(), "derive gave {:?}", derived.as_ref().err().map(|e| e.to_string()));
        if let (Ok(child), Some(oracle)) = (derived, oracle) {
            for p in &paths {
                prop_assert_eq!(child.can_read(p), oracle.may_read(&parent, p), "read {}", p);
                prop_assert_eq!(child.can_write(p), oracle.may_write(&parent, p), "write {}", p);
                read_lands_inside(&child, &tree, p)?;
                read_lands_inside(&parent, &tree, p)?;
                // What the child writes holds the top folder it names, as the tree's
                // files do, so that a later read of it is judged like theirs.
                let top = normalize(p).and_then(|parts| parts.first().cloned()).unwrap_or_default();
                if child.write(p, format!("{top}/written by the child").as_bytes()).is_ok() {
                    prop_assert!(oracle.may_write(&parent, p), "child wrote {} that the rules do not allow", p);
                    // Independent of the code under test: the generated modes.
                    let rw = if normalize(p).unwrap()[0] == "m1" { rw1 } else { rw2 };
                    prop_assert!(rw, "{} was written in a read-only mount", p);
                }
            }
        }
        prop_assert_eq!(fs::read_to_string(tree.join(SECRET)).unwrap(), SECRET);
        prop_assert_eq!(fs::read_dir(tree.join("outside")).unwrap().count(), 1);
    }
}
