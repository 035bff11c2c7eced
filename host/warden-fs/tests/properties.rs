//! Properties over random policies, derive requests and paths:
//! a derived child never exceeds its parent, and every successful read or
//! write lands inside the mount that served it.

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
        (prop::sample::select(&["/m1", "/m2", "m1:", "m2"][..]), parts()).prop_map(|(m, p)| format!("{m}/{}", p.join("/"))),
    ]
}

fn mount_yaml(name: &str, rw: bool, suffix: u8) -> String {
    let suffixes = ["null", "[.md]", "[.txt]"][suffix as usize % 3];
    format!("    {name}: {{ root: ./{name}, mode: {}, suffixes: {suffixes} }}\n", if rw { "rw" } else { "ro" })
}

fn request() -> impl Strategy<Value = DeriveRequest> {
    (
        prop::collection::vec(vpath(), 0..3),
        prop::collection::vec(vpath(), 0..3),
        prop::option::of(any::<bool>()),
        any::<bool>(),
    )
        .prop_map(|(allow_read, allow_write, readonly, inherit)| DeriveRequest { allow_read, allow_write, readonly, inherit })
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
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn child_is_monotonic_and_every_access_stays_in_its_mount(
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
        if let Ok(child) = parent.derive(&req) {
            for p in &paths {
                if child.can_read(p) { prop_assert!(parent.can_read(p), "child reads {} but parent cannot", p); }
                if child.can_write(p) { prop_assert!(parent.can_write(p), "child writes {} but parent cannot", p); }
                read_lands_inside(&child, &tree, p)?;
                read_lands_inside(&parent, &tree, p)?;
                if child.write(p, b"child").is_ok() {
                    prop_assert!(parent.can_write(p), "child wrote {} that parent cannot write", p);
                    // An oracle independent of the code under test: the generated modes.
                    let mount = parent.resolve(p).unwrap().mount;
                    let rw = if mount.as_str().starts_with("/m1") { rw1 } else { rw2 };
                    prop_assert!(rw, "{} was written in read-only {}", p, mount);
                }
            }
        }
        prop_assert_eq!(fs::read_to_string(tree.join(SECRET)).unwrap(), SECRET);
        prop_assert_eq!(fs::read_dir(tree.join("outside")).unwrap().count(), 1);
    }
}
