//! Policy validation: every rejection names its field, YAML errors carry line and column.

use std::fs;

use tempfile::TempDir;
use warden_policy::Layout;

struct Dir(TempDir);

impl Dir {
    fn new() -> Dir {
        let d = tempfile::tempdir().unwrap();
        for sub in ["portfolio/reports", "pipeline", "portfolio/drafts"] {
            fs::create_dir_all(d.path().join(sub)).unwrap();
        }
        fs::write(d.path().join("file.md"), "x").unwrap();
        Dir(d)
    }

    fn check(&self, yaml: &str) -> Result<warden_policy::Policy, String> {
        let file = self.0.path().join("policy.yaml");
        fs::write(&file, yaml).unwrap();
        warden_policy::load(&file).map_err(|e| {
            let text = e.to_string();
            text.strip_prefix(&format!("{}", file.display())).unwrap().to_owned()
        })
    }
}

const DESIGN: &str = "\
version: 1
sandbox:
  paths:
    portfolio: { root: ./portfolio, mode: rw, suffixes: [.md, .pdf], max_file_bytes: 10000000, write_approval: true }
    pipeline:  { root: ./pipeline,  mode: ro }
  network: false
  require_os_sandbox: false
workers:
  analyzer: { allow_read: [/portfolio/reports], readonly: true }
  writer:   { inherit: true, allow_write: [/portfolio/drafts] }
";

fn paths(mounts: &str) -> String {
    format!("version: 1\nsandbox:\n  paths:\n{mounts}")
}

#[test]
fn the_design_example_is_valid() {
    let d = Dir::new();
    let p = d.check(DESIGN).unwrap();
    assert_eq!(p.layout, Layout::Named);
    assert_eq!(p.mount_names(), ["portfolio", "pipeline"]);
    let rules = &p.mounts[0].rules;
    assert!(rules.writable && rules.write_approval && !rules.read_approval);
    assert_eq!(rules.max_file_bytes, Some(10_000_000));
    assert_eq!(p.mounts[0].host_root, d.0.path().canonicalize().unwrap().join("portfolio"));
    assert!(!p.mounts[1].rules.writable);
    assert_eq!(p.workers.keys().collect::<Vec<_>>(), ["analyzer", "writer"]);
}

#[test]
fn the_root_form_is_valid_and_read_only_by_default() {
    let d = Dir::new();
    let p = d.check("version: 1\nsandbox:\n  root: { root: ., readonly: false, suffixes: null, max_file_bytes: null }\n").unwrap();
    assert_eq!((p.layout, p.mounts[0].path.as_str(), p.mounts[0].rules.writable), (Layout::Root, "/", true));
    let p = d.check("version: 1\nsandbox:\n  root: { root: . }\n").unwrap();
    assert!(!p.mounts[0].rules.writable);
}

#[test]
fn both_paths_and_root_are_rejected() {
    let d = Dir::new();
    let e = d.check("version: 1\nsandbox:\n  root: { root: . }\n  paths:\n    a: { root: ./pipeline }\n").unwrap_err();
    assert_eq!(e, ":3:3: sandbox: give either `paths` (named mounts) or `root` (one root at /), not both");
}

#[test]
fn neither_paths_nor_root_is_rejected() {
    let e = Dir::new().check("version: 1\nsandbox:\n  network: true\n").unwrap_err();
    assert_eq!(e, ":3:3: sandbox: give `paths` (named mounts) or `root` (one root at /)");
}

#[test]
fn unknown_keys_are_rejected_with_line_and_column() {
    let d = Dir::new();
    let e = d.check(&paths("    pipeline: { root: ./pipeline, colour: red }\n")).unwrap_err();
    assert_eq!(e, ":4:35: unknown field `colour`, expected one of root, mode, readonly, suffixes, max_file_bytes, read_approval, write_approval");
    let e = d.check("version: 1\nsandbox:\n  root: { root: . }\nextra: 1\n").unwrap_err();
    assert_eq!(e, ":4:1: unknown field `extra`, expected one of version, sandbox, workers, mcp, tools, registries");
}

