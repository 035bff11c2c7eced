//! The macOS backend cannot run here, so its profiles are checked against
//! golden files. `WARDEN_BLESS=1` rewrites them after a deliberate change.

use std::path::{Path, PathBuf};

use warden_shell::{seatbelt, Bind, ExecPlan};

fn plan(network: bool, read_all: bool) -> ExecPlan {
    ExecPlan {
        binds: vec![
            Bind { host: "/Users/dev/project".into(), vpath: "/project".into(), writable: true },
            Bind { host: "/Users/dev/docs \"v2\"".into(), vpath: "/docs".into(), writable: false },
        ],
        read_all,
        protected: vec!["/Users/dev/project/.git/hooks".into(), "/Users/dev/project/.vscode".into()],
        denied: vec!["/Users/dev/project/.env".into()],
        network: if network { warden_policy::Network::Full } else { warden_policy::Network::Off },
        allow_unix_sockets: false,
        max_output_bytes: 1 << 20,
        default_cwd: "/Users/dev/project".into(),
    }
}

fn check(name: &str, plan: &ExecPlan) {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    let profile = seatbelt::profile(plan);
    if std::env::var_os("WARDEN_BLESS").is_some() {
        std::fs::write(&path, &profile).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} missing; run with WARDEN_BLESS=1", path.display()));
    assert_eq!(profile, golden, "{name} differs from its golden file");
}

#[test]
fn the_default_profile_denies_by_default_and_writes_only_to_rw_mounts() {
    let plan = plan(false, false);
    check("default.sb", &plan);
    let profile = seatbelt::profile(&plan);
    assert!(profile.starts_with("(version 1)\n(deny default)\n"));
    assert!(!profile.contains("network"));
    // Denials come after the allowances they narrow: in SBPL the last match wins.
    let allow_write = profile.find("(allow file-write*\n  (subpath \"/Users/dev/project\")").unwrap();
    let deny_hooks = profile.find("(subpath \"/Users/dev/project/.git/hooks\")").unwrap();
    assert!(allow_write < deny_hooks);
}

#[test]
fn the_network_profile_allows_the_network() {
    check("network.sb", &plan(true, false));
}

#[test]
fn read_all_allows_reading_everything() {
    check("read-all.sb", &plan(false, true));
}
