//! The container backend from the command line, on podman for real:
//! `warden exec` with a container policy, kept sandboxes (`warden sandbox
//! start|stop`, `warden exec --sandbox`), two hosts at once, and the messages
//! when no engine works.

use std::process::{Command, Output};

use super::Fixture;

const CONTAINER_POLICY: &str = "\
version: 1
sandbox:
  paths:
    portfolio: { root: ./portfolio, mode: rw }
    pipeline:  { root: ./pipeline, mode: ro }
  limits: { timeout: 20s }
  shell:
    backend: container
    container: { image: \"localhost/warden-busybox:1\", engine: podman, memory: 128MiB, cpus: 1 }
";

/// The fixture's mounts belong to uid 1000, whom commands then run as:
/// never root unless a policy says so.
fn fixture() -> Fixture {
    let f = Fixture::new();
    f.file("policy.yaml", CONTAINER_POLICY);
    give_to_user(&f, &["portfolio", "pipeline"]);
    f
}

pub(crate) fn give_to_user(f: &Fixture, folders: &[&str]) {
    for folder in folders {
        let status = Command::new("chown").args(["-R", "-h", "1000:1000"]).arg(f.path(folder)).status().unwrap();
        assert!(status.success());
    }
}

fn warden(f: &Fixture, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    warden_with_pid(f, args, env).0
}

/// Also the pid of the `warden` process, which names its container.
fn warden_with_pid(f: &Fixture, args: &[&str], env: &[(&str, &str)]) -> ((i32, String, String), u32) {
    let child = Command::new(env!("CARGO_BIN_EXE_warden"))
        .current_dir(f.path(""))
        .args(args)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out: Output = child.wait_with_output().unwrap();
    ((out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned()), pid)
}

fn containers_named(prefix: &str) -> Vec<String> {
    let out = Command::new("podman").args(["ps", "-a", "--format", "{{.Names}}"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().filter(|n| n.starts_with(prefix)).map(str::to_owned).collect()
}

#[test]
fn exec_runs_the_command_in_a_container_and_removes_it() {
    let f = fixture();
    let ((status, stdout, stderr), pid) = warden_with_pid(
        &f,
        &["exec", "--policy", "policy.yaml", "--", "sh", "-c", "pwd; cat /pipeline/status.md; echo; echo made > new.md; echo x > /pipeline/x.md; exit 3"],
        &[],
    );
    assert_eq!(status, 3, "{stderr}");
    assert_eq!(stdout, "/portfolio\nok\n");
    assert_eq!(stderr, "sh: can't create /pipeline/x.md: Read-only file system\n\nNote: writable paths in this sandbox are /portfolio\n");
    assert_eq!(std::fs::read_to_string(f.path("portfolio/new.md")).unwrap(), "made\n");
    assert!(!f.path("pipeline/x.md").exists());
    assert!(containers_named(&format!("warden-exec-{pid}")).is_empty(), "the container was left behind");
}

#[test]
fn exec_times_out_with_124_and_a_virtual_cwd_works() {
    let f = fixture();
    let (status, _, stderr) = warden(&f, &["exec", "--policy", "policy.yaml", "--timeout", "1s", "--", "sleep", "30"], &[]);
    assert_eq!(status, 124);
    assert!(stderr.ends_with("[warden: timed out after 1000 ms; the command and its children were killed]\n"), "{stderr}");
    let (status, stdout, _) = warden(&f, &["exec", "--policy", "policy.yaml", "--cwd", "/portfolio/reports", "--", "ls"], &[]);
    assert_eq!((status, stdout.as_str()), (0, "q3.md\n"));
}

#[test]
fn a_kept_sandbox_of_another_warden_build_is_refused_and_can_be_stopped() {
    let f = fixture();
    let name = format!("cliold{}", std::process::id());
    let current = format!("clinew{}", std::process::id());
    assert_eq!(warden(&f, &["sandbox", "start", "--policy", "policy.yaml", "--name", &current], &[]).0, 0);
    // Its twin, as an older build would have left it: the same labels, another runner.
    let inspect = Command::new("podman").args(["inspect", "--format", "{{json .Config.Labels}}", &format!("warden-{current}")]).output().unwrap();
    let labels: std::collections::BTreeMap<String, String> = serde_json::from_slice(&inspect.stdout).unwrap();
    assert_eq!(warden(&f, &["sandbox", "stop", &current], &[]).0, 0);
    // Another runner's digest, and none at all (a build from before the label).
    for runner in [Some("0".repeat(64)), None] {
        let mut run = Command::new("podman");
        run.args(["run", "-d", "--init", "--name", &format!("warden-{name}")]);
        for (key, value) in labels.iter().filter(|(k, _)| k.starts_with("io.warden.")) {
            let value = match key.as_str() {
                "io.warden.sandbox" => name.clone(),
                "io.warden.runner" => match &runner {
                    Some(digest) => digest.clone(),
                    None => continue,
                },
                _ => value.clone(),
            };
            run.args(["--label", &format!("{key}={value}")]);
        }
        assert!(run.args(["localhost/warden-busybox:1", "sleep", "600"]).output().unwrap().status.success());
        let (status, stdout, stderr) = warden(&f, &["exec", "--sandbox", &name, "--", "sh", "-c", "echo ran"], &[]);
        assert_eq!(
            (status, stdout.as_str(), stderr.as_str()),
            (
                2,
                "",
                format!(
                    "warden: the sandbox {name} was started by another Warden build, whose runner this one cannot rely on; \
                     stop it (warden sandbox stop {name}) and start it again\n"
                )
                .as_str()
            ),
            "{runner:?}"
        );
        let (status, _, stderr) = warden(&f, &["sandbox", "stop", &name], &[]);
        assert_eq!(status, 0, "{stderr}");
        assert!(containers_named(&format!("warden-{name}")).is_empty());
    }
}

#[test]
fn a_kept_sandbox_serves_several_commands_until_stopped() {
    let f = fixture();
    let name = format!("clitest{}", std::process::id());
    let (status, _, stderr) = warden(&f, &["sandbox", "start", "--policy", "policy.yaml", "--name", &name], &[]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stderr, format!("warden: sandbox {name} is running (podman container warden-{name}); run commands with `warden exec --sandbox {name} -- ...`\n"));
    // Started again with the same policy: the running one is reused.
    assert_eq!(warden(&f, &["sandbox", "start", "--policy", "policy.yaml", "--name", &name], &[]).0, 0);
    assert_eq!(containers_named(&format!("warden-{name}")), [format!("warden-{name}")]);
    let run = |args: &[&str]| {
        let mut all = vec!["exec", "--sandbox", name.as_str()];
        all.extend_from_slice(args);
        warden(&f, &all, &[])
    };
    assert_eq!(run(&["--", "sh", "-c", "echo one > /tmp/state"]).0, 0);
    assert_eq!(run(&["--", "cat", "/tmp/state"]).1, "one\n", "the container lives across commands");
    assert_eq!(run(&["--cwd", "/portfolio/reports", "--", "ls"]).1, "q3.md\n");
    let (status, _, stderr) = run(&["--", "sh", "-c", "echo x > /pipeline/y.md"]);
    assert_eq!((status, stderr.as_str()), (1, "sh: can't create /pipeline/y.md: Read-only file system\n\nNote: writable paths in this sandbox are /portfolio\n"));
    // Another policy under the same name is refused while it runs.
    f.file("other.yaml", &CONTAINER_POLICY.replace("mode: ro", "mode: rw"));
    let (status, _, stderr) = warden(&f, &["sandbox", "start", "--policy", "other.yaml", "--name", &name], &[]);
    assert_eq!((status, stderr.as_str()), (2, format!("warden: a sandbox named {name} is running with other settings; stop it first (warden sandbox stop {name})\n").as_str()));
    // A command cannot end its supervisor (the runner's, its parent), though they run as one user.
    let (status, _, stderr) = run(&["--", "sh", "-c", "kill -9 $PPID"]);
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.starts_with("sh: can't kill pid ") && stderr.contains(": Operation not permitted\n"), "{stderr}");
    // Under the same name, with --policy: run in it if its settings are the policy's, else said.
    assert_eq!(run(&["--policy", "policy.yaml", "--", "echo", "same"]), (0, "same\n".to_owned(), String::new()));
    let (status, _, stderr) = run(&["--policy", "other.yaml", "--", "echo", "other"]);
    assert_eq!((status, stderr.as_str()), (2, format!("warden: a sandbox named {name} is running with other settings; stop it first (warden sandbox stop {name})\n").as_str()));
    // A command whose client is killed is ended, with what it left, by the runner.
    let killed = Command::new("timeout")
        .args(["-s", "KILL", "2", env!("CARGO_BIN_EXE_warden"), "exec", "--sandbox", &name, "--", "sh", "-c", "sleep 601 & sleep 602"])
        .current_dir(f.path(""))
        .status()
        .unwrap();
    assert_eq!(killed.code(), None, "the client was not killed");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (_, left, _) = run(&["--", "ps", "-o", "args"]);
    assert!(!left.contains("sleep 60"), "the command outlived its client: {left}");
    assert_eq!(run(&["--", "echo", "again"]), (0, "again\n".to_owned(), String::new()));
    let (status, _, stderr) = warden(&f, &["sandbox", "stop", &name], &[]);
    assert_eq!((status, stderr.as_str()), (0, format!("warden: sandbox {name} is removed\n").as_str()));
    assert!(containers_named(&format!("warden-{name}")).is_empty());
    let (status, _, stderr) = run(&["--", "true"]);
    assert_eq!(status, 2);
    assert!(stderr.starts_with(&format!("warden: no running sandbox named {name} (")), "{stderr}");
}

/// What `warden sandbox start` leaves for later commands (`container/kept.rs`).
fn kept_state(name: &str) -> std::path::PathBuf {
    let euid = rustix::process::geteuid();
    let folder = match std::env::var_os("XDG_RUNTIME_DIR").map(std::path::PathBuf::from).filter(|d| d.is_absolute()) {
        Some(dir) => dir.join("warden"),
        None if euid.is_root() => std::path::PathBuf::from("/run/warden"),
        None => std::path::PathBuf::from(format!("/tmp/warden-{}", euid.as_raw())),
    };
    folder.join("kept").join(format!("warden-{name}.json"))
}

#[test]
fn a_kept_sandbox_is_reached_without_the_engine_while_its_state_holds() {
    let f = fixture();
    let name = format!("clifast{}", std::process::id());
    assert_eq!(warden(&f, &["sandbox", "start", "--policy", "policy.yaml", "--name", &name], &[]).0, 0);
    // Removed even when an assertion below fails.
    struct Stop(String);
    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = Command::new("podman").args(["rm", "-f", &format!("warden-{}", self.0)]).output();
        }
    }
    let _stop = Stop(name.clone());
    let state = kept_state(&name);
    let edit = |change: &dyn Fn(&mut serde_json::Value)| {
        let mut json: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
        change(&mut json);
        std::fs::write(&state, serde_json::to_vec(&json).unwrap()).unwrap();
    };
    let read = |key: &str, field: &str| {
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
        if field.is_empty() { json[key].clone() } else { json[key][field].clone() }
    };
    let run = || warden(&f, &["exec", "--sandbox", &name, "--", "echo", "ran"], &[]);
    // No engine at the address it names: the command runs all the same, through the runner alone.
    edit(&|json| json["engine"]["socket"] = "/nonexistent/engine.sock".into());
    assert_eq!(run(), (0, "ran\n".to_owned(), String::new()));
    assert_eq!(read("engine", "socket"), "/nonexistent/engine.sock");
    // An init that is not the container's (this test's own process): not believed; the engine is asked, and the state written again.
    let init = read("init", "");
    edit(&|json| json["init"] = std::process::id().into());
    assert_eq!(run(), (0, "ran\n".to_owned(), String::new()));
    assert_eq!((read("init", ""), read("engine", "socket") != "/nonexistent/engine.sock"), (init.clone(), true));
    // Another container's id with the right init, or a part of the right id: not believed either.
    let id = read("id", "").as_str().unwrap().to_owned();
    for other in ["0".repeat(64), id[..32].to_owned()] {
        edit(&|json| {
            json["id"] = other.clone().into();
            json["engine"]["socket"] = "/nonexistent/engine.sock".into();
        });
        assert_eq!(run(), (0, "ran\n".to_owned(), String::new()));
        assert_eq!(read("id", ""), id.as_str());
    }
    // The same init number, but not the process that started as it.
    edit(&|json| {
        json["init_started"] = 1.into();
        json["engine"]["socket"] = "/nonexistent/engine.sock".into();
    });
    assert_eq!(run(), (0, "ran\n".to_owned(), String::new()));
    assert_ne!(read("init_started", ""), 1);
    let (status, _, stderr) = warden(&f, &["sandbox", "stop", &name], &[]);
    assert_eq!(status, 0, "{stderr}");
    assert!(!state.exists(), "the state outlived its sandbox");
    let (status, _, stderr) = run();
    assert_eq!(status, 2);
    assert!(stderr.starts_with(&format!("warden: no running sandbox named {name} (")), "{stderr}");
}