#[test]
fn bad_yaml_reports_line_and_column() {
    let e = Dir::new().check(&paths("    pipeline: { root: ./pipeline\n")).unwrap_err();
    assert_eq!(e, ":4:15: unclosed bracket '{'");
    let e = Dir::new().check(&paths("    pipeline: { root: ./pipeline, mode: rx }\n")).unwrap_err();
    assert_eq!(e, ":4:41: unknown variant `rx`, expected one of ro, rw");
}

#[test]
fn duplicate_mount_names_are_rejected() {
    let e = Dir::new().check(&paths("    a: { root: ./pipeline }\n    a: { root: ./portfolio }\n")).unwrap_err();
    assert_eq!(e, ":5:5: duplicate mapping key `a` is not allowed here");
}

#[test]
fn overlapping_roots_are_rejected() {
    let d = Dir::new();
    let e = d.check(&paths("    a: { root: ./portfolio }\n    b: { root: ./portfolio/reports }\n")).unwrap_err();
    assert_eq!(e, ":5:8: sandbox.paths.b.root: root of 'b' lies inside the root of 'a'; mounts must not overlap");
    let e = d.check(&paths("    a: { root: ./portfolio/reports }\n    b: { root: ./portfolio }\n")).unwrap_err();
    assert_eq!(e, ":5:8: sandbox.paths.b.root: root of 'b' contains the root of 'a'; mounts must not overlap");
    let e = d.check(&paths("    a: { root: ./pipeline }\n    b: { root: ./portfolio/../pipeline }\n")).unwrap_err();
    assert_eq!(e, ":5:8: sandbox.paths.b.root: root of 'b' is the same folder as the root of 'a'; mounts must not overlap");
}

#[test]
fn overlap_through_a_symlink_is_rejected() {
    let d = Dir::new();
    std::os::unix::fs::symlink(d.0.path().join("portfolio"), d.0.path().join("alias")).unwrap();
    let e = d.check(&paths("    a: { root: ./portfolio }\n    b: { root: ./alias/reports }\n")).unwrap_err();
    assert!(e.contains("root of 'b' lies inside the root of 'a'"), "{e}");
}

#[test]
fn missing_root_and_file_root_are_rejected() {
    let d = Dir::new();
    let e = d.check(&paths("    a: { root: ./nope }\n")).unwrap_err();
    assert_eq!(e, ":4:8: sandbox.paths.a.root: './nope' does not exist or cannot be reached (entity not found)");
    let e = d.check(&paths("    a: { root: ./file.md }\n")).unwrap_err();
    assert_eq!(e, ":4:8: sandbox.paths.a.root: './file.md' is not a folder");
}

#[test]
fn system_folders_are_rejected_as_written() {
    let d = Dir::new();
    for (root, sys) in [("/", "/"), ("/etc", "/etc"), ("/usr/lib", "/usr"), ("/var/lib", "/var"), ("/proc/self", "/proc"), ("/root", "/root"), ("/dev", "/dev"), ("/sys", "/sys"), ("/boot", "/boot"), ("/bin", "/bin"), ("/sbin", "/sbin")] {
        let e = d.check(&paths(&format!("    a: {{ root: {root} }}\n"))).unwrap_err();
        assert_eq!(e, format!(":4:8: sandbox.paths.a.root: '{root}' is the system folder {sys} or inside it; it cannot be mounted"));
    }
    let e = d.check(&paths("    a: { root: ./../../../../../../../../etc }\n")).unwrap_err();
    assert!(e.contains("is the system folder /etc or inside it"), "{e}");
}

