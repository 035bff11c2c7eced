//! `warden exec` as a contract: exit statuses, the fallback both ways, and
//! the sandbox run by an unprivileged user.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use super::Fixture;

struct Out {
    status: i32,
    stdout: String,
    stderr: String,
}

fn exec(f: &Fixture, env: &[(&str, &str)], args: &[&str]) -> Out {
    let policy = f.path("policy.yaml");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.args(["exec", "--policy", policy.to_str().unwrap()]).args(args).envs(env.iter().copied());
    let out = cmd.output().unwrap();
    Out {
        status: out.status.code().unwrap(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn exec_exits_with_the_commands_code() {
    let f = Fixture::new();
    let r = exec(&f, &[], &["--", "/bin/sh", "-c", "echo out; echo err >&2; exit 7"]);
    assert_eq!((r.status, r.stdout.as_str(), r.stderr.as_str()), (7, "out\n", "err\n"));
}

#[test]
fn exec_runs_in_a_virtual_working_folder() {
    let f = Fixture::new();
    let r = exec(&f, &[], &["--cwd", "/portfolio/reports", "--", "/bin/ls"]);
    assert_eq!((r.status, r.stdout.as_str()), (0, "q3.md\n"));
    let r = exec(&f, &[], &["--cwd", "/nowhere", "--", "/bin/true"]);
    assert_eq!(r.status, 2);
    assert!(r.stderr.starts_with("warden: --cwd /nowhere: "), "{}", r.stderr);
}

#[test]
fn exec_timeout_exits_124_and_kills_the_command() {
    let f = Fixture::new();
    let r = exec(&f, &[], &["--timeout", "300ms", "--", "/bin/sh", "-c", "sleep 1; echo late > late.md"]);
    assert_eq!(r.status, 124);
    assert!(r.stderr.contains("[warden: timed out after 300 ms; the command and its children were killed]"), "{}", r.stderr);
    std::thread::sleep(std::time::Duration::from_millis(1200));
    assert!(!f.path("portfolio/late.md").exists());
}

#[test]
fn without_an_os_sandbox_a_policy_that_requires_one_refuses() {
    let f = Fixture::new();
    let policy = std::fs::read_to_string(f.path("policy.yaml")).unwrap().replace("sandbox:\n", "sandbox:\n  require_os_sandbox: true\n");
    f.file("policy.yaml", &policy);
    let r = exec(&f, &[("WARDEN_BWRAP", "/nonexistent/bwrap"), ("WARDEN_LANDLOCK_ABI", "0")], &["--", "/bin/sh", "-c", "echo ran > ran.md"]);
    assert_eq!(r.status, 2);
    assert_eq!(
        r.stderr,
        "warden: no OS sandbox is available (cannot start /nonexistent/bwrap: No such file or directory (os error 2); \
         this kernel has no Landlock), and the policy sets require_os_sandbox: true; the command was not run\n"
    );
    assert!(!f.path("portfolio/ran.md").exists());
}

#[test]
fn without_an_os_sandbox_the_command_runs_with_a_warning_that_says_so() {
    let f = Fixture::new();
    let r = exec(&f, &[("WARDEN_BWRAP", "/nonexistent/bwrap"), ("WARDEN_LANDLOCK_ABI", "0")], &["--", "/bin/sh", "-c", "echo ran > ran.md"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(f.path("portfolio/ran.md").exists());
    assert!(
        r.stderr.ends_with(
            "[warden: warning: this command ran WITHOUT an OS sandbox: cannot start /nonexistent/bwrap: No such file or directory (os error 2); \
             this kernel has no Landlock]\n"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn without_bubblewrap_auto_takes_landlock_and_says_so() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.path("portfolio/drafts")).unwrap();
    let script = "echo ran > drafts/ran.md; echo x > ../pipeline/x.md";
    let r = exec(&f, &[("WARDEN_BWRAP", "/nonexistent/bwrap")], &["--", "/bin/sh", "-c", script]);
    assert!(f.path("portfolio/drafts/ran.md").exists(), "{}", r.stderr);
    assert!(!f.path("pipeline/x.md").exists());
    assert!(!r.stderr.contains("WITHOUT an OS sandbox") && r.stderr.contains("Permission denied"), "{}", r.stderr);
    // `warden check` speaks of shell commands for a policy with a `shell:` section.
    let with_shell = std::fs::read_to_string(f.path("policy.yaml")).unwrap().replace("sandbox:\n", "sandbox:\n  shell: {}\n");
    f.file("shell.yaml", &with_shell);
    let policy = f.path("shell.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_warden")).args(["check", policy.to_str().unwrap()]).env("WARDEN_BWRAP", "/nonexistent/bwrap").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("shell commands: Landlock ABI 7 (bubblewrap cannot start here: cannot start /nonexistent/bwrap"), "{stdout}");
}

#[test]
fn a_descriptor_warden_was_started_with_never_reaches_the_command() {
    // The shell (or agent) that starts Warden leaves descriptor 7 open on a
    // file outside every mount: under bubblewrap and under Landlock, the
    // command cannot read the file through it.
    let f = Fixture::new();
    let outside = f.path("outside.txt");
    std::fs::write(&outside, "outside every mount\n").unwrap();
    let policy = f.path("policy.yaml");
    for env in [&[][..], &[("WARDEN_BWRAP", "/nonexistent/bwrap")][..]] {
        let script = format!("exec 7<'{}'; exec \"$0\" exec --policy '{}' -- /bin/cat /proc/self/fd/7", outside.display(), policy.display());
        let out = Command::new("/bin/sh").args(["-c", &script, env!("CARGO_BIN_EXE_warden")]).envs(env.iter().copied()).output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!stdout.contains("outside every mount"), "{env:?}: the command read the file: {stdout}");
        assert_eq!(out.status.code(), Some(1), "{env:?}: {stderr}");
        assert!(stderr.contains("/bin/cat: /proc/self/fd/7: No such file or directory\n"), "{env:?}: {stderr}");
        assert!(!stderr.contains("WITHOUT an OS sandbox"), "{env:?}: {stderr}");
    }
}

#[test]
fn a_command_other_than_exec_is_still_handed_the_descriptors_it_was_started_with() {
    // `warden` keeps what it was given from commands it runs, but `warden-full`,
    // which it starts for every other command, gets them: `warden check <(...)`.
    let f = Fixture::new();
    f.file("absolute.yaml", &format!("version: 1\nsandbox:\n  paths:\n    portfolio: {{ root: {}, mode: rw }}\n", f.path("portfolio").display()));
    let script = format!("exec 7<'{}'; exec \"$0\" check /dev/fd/7", f.path("absolute.yaml").display());
    let out = Command::new("/bin/sh").args(["-c", &script, env!("CARGO_BIN_EXE_warden")]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.starts_with("/dev/fd/7: valid\n"), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
}

/// A bwrap that exists but cannot set up a sandbox, as on a system without user namespaces.
fn broken_bwrap(f: &Fixture) -> String {
    let path = f.path("broken-bwrap");
    std::fs::write(&path, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_bwrap_that_fails_at_setup_is_found_out_by_the_first_command() {
    let f = Fixture::new();
    let bwrap = broken_bwrap(&f);
    let r = exec(&f, &[("WARDEN_BWRAP", &bwrap), ("WARDEN_LANDLOCK_ABI", "0")], &["--", "/bin/sh", "-c", "echo ran > ran.md"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(f.path("portfolio/ran.md").exists());
    assert!(
        r.stderr.ends_with("[warden: warning: this command ran WITHOUT an OS sandbox: bwrap: No permissions to create new namespace; this kernel has no Landlock]\n"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(f.path("portfolio/ran.md")).unwrap();
    let policy = std::fs::read_to_string(f.path("policy.yaml")).unwrap().replace("sandbox:\n", "sandbox:\n  require_os_sandbox: true\n");
    f.file("policy.yaml", &policy);
    let r = exec(&f, &[("WARDEN_BWRAP", &bwrap), ("WARDEN_LANDLOCK_ABI", "0")], &["--", "/bin/sh", "-c", "echo ran > ran.md"]);
    assert_eq!(r.status, 2);
    assert_eq!(
        r.stderr,
        "warden: no OS sandbox is available (bwrap: No permissions to create new namespace; this kernel has no Landlock), and the policy sets \
         require_os_sandbox: true; the command was not run\n"
    );
    assert!(!f.path("portfolio/ran.md").exists());
}

#[test]
fn an_unprivileged_user_gets_the_same_sandbox() {
    let f = Fixture::new();
    for dir in ["", "portfolio", "portfolio/reports", "pipeline", "outside"] {
        std::fs::set_permissions(f.path(dir), std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let policy = f.path("policy.yaml");
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_warden"))
        .args(["exec", "--policy", policy.to_str().unwrap(), "--", "/bin/sh", "-c"])
        .arg(format!(
            "id -u; grep -E 'CapEff|NoNewPrivs' /proc/self/status; su -c id root </dev/null; echo x > made.md; cat {}; echo y > {}",
            f.path("outside/secret.md").display(),
            f.path("outside/new.md").display()
        ))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.starts_with("65534\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\n"), "{stdout}\n{stderr}");
    assert!(f.path("portfolio/made.md").exists(), "{stderr}");
    assert!(!stdout.contains("uid=0"), "su became root:\n{stdout}");
    assert!(!stdout.contains("SECRET") && !f.path("outside/new.md").exists(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("WITHOUT an OS sandbox"), "{stderr}");
}

#[test]
fn exec_gets_the_grants_as_binds_and_nothing_else() {
    let f = Fixture::new();
    f.file("extra/in.txt", "granted folder");
    f.file(
        "policy.yaml",
        "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw, write_approval: true }\n    pipeline: { root: ./pipeline, read_approval: true }\n  dynamic: { within: [./extra] }\n",
    );
    let root = f.dir.path().canonicalize().unwrap();
    let (portfolio, pipeline, extra) = (root.join("portfolio"), root.join("pipeline"), root.join("extra"));
    let script = format!(
        "echo x > {}/new.md; cat {}/status.md; cat {}/in.txt; exit 0",
        portfolio.display(),
        pipeline.display(),
        extra.display()
    );
    // Nobody to ask: the portfolio is read-only, the pipeline and the extra folder absent.
    let r = exec(&f, &[], &["--", "/bin/sh", "-c", &script]);
    assert_eq!(r.stdout, "");
    assert!(!portfolio.join("new.md").exists());
    let approve = format!("read:{}", extra.display());
    let r = exec(&f, &[], &["--approve", "write:/portfolio", "--approve", "read:/pipeline", "--approve", &approve, "--", "/bin/sh", "-c", &script]);
    assert_eq!((r.status, r.stdout.as_str()), (0, "okgranted folder"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(portfolio.join("new.md")).unwrap(), "x\n");
}

#[test]
fn a_backend_asked_for_by_name_is_that_one_or_nothing_runs() {
    let f = Fixture::new();
    let policy = std::fs::read_to_string(f.path("policy.yaml")).unwrap().replace("sandbox:\n", "sandbox:\n  shell: { backend: landlock }\n");
    f.file("policy.yaml", &policy);
    let r = exec(&f, &[("WARDEN_LANDLOCK_ABI", "0")], &["--", "/bin/sh", "-c", "echo ran > ran.md"]);
    assert_eq!(r.status, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "warden: the policy asks for the Landlock sandbox (shell.backend), which is not available here (this kernel has no Landlock); the command was not run\n"
    );
    assert!(!f.path("portfolio/ran.md").exists());
    // `warden check` says so too, rather than that commands would run without a sandbox.
    let check = |backend: &str, env: [(&str, &str); 2]| {
        f.file("named.yaml", &policy.replace("backend: landlock", backend));
        let out = Command::new(env!("CARGO_BIN_EXE_warden")).args(["check", f.path("named.yaml").to_str().unwrap()]).envs(env).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().find(|line| line.starts_with("shell commands:")).unwrap_or_default().to_owned()
    };
    let refused = "commands are refused (the policy asks for this sandbox by name in shell.backend)";
    let landlock = check("backend: landlock", [("WARDEN_LANDLOCK_ABI", "0"), ("WARDEN_BWRAP", "/usr/bin/bwrap")]);
    assert_eq!(landlock, format!("shell commands: NONE (this kernel has no Landlock): {refused}"));
    let bwrap = check("backend: bwrap", [("WARDEN_LANDLOCK_ABI", "0"), ("WARDEN_BWRAP", "/nonexistent/bwrap")]);
    assert!(bwrap.starts_with("shell commands: NONE (bubblewrap cannot start here: ") && bwrap.ends_with(refused), "{bwrap}");
    let auto = check("backend: auto", [("WARDEN_LANDLOCK_ABI", "0"), ("WARDEN_BWRAP", "/nonexistent/bwrap")]);
    assert!(auto.ends_with("commands run WITHOUT an OS sandbox (refused under require_os_sandbox)"), "{auto}");
}

/// `warden exec` under Landlock of a command that writes `drafts/late.md`
/// after 2 s, ended 700 ms in by `end`; whether the file was written after.
fn late_write_after(in_own_group: bool, end: impl FnOnce(&mut std::process::Child)) -> bool {
    use std::os::unix::process::CommandExt;
    let f = Fixture::new();
    std::fs::create_dir_all(f.path("portfolio/drafts")).unwrap();
    let policy = std::fs::read_to_string(f.path("policy.yaml")).unwrap().replace("sandbox:\n", "sandbox:\n  shell: { backend: landlock }\n");
    f.file("policy.yaml", &policy);
    let mut command = Command::new(env!("CARGO_BIN_EXE_warden"));
    command
        .args(["exec", "--policy", f.path("policy.yaml").to_str().unwrap(), "--", "/bin/sh", "-c", "sleep 2; echo late > drafts/late.md"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if in_own_group {
        command.process_group(0);
    }
    let mut warden = command.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    end(&mut warden);
    warden.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    f.path("portfolio/drafts/late.md").exists()
}

#[test]
fn under_landlock_a_command_ends_when_warden_is_killed() {
    // No PID namespace ends it: Warden's reaper, outside the command's domain, does.
    assert!(!late_write_after(false, |warden| warden.kill().unwrap()), "the command outlived Warden");
}

#[test]
fn under_landlock_ctrl_c_to_wardens_group_ends_the_command_too() {
    // The terminal signals Warden's whole process group; the reaper is not in it.
    let ctrl_c = |warden: &mut std::process::Child| {
        rustix::process::kill_process_group(rustix::process::Pid::from_child(warden), rustix::process::Signal::INT).unwrap();
    };
    assert!(!late_write_after(true, ctrl_c), "the command outlived Warden's Ctrl-C");
}

#[test]
fn under_landlock_a_killed_wardens_temporary_folder_is_removed_by_a_later_command() {
    let f = Fixture::new();
    let policy = std::fs::read_to_string(f.path("policy.yaml")).unwrap().replace("sandbox:\n", "sandbox:\n  shell: { backend: landlock }\n");
    f.file("policy.yaml", &policy);
    // A private folder of this test's own, so that no other test's command sweeps or adds there.
    let runtime = tempfile::tempdir().unwrap();
    let own = [("XDG_RUNTIME_DIR", runtime.path().to_str().unwrap())];
    let mut warden = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["exec", "--policy", f.path("policy.yaml").to_str().unwrap(), "--", "/bin/sh", "-c"])
        .arg("head -c 1048576 /dev/zero > \"$TMPDIR/part\" && mv \"$TMPDIR/part\" \"$TMPDIR/left\"; sleep 30")
        .envs(own)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let left = || std::fs::read_dir(runtime.path().join("warden")).ok()?.flatten().map(|e| e.path().join("left")).find(|left| left.exists());
    let started = std::time::Instant::now();
    let left = loop {
        match left() {
            Some(left) => break left,
            None if started.elapsed() < std::time::Duration::from_secs(20) => std::thread::sleep(std::time::Duration::from_millis(50)),
            None => panic!("the command wrote no file in its TMPDIR"),
        }
    };
    let tmp = left.parent().unwrap().to_owned();
    assert!(tmp.file_name().unwrap().to_str().unwrap().starts_with("cmd-"), "{}", tmp.display());
    warden.kill().unwrap();
    warden.wait().unwrap();
    assert_eq!(std::fs::metadata(&left).unwrap().len(), 1 << 20, "left behind by the killed Warden");
    let r = exec(&f, &own, &["--", "/bin/true"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(!tmp.exists(), "{} is still there", tmp.display());
}

#[test]
fn check_says_the_suffix_rules_and_size_caps_do_not_hold_for_shell_commands() {
    let f = Fixture::new();
    let with_shell = std::fs::read_to_string(f.path("policy.yaml")).unwrap().replace("sandbox:\n", "sandbox:\n  shell: {}\n");
    f.file("shell.yaml", &with_shell);
    let check = |policy: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_warden")).args(["check", f.path(policy).to_str().unwrap()]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = "\n  not for shell commands: the suffix rules and size caps of /portfolio (a command reads and writes every file its mount's mode allows; \
                hide files from commands with shell.deny_read)\n";
    assert!(check("shell.yaml").contains(said), "{}", check("shell.yaml"));
    // Without a shell section, or without such rules, nothing is said.
    assert!(!check("policy.yaml").contains("not for shell commands"));
    f.file("plain.yaml", &with_shell.replace(", suffixes: [.md], max_file_bytes: 100", ""));
    assert!(!check("plain.yaml").contains("not for shell commands"), "{}", check("plain.yaml"));
    // What it says is so: a command reads a file the suffix rule keeps from tools.
    std::fs::write(f.path("portfolio/secret.txt"), "s3cret").unwrap();
    let r = exec(&f, &[], &["--cwd", "/portfolio", "--", "/bin/cat", "secret.txt"]);
    assert_eq!((r.status, r.stdout.as_str()), (0, "s3cret"), "{}", r.stderr);
}