#[test]
fn sandbox_names_and_policies_are_checked() {
    let f = fixture();
    for bad in ["", "../x", "-rf", "a b", "x/y"] {
        let (status, _, stderr) = warden(&f, &["sandbox", "start", "--policy", "policy.yaml", &format!("--name={bad}")], &[]);
        assert_eq!(status, 2, "{bad}");
        assert!(stderr.contains("is not a sandbox name"), "{stderr}");
    }
    f.file("plain.yaml", "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  shell: {}\n");
    let (status, _, stderr) = warden(&f, &["sandbox", "start", "--policy", "plain.yaml", "--name", "x"], &[]);
    assert_eq!(status, 2);
    assert!(stderr.ends_with("plain.yaml has no `shell: { backend: container }`: only container sandboxes are kept\n"), "{stderr}");
}

#[test]
fn two_hosts_at_once_get_containers_of_their_own() {
    let f = fixture();
    let spawn = |word: &str| {
        Command::new(env!("CARGO_BIN_EXE_warden"))
            .current_dir(f.path(""))
            .args(["exec", "--policy", "policy.yaml", "--", "sh", "-c", &format!("echo {word} > /tmp/who; sleep 2; cat /tmp/who")])
            .output()
            .unwrap()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| spawn("first"));
        let b = s.spawn(|| spawn("second"));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!(String::from_utf8_lossy(&a.stdout), "first\n", "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(String::from_utf8_lossy(&b.stdout), "second\n", "{}", String::from_utf8_lossy(&b.stderr));
}

#[test]
fn without_a_working_engine_the_command_is_refused_and_never_runs_elsewhere() {
    let f = fixture();
    f.file("docker.yaml", &CONTAINER_POLICY.replace("engine: podman", "engine: docker"));
    let (status, _, stderr) =
        warden(&f, &["exec", "--policy", "docker.yaml", "--", "sh", "-c", "echo ran > ran.md"], &[("DOCKER_HOST", "unix:///nonexistent/docker.sock")]);
    assert_eq!(status, 2);
    assert_eq!(
        stderr,
        "warden: no container engine works here, and the policy asks for `backend: container` (never replaced by another sandbox): \
         docker: no socket at /nonexistent/docker.sock\n"
    );
    // auto: docker first, then podman, each with its reason (podman is not on this PATH).
    f.file("auto.yaml", &CONTAINER_POLICY.replace("engine: podman", "engine: auto"));
    let empty = tempfile::tempdir().unwrap();
    let (status, _, stderr) = warden(
        &f,
        &["exec", "--policy", "auto.yaml", "--", "sh", "-c", "echo ran > ran.md"],
        &[("DOCKER_HOST", "unix:///nonexistent/docker.sock"), ("PATH", empty.path().to_str().unwrap()), ("XDG_RUNTIME_DIR", empty.path().to_str().unwrap())],
    );
    assert_eq!(status, 2);
    assert!(
        stderr.ends_with("docker: no socket at /nonexistent/docker.sock; podman: `podman` is not installed\n"),
        "{stderr}"
    );
    assert!(!f.path("portfolio/ran.md").exists());
}

#[test]
fn a_folder_outside_the_workspace_root_is_refused() {
    let f = fixture();
    f.file("rooted.yaml", &CONTAINER_POLICY.replace("engine: podman,", "engine: podman, workspace_root: ./portfolio,"));
    let (status, _, stderr) = warden(&f, &["exec", "--policy", "rooted.yaml", "--", "true"], &[]);
    assert_eq!((status, stderr.as_str()), (2, "warden: /pipeline is not inside the container's workspace_root\n"));
}

#[test]
fn check_says_where_shell_commands_run() {
    let f = fixture();
    let (status, stdout, _) = warden(&f, &["check", "policy.yaml"], &[]);
    assert_eq!(status, 0);
    assert!(
        stdout.contains("\nshell commands: a container of localhost/warden-busybox:1 on podman, memory 128 MiB, no swap, 1 CPUs, commands as the first writable mount's owner\n"),
        "{stdout}"
    );
    f.file("plain.yaml", "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw }\n  shell: {}\n");
    let (_, stdout, _) = warden(&f, &["check", "plain.yaml"], &[]);
    assert!(stdout.contains("\nshell commands: bubblewrap (/usr/bin/bwrap)\n"), "{stdout}");
}

#[test]
fn a_kept_sandbox_judges_every_command_by_the_rules_it_was_started_under() {
    let f = fixture();
    let rules = "    rules:\n      - { prefix: [touch], decision: forbid, justification: \"nothing is touched here\" }\n      - { prefix: [wget], decision: ask }\n";
    f.file("policy.yaml", &format!("{CONTAINER_POLICY}{rules}"));
    let name = format!("rulestest{}", std::process::id());
    let (status, _, stderr) = warden(&f, &["sandbox", "start", "--policy", "policy.yaml", "--name", &name], &[]);
    assert_eq!(status, 0, "{stderr}");
    let run = |args: &[&str]| {
        let mut all = vec!["exec", "--sandbox", name.as_str(), "--"];
        all.extend_from_slice(args);
        warden(&f, &all, &[])
    };
    // Without --policy, the rules come from the sandbox itself.
    let (status, _, stderr) = run(&["sh", "-c", "cd /portfolio && touch made"]);
    assert_eq!((status, stderr.as_str()), (126, "Cannot run 'cd /portfolio && touch made': the policy forbids 'touch ...': nothing is touched here.\n"));
    assert!(!f.path("portfolio/made").exists());
    // Nobody can be asked there: what a rule asks about is refused.
    let (status, _, stderr) = run(&["wget", "-q", "http://127.0.0.1:9/"]);
    assert_eq!((status, stderr.as_str()), (126, "Cannot run 'wget -q http://127.0.0.1:9/': the command needs the user's approval, which may be requested.\n"));
    assert_eq!(run(&["echo", "allowed"]).1, "allowed\n");
    assert_eq!(warden(&f, &["sandbox", "stop", &name], &[]).0, 0);
}

#[test]
fn a_rules_grant_gives_the_command_a_container_of_its_own_with_that_network() {
    let f = fixture();
    let port = super::network::server("granted");
    let rules = format!("    rules:\n      - {{ prefix: [wget], decision: ask, grant: {{ network: {{ allow: [\"127.0.0.1:{port}\"] }} }} }}\n");
    f.file("policy.yaml", &format!("{CONTAINER_POLICY}{rules}"));
    let url = format!("http://127.0.0.1:{port}/");
    let fetch = ["--", "wget", "-q", "-O-", url.as_str()];
    let exec = |extra: &[&str]| {
        let mut all = vec!["exec", "--policy", "policy.yaml"];
        all.extend_from_slice(extra);
        all.extend_from_slice(&fetch);
        warden(&f, &all, &[])
    };
    let (status, _, stderr) = exec(&[]);
    assert_eq!(status, 126, "{stderr}");
    let (status, stdout, stderr) = exec(&["--approve", "exec:wget"]);
    assert_eq!((status, stdout.as_str()), (0, "granted"), "{stderr}");
    // A kept sandbox never takes the grant: the granted command runs beside it, in a container of its own.
    let name = format!("granttest{}", std::process::id());
    assert_eq!(warden(&f, &["sandbox", "start", "--policy", "policy.yaml", "--name", &name], &[]).0, 0);
    let (status, stdout, stderr) = exec(&["--sandbox", &name, "--approve", "exec:wget"]);
    assert_eq!((status, stdout.as_str()), (0, "granted"), "{stderr}");
    assert_eq!(stderr, format!("warden: the rule's grant runs this command in a container of its own, not in the kept sandbox {name}\n"));
    // In the kept sandbox itself, the same server has no route.
    let (status, _, _) = warden(&f, &["exec", "--sandbox", &name, "--", "sh", "-c", &format!("nc -w 2 127.0.0.1 {port} </dev/null")], &[]);
    assert_ne!(status, 0);
    assert_eq!(warden(&f, &["sandbox", "stop", &name], &[]).0, 0);
}