#[test]
fn system_folders_are_rejected_after_resolving_symlinks() {
    let d = Dir::new();
    std::os::unix::fs::symlink("/etc", d.0.path().join("config")).unwrap();
    let e = d.check(&paths("    a: { root: ./config }\n")).unwrap_err();
    assert_eq!(e, ":4:8: sandbox.paths.a.root: './config' resolves through symlinks to /etc, in the system folder /etc; it cannot be mounted");
}

#[test]
fn places_that_expose_the_host_are_rejected_as_written() {
    let d = Dir::new();
    let sockets = "in /run, where services keep their sockets (a container engine's socket gives the host away)";
    for (root, why) in [
        ("/run", sockets.to_owned()),
        ("/run/user/1000", sockets.to_owned()),
        ("/tmp", "/tmp itself, which every user and program shares (mount a folder inside it)".to_owned()),
        ("/home", "/home itself, which every user and program shares (mount a folder inside it)".to_owned()),
        ("/var/tmp", "/var/tmp itself, which every user and program shares (mount a folder inside it)".to_owned()),
    ] {
        let e = d.check(&paths(&format!("    a: {{ root: {root} }}\n"))).unwrap_err();
        assert_eq!(e, format!(":4:8: sandbox.paths.a.root: '{root}' is {why}; it cannot be mounted"));
    }
    // /var/run is /var's, a system folder, before it is /run's.
    let e = d.check(&paths("    a: { root: /var/run }\n")).unwrap_err();
    assert_eq!(e, ":4:8: sandbox.paths.a.root: '/var/run' is the system folder /var or inside it; it cannot be mounted");
    let e = d.check(&format!("{}  dynamic: {{ within: [/run] }}\n", paths(MOUNTS))).unwrap_err();
    assert_eq!(e, format!(":5:12: sandbox.dynamic.within: '/run' is {sockets}; it cannot be mounted"));
}

#[test]
fn places_that_expose_the_host_are_rejected_after_resolving_symlinks() {
    let d = Dir::new();
    std::os::unix::fs::symlink("/run", d.0.path().join("sockets")).unwrap();
    std::os::unix::fs::symlink("/tmp", d.0.path().join("scratch")).unwrap();
    let e = d.check(&paths("    a: { root: ./sockets }\n")).unwrap_err();
    assert_eq!(
        e,
        ":4:8: sandbox.paths.a.root: './sockets' resolves through symlinks to /run, which is in /run, where services keep their sockets \
         (a container engine's socket gives the host away); it cannot be mounted"
    );
    let e = d.check(&paths("    a: { root: ./scratch }\n")).unwrap_err();
    assert_eq!(
        e,
        ":4:8: sandbox.paths.a.root: './scratch' resolves through symlinks to /tmp, which is /tmp itself, which every user and program \
         shares (mount a folder inside it); it cannot be mounted"
    );
}

#[test]
fn a_dynamic_ceiling_never_offers_a_place_that_exposes_the_host() {
    let ceiling = warden_policy::Dynamic { within: Some(vec![std::path::PathBuf::from("/tmp")]) };
    // Widening stops below /tmp itself.
    assert_eq!(ceiling.grantable(std::path::Path::new("/tmp/a/b")), [std::path::PathBuf::from("/tmp/a/b"), "/tmp/a".into()]);
    let any = warden_policy::Dynamic { within: None };
    assert!(any.grantable(std::path::Path::new("/run/user/1000")).is_empty());
    assert!(any.grantable(&warden_policy::warden_folder()).is_empty());
}

#[test]
fn a_containers_user_is_root_said_so_or_a_uid() {
    let d = Dir::new();
    let with = |user: &str| {
        d.check(&format!(
            "{}  shell:\n    backend: container\n    container: {{ image: busybox, user: {user} }}\n",
            paths(MOUNTS)
        ))
    };
    let user = |user: &str| with(user).unwrap().shell.container.unwrap().user;
    assert_eq!(user("root"), Some(warden_policy::ContainerUser::Root));
    assert_eq!(user("\"1000\""), Some(warden_policy::ContainerUser::Id { uid: 1000, gid: 1000 }));
    assert_eq!(user("\"1000:50\""), Some(warden_policy::ContainerUser::Id { uid: 1000, gid: 50 }));
    assert_eq!(with("\"0\"").unwrap_err(), ":6:5: sandbox.shell.container.user: write `root` for uid 0, so that running as root is never an accident");
    assert_eq!(with("admin").unwrap_err(), ":6:5: sandbox.shell.container.user: 'admin' is not a user; write root, UID or UID:GID");
}

#[test]
fn var_tmp_is_allowed() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = d.path().join("p.yaml");
    fs::write(&file, "version: 1\nsandbox:\n  root: { root: . }\n").unwrap();
    assert!(warden_policy::load(&file).is_ok());
}

#[test]
fn home_relative_root_is_rejected() {
    let e = Dir::new().check(&paths("    a: { root: ~/x }\n")).unwrap_err();
    assert_eq!(e, ":4:8: sandbox.paths.a.root: '~/x': '~' is not expanded; write the full path or one relative to the policy file");
}

#[test]
fn contradictory_mode_and_bad_suffix_are_rejected() {
    let d = Dir::new();
    let e = d.check(&paths("    a: { root: ./pipeline, mode: rw, readonly: true }\n")).unwrap_err();
    assert_eq!(e, ":4:8: sandbox.paths.a.readonly: contradicts `mode`; give only one of them");
    let e = d.check(&paths("    a: { root: ./pipeline, suffixes: [md] }\n")).unwrap_err();
    assert_eq!(e, ":4:8: sandbox.paths.a.suffixes: 'md' is not a suffix; write it with a leading dot, like '.md'");
}

#[test]
fn bad_mount_name_and_version_are_rejected() {
    let d = Dir::new();
    let e = d.check(&paths("    \"a/b\": { root: ./pipeline }\n")).unwrap_err();
    assert_eq!(e, ":4:12: sandbox.paths.a/b: 'a/b' is not a valid mount name (use letters, digits, '.', '_' and '-')");
    let e = d.check("version: 2\nsandbox:\n  root: { root: . }\n").unwrap_err();
    assert_eq!(e, ": version: unsupported version 2; this Warden reads version 1");
}

#[test]
fn worker_naming_an_unknown_mount_is_rejected() {
    let d = Dir::new();
    let yaml = format!("{}workers:\n  w: {{ allow_read: [/nowhere/x] }}\n", paths("    pipeline: { root: ./pipeline }\n"));
    assert_eq!(
        d.check(&yaml).unwrap_err(),
        ":6:6: workers.w.allow_read[0]: SandboxPermissionEscalationError: cannot grant read access to '/nowhere/x': the parent sandbox can read only: /pipeline. Request a path inside /pipeline."
    );
}

#[test]
fn worker_asking_for_more_than_the_program_is_rejected() {
    let d = Dir::new();
    let base = paths("    pipeline: { root: ./pipeline }\n");
    let e = d.check(&format!("{base}workers:\n  w: {{ allow_write: [/pipeline] }}\n")).unwrap_err();
    assert!(e.starts_with(":6:6: workers.w.allow_write[0]: SandboxPermissionEscalationError: cannot grant write access to '/pipeline'"), "{e}");
    let e = d.check(&format!("{base}workers:\n  w: {{ inherit: true, readonly: false }}\n")).unwrap_err();
    assert!(e.starts_with(":6:6: workers.w.readonly: SandboxPermissionEscalationError: cannot grant readonly: false"), "{e}");
    let e = d.check(&format!("{base}workers:\n  w: {{ allow_read: [/pipeline], nope: 1 }}\n")).unwrap_err();
    assert!(e.contains("unknown field `nope`"), "{e}");
}

#[test]
fn yaml_alias_bomb_is_refused_without_expanding() {
    let mut yaml = String::from("version: 1\nsandbox:\n  root: { root: . }\nworkers:\n  w0: { allow_read: &a0 [l, l, l, l, l, l, l, l, l] }\n");
    for i in 1..12 {
        yaml.push_str(&format!("  w{i}: {{ allow_read: &a{i} [{}] }}\n", vec![format!("*a{}", i - 1); 9].join(", ")));
    }
    let e = Dir::new().check(&yaml).unwrap_err();
    assert!(e.starts_with(":6:"), "{e}");
}

#[test]
fn schema_describes_the_file() {
    let schema: serde_json::Value = serde_json::from_str(&warden_policy::json_schema()).unwrap();
    assert_eq!(schema["title"], "PolicyDocument");
    assert_eq!(schema["required"], serde_json::json!(["version", "sandbox"]));
    assert_eq!(schema["additionalProperties"], false);
    let mount = &schema["$defs"]["MountSpec"];
    assert_eq!(mount["additionalProperties"], false);
    for key in ["root", "mode", "readonly", "suffixes", "max_file_bytes", "read_approval", "write_approval"] {
        assert!(mount["properties"].get(key).is_some(), "{key}");
    }
}

const MOUNTS: &str = "    pipeline: { root: ./pipeline, mode: ro }\n";

#[test]
fn dynamic_within_resolves_ceilings_against_the_policy_folder() {
    let d = Dir::new();
    let p = d.check(&format!("{}  dynamic: {{ within: [./portfolio] }}\n  audit: logs/audit.jsonl\n", paths(MOUNTS))).unwrap();
    let root = d.0.path().canonicalize().unwrap();
    assert_eq!(p.dynamic.unwrap().within, Some(vec![root.join("portfolio")]));
    assert_eq!(p.audit.unwrap(), d.0.path().join("logs/audit.jsonl"));
}

#[test]
fn dynamic_true_has_no_ceiling_and_false_is_off() {
    let d = Dir::new();
    assert_eq!(d.check(&format!("{}  dynamic: true\n", paths(MOUNTS))).unwrap().dynamic.unwrap().within, None);
    assert!(d.check(&format!("{}  dynamic: false\n", paths(MOUNTS))).unwrap().dynamic.is_none());
}

#[test]
fn dynamic_ceiling_in_a_system_folder_is_rejected() {
    let d = Dir::new();
    let e = d.check(&format!("{}  dynamic: {{ within: [/etc] }}\n", paths(MOUNTS))).unwrap_err();
    assert_eq!(e, ":5:12: sandbox.dynamic.within: '/etc' is the system folder /etc or inside it; it cannot be mounted");
}

#[test]
fn dynamic_with_an_empty_ceiling_list_is_rejected() {
    let d = Dir::new();
    let e = d.check(&format!("{}  dynamic: {{ within: [] }}\n", paths(MOUNTS))).unwrap_err();
    assert_eq!(e, ":5:12: sandbox.dynamic.within: is empty; give at least one folder, or write `dynamic: true`");
}

#[test]
fn dynamic_needs_named_mounts() {
    let d = Dir::new();
    let e = d.check("version: 1\nsandbox:\n  root: { root: ./pipeline }\n  dynamic: true\n").unwrap_err();
    assert_eq!(e, ":4:12: sandbox.dynamic: needs named mounts (`paths`): with one root at /, every path is already inside it");
}

#[test]
fn worker_dynamic_true_takes_the_programs_ceiling() {
    let d = Dir::new();
    let yaml = format!("{}  dynamic: {{ within: [./portfolio] }}\nworkers:\n  w: {{ dynamic: true }}\n  plain: {{}}\n", paths(MOUNTS));
    let p = d.check(&yaml).unwrap();
    assert_eq!(p.dynamic_for(Some("w")), p.dynamic.as_ref());
    assert_eq!(p.dynamic_for(Some("plain")), None);
}

#[test]
fn worker_dynamic_wider_than_the_programs_is_an_escalation() {
    let d = Dir::new();
    let root = d.0.path().canonicalize().unwrap();
    let yaml = format!("{}  dynamic: {{ within: [./portfolio/reports] }}\nworkers:\n  w: {{ dynamic: {{ within: [./portfolio] }} }}\n", paths(MOUNTS));
    let e = d.check(&yaml).unwrap_err();
    assert_eq!(
        e,
        format!(
            ":7:6: workers.w.dynamic: '{}/portfolio' is outside the program's dynamic ceiling (folders within {}/portfolio/reports); a worker can only lose rights",
            root.display(),
            root.display()
        )
    );
}

#[test]
fn worker_dynamic_without_the_programs_is_an_escalation() {
    let d = Dir::new();
    let e = d.check(&format!("{}workers:\n  w: {{ dynamic: true }}\n", paths(MOUNTS))).unwrap_err();
    assert_eq!(e, ":6:6: workers.w.dynamic: the program's sandbox has no `dynamic`, and a worker cannot have more than it");
}

#[test]
fn tools_are_checked_naming_the_field() {
    let d = Dir::new();
    let base = "version: 1\nsandbox:\n  paths:\n    pipeline: { root: ./pipeline }\n  limits: { timeout: 10s }\nworkers:\n  w: { allow_read: [/pipeline] }\n";
    let p = d.check(&format!("{base}tools:\n  notes: {{ component: ./file.md, worker: w, limits: {{ timeout: 2s }} }}\n")).unwrap();
    let tool = &p.tools["notes"];
    assert_eq!((tool.component.to_string(), tool.worker.as_deref()), (d.0.path().join("file.md").display().to_string(), Some("w")));
    assert_eq!(tool.limits.timeout, Some(std::time::Duration::from_secs(2)));
    let cases = [
        ("  x: { component: ./nope.wasm }\n", ":9:6: tools.x.component: './nope.wasm' is not a file"),
        ("  x: { component: ./file.md, worker: ghost }\n", ":9:6: tools.x.worker: unknown worker 'ghost'; the policy defines: w"),
        ("  x: { component: ./file.md, digest: sha256:abc }\n", ":9:6: tools.x.digest: 'sha256:abc' is not a digest; write blake3: and 64 hex digits"),
        ("  a.b: { component: ./file.md }\n", ":9:8: tools.a.b: 'a.b' is not a usable key: use letters, digits, '_' and '-', without '__'"),
        ("  x: { component: ./file.md, limits: { timeout: soon } }\n", ":9:6: tools.x.limits.timeout: 'soon' is not a duration; write e.g. 500ms, 10s or 2m"),
    ];
    for (tools, expected) in cases {
        assert_eq!(d.check(&format!("{base}tools:\n{tools}")).unwrap_err(), expected, "{tools}");
    }
}

fn container(spec: &str) -> String {
    format!("{}  shell:\n{spec}", paths("    portfolio: { root: ./portfolio, mode: rw }\n"))
}

#[test]
fn a_container_backend_is_validated() {
    let d = Dir::new();
    let p = d
        .check(&container("    backend: container\n    container: { image: \"localhost/x:1\", memory: 512MiB, cpus: 1.5, engine: podman, workspace_root: . }\n"))
        .unwrap();
    let c = p.shell.container.unwrap();
    assert_eq!((c.image.as_str(), c.memory_bytes, c.nano_cpus, c.engine), ("localhost/x:1", Some(512 << 20), Some(1_500_000_000), warden_policy::EngineChoice::Podman));
    assert_eq!(c.workspace_root.as_deref(), Some(d.0.path()));
    assert!(d.check(&container("    backend: os\n")).unwrap().shell.container.is_none());
}

#[test]
fn container_settings_that_cannot_work_are_refused_naming_the_field() {
    let d = Dir::new();
    let cases = [
        ("    backend: container\n", "sandbox.shell.container", "`backend: container` needs a `container:` section with an image"),
        ("    container: { image: x }\n", "sandbox.shell.container", "container settings need `backend: container`"),
        ("    backend: container\n    container: { memory: 1GiB }\n", "sandbox.shell.container.image", "'' is not an image name"),
        ("    backend: container\n    container: { image: \"a b\" }\n", "sandbox.shell.container.image", "'a b' is not an image name"),
        ("    backend: container\n    container: { image: x, memory: 1MiB }\n", "sandbox.shell.container.memory", "engines need at least 6MiB"),
        ("    backend: container\n    container: { image: x, cpus: 0 }\n", "sandbox.shell.container.cpus", "0 is not a number of CPUs between 0.01 and 1024"),
    ];
    for (spec, field, message) in cases {
        let err = d.check(&container(spec)).unwrap_err();
        assert!(err.contains(field) && err.contains(message), "{spec}: {err}");
    }
    let err = d.check(&container("    backend: vm\n")).unwrap_err();
    assert_eq!(err, ":6:14: unknown variant `vm`, expected one of auto, os, bwrap, landlock, container");
    let err = d.check(&container("    backend: container\n    container: { image: x, engine: lxc }\n")).unwrap_err();
    assert!(err.starts_with(":7:") && err.contains("unknown variant `lxc`, expected one of auto, podman, docker"), "{err}");
}

const NET: &str = "version: 1\nsandbox:\n  paths:\n    pipeline: { root: ./pipeline }\n";

#[test]
fn a_network_allowlist_is_read_and_normalized() {
    let p = Dir::new()
        .check(&format!("{NET}  network:\n    allow: [\"API.example.com:443\", \"*.pypi.org:443\", \"10.0.0.0/8:5432\", \"[::1]:80\"]\n"))
        .unwrap();
    assert_eq!(p.network.describe(), "allow api.example.com:443, *.pypi.org:443, 10.0.0.0/8:5432, [::1]:80");
    let p = Dir::new().check(&format!("{NET}  network: {{ allow: [] }}\n")).unwrap();
    assert_eq!(p.network.describe(), "allow none");
    let p = Dir::new().check(&format!("{NET}  network: true\n")).unwrap();
    assert_eq!(p.network.describe(), "on");
}

#[test]
fn a_bad_network_entry_names_the_entry_with_line_and_column() {
    let e = Dir::new().check(&format!("{NET}  network:\n    allow: [\"api.example.com:443\", \"api.example.com\"]\n")).unwrap_err();
    assert_eq!(
        e,
        ":6:36: sandbox.network: allow[1]: 'api.example.com' is not a usable entry: the port is missing: write HOST:PORT"
    );
    let e = Dir::new().check(&format!("{NET}  network: {{ allow: [\"a\\0b.com:1\"] }}\n")).unwrap_err();
    assert!(e.starts_with(":5:22: sandbox.network: allow[0]: 'a\\0b.com:1' is not a usable entry"), "{e}");
}

#[test]
fn a_worker_cannot_widen_the_programs_network() {
    let base = format!("{NET}  network: {{ allow: [\"api.example.com:443\"] }}\nworkers:\n  w:\n    inherit: true\n");
    let p = Dir::new().check(&format!("{base}    network: {{ allow: [] }}\n")).unwrap();
    assert_eq!(p.network_for(Some("w")).describe(), "allow none");
    assert_eq!(Dir::new().check(&base).unwrap().network_for(Some("w")).describe(), "allow api.example.com:443");
    let e = Dir::new().check(&format!("{base}    network: {{ allow: [\"evil.example:443\"] }}\n")).unwrap_err();
    assert_eq!(
        e,
        ":9:14: workers.w.network: SandboxPermissionEscalationError: cannot grant network access to 'evil.example:443': \
         the parent sandbox allows only: api.example.com:443. Ask for pairs within those, or leave `network` out to inherit them."
    );
    let e = Dir::new().check(&format!("{base}    network: true\n")).unwrap_err();
    assert!(e.contains("cannot grant all network access"), "{e}");
}
