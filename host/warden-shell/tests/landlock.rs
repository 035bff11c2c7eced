//! The Landlock backend (`shell: { backend: landlock }`) on this host: each
//! escape tried by a command, checked from the host afterwards. Named after
//! the escape each prevents. The kernel here offers Landlock ABI 7.

mod common;

use std::net::{TcpListener, UdpSocket};
use std::time::Duration;

use common::*;
use warden_shell::{Backend, ShellSandbox};

const LANDLOCK: &str = "  shell: { backend: landlock }\n";

fn landlocked(p: &Project, shell: &str) -> ShellSandbox {
    let sandbox = p.sandbox(shell);
    assert!(matches!(sandbox.backend(), Backend::Landlock { abi } if abi >= 6), "{:?}", sandbox.backend());
    sandbox
}

#[test]
fn writes_outside_the_writable_mount_fail_and_inside_it_work() {
    let p = Project::new();
    let sandbox = landlocked(&p, LANDLOCK);
    p.file("proj/build/.keep", "");
    let script = format!(
        "pwd; echo built > build/out.o; mkdir -p build/deep/er && echo x > build/deep/er/f; echo more >> main.c; echo x > {}; echo x > {}; echo x > /etc/new.txt",
        host(&p.path("outside/new.txt")),
        host(&p.path("docs/new.md"))
    );
    let r = sh_in(&sandbox, &script);
    assert_eq!(r.stdout.trim(), host(&p.path("proj").canonicalize().unwrap()));
    assert_eq!(p.read("proj/build/out.o").as_deref(), Some("built\n"));
    assert_eq!(p.read("proj/build/deep/er/f").as_deref(), Some("x\n"));
    assert!(p.read("proj/main.c").unwrap().ends_with("more\n"));
    assert!(!p.exists("outside/new.txt") && !p.exists("docs/new.md") && !std::path::Path::new("/etc/new.txt").exists());
    assert!(r.stderr.contains("Permission denied"), "{}", r.stderr);
}

#[test]
fn nothing_new_is_made_beside_a_protected_path_and_the_note_says_where() {
    // Landlock grants by folder: the mount's top holds protected paths
    // (`.git`, `.claude`, ...), so it gains no entry, or `.claude` could be made.
    let p = Project::new();
    let sandbox = landlocked(&p, LANDLOCK);
    let r = sh_in(&sandbox, "echo x > new-at-the-top");
    assert_ne!(r.exit_code, 0);
    assert!(!p.exists("proj/new-at-the-top"));
    let top = host(&p.path("proj").canonicalize().unwrap());
    assert!(r.stderr.contains(&format!("under Landlock nothing new can be made directly in {top}")), "{}", r.stderr);
}

#[test]
fn files_outside_the_mounts_and_denied_files_inside_them_cannot_be_read() {
    let p = Project::new();
    p.file("proj/.env", SECRET).file("proj/secrets/key.pem", SECRET).file("docs/.env", SECRET);
    let sandbox = landlocked(&p, "  shell: { backend: landlock, deny_read: [.env, secrets/] }\n");
    let r = sh_in(&sandbox, &format!("cat {}; cat .env; cat secrets/key.pem; cat {}; echo x > .env", host(&p.path("outside/secret.txt")), host(&p.path("docs/.env"))));
    assert_no_secret(&r);
    assert_eq!(p.read("proj/.env").as_deref(), Some(SECRET));
}

#[test]
fn protected_places_in_the_writable_mount_stay_unchanged() {
    let p = Project::new();
    p.file("proj/.git/HEAD", "ref: refs/heads/main\n").file("proj/.git/config", "[core]\n");
    std::fs::create_dir_all(p.path("proj/.git/hooks")).unwrap();
    with_repositories(&p, "proj");
    let sandbox = landlocked(&p, LANDLOCK);
    let r = sh_in(&sandbox, &plant());
    assert_nothing_planted(&p, "proj");
    assert!(r.ok() && !p.exists("proj/.claude/settings.json"), "{r:?}");
    assert_eq!(p.read("proj/.git/config").as_deref(), Some("[core]\n"));
}

#[test]
fn no_tcp_connection_or_udp_socket_is_made_without_the_network() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let p = Project::new();
    let sandbox = landlocked(&p, LANDLOCK);
    let tcp_port = listener.local_addr().unwrap().port();
    let udp_port = udp.local_addr().unwrap().port();
    let script = format!(
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {tcp_port}), 2)' && echo tcp-connected; \
         python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (\"127.0.0.1\", {udp_port}))' && echo udp-sent; \
         python3 -c 'import socket; s = socket.socket(); s.listen()' && echo listening"
    );
    let r = sh_in(&sandbox, &script);
    assert!(!r.stdout.contains("tcp-connected") && !r.stdout.contains("udp-sent") && !r.stdout.contains("listening"), "{r:?}");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "a connection reached the host's listener");
    assert!(udp.recv_from(&mut [0; 8]).is_err(), "a datagram reached the host");
}

#[test]
fn a_process_outside_the_command_cannot_be_signalled_or_its_environment_read() {
    let mut outside = std::process::Command::new("sleep").arg("30").env("WARDEN_TEST_SECRET", SECRET).spawn().unwrap();
    let p = Project::new();
    let sandbox = landlocked(&p, LANDLOCK);
    let pid = outside.id();
    let script = format!(
        "kill -TERM {pid} && echo signalled; cat /proc/{pid}/environ; cat /proc/1/environ; ls /proc/{pid}/root/ && echo rooted; \
         prlimit --pid {pid} --cpu=1:1 && echo limited; renice -n 19 -p {pid} && echo reniced; unshare -Ur true && echo unshared; \
         python3 -c 'import ctypes; libc = ctypes.CDLL(None); exit(0 if libc.shmget(0, 4096, 0o1600) >= 0 else 1)' && echo ipc"
    );
    let r = sh_in(&sandbox, &script);
    for done in ["rooted", "limited", "reniced", "unshared", "ipc"] {
        assert!(!r.stdout.contains(done), "{done}: {r:?}");
    }
    let alive = outside.try_wait().unwrap().is_none();
    let _ = outside.kill();
    let _ = outside.wait();
    assert!(alive, "the command killed a process outside it: {r:?}");
    assert!(!r.stdout.contains("signalled"), "{r:?}");
    assert_no_secret(&r);
}

#[test]
fn the_command_gets_a_temporary_folder_of_its_own_and_not_the_hosts_tmp() {
    let p = Project::new();
    let sandbox = landlocked(&p, LANDLOCK);
    let marker = format!("/tmp/warden-landlock-test-{}", std::process::id());
    let r = sh_in(&sandbox, &format!("echo x > \"$TMPDIR/scratch\" && cat \"$TMPDIR/scratch\"; echo x > {marker}; echo \"$TMPDIR\""));
    assert_eq!(r.stdout.lines().next(), Some("x"), "{r:?}");
    assert!(!std::path::Path::new(&marker).exists());
    let tmpdir = r.stdout.lines().nth(1).unwrap();
    assert!(!std::path::Path::new(tmpdir).exists(), "the command's temporary folder outlived it");
}

#[test]
fn a_command_past_its_time_limit_is_killed_with_its_children() {
    let p = Project::new();
    let sandbox = landlocked(&p, LANDLOCK);
    let r = sh_timeout(&sandbox, "sleep 30 & sleep 30", Duration::from_millis(500));
    assert!(r.timed_out && r.exit_code == 124, "{r:?}");
}

/// A server on loopback that answers every request with `body`, for `n` requests.
fn http_server(body: &'static str, n: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(n) {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let _ = std::io::Read::read(&mut stream, &mut request);
            let answer = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
            let _ = std::io::Write::write_all(&mut stream, answer.as_bytes());
        }
    });
    port
}

#[test]
fn under_an_allowlist_only_the_proxy_is_reached_and_only_listed_hosts_through_it() {
    let listed = http_server("listed", 4);
    let other = http_server("other", 4);
    let p = Project::new();
    let sandbox = landlocked(&p, &format!("  network: {{ allow: [\"localhost:{listed}\"] }}\n  shell: {{ backend: landlock }}\n"));
    let script = format!(
        "curl -sS --max-time 5 http://localhost:{listed}/; echo; \
         curl -fsS --max-time 5 http://localhost:{other}/ && echo other-reached; \
         curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:{listed}/ && echo direct-reached; \
         python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' && echo udp-made; \
         python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)' && echo mptcp-made; \
         python3 -c 'import socket; c = socket.socket(); c.sendto(b\"x\", socket.MSG_FASTOPEN, (\"127.0.0.1\", {listed}))' && echo fast-open; \
         python3 -c 'import socket; s = socket.socket(); s.listen()' && echo listening"
    );
    let r = sh_in(&sandbox, &script);
    assert!(r.stdout.starts_with("listed"), "{r:?}");
    // The proxy's port at another address of this host: the command's own
    // network has no route there (a port-only rule would let it through).
    let probe = UdpSocket::bind("0.0.0.0:0").unwrap();
    probe.connect("10.255.255.255:9").unwrap();
    let own_address = probe.local_addr().unwrap().ip();
    let on_proxy_port = TcpListener::bind((own_address, 3128)).unwrap();
    on_proxy_port.set_nonblocking(true).unwrap();
    let r2 = sh_in(&sandbox, &format!("python3 -c 'import socket; socket.create_connection((\"{own_address}\", 3128), 2)' && echo host-reached"));
    assert!(!r2.stdout.contains("host-reached"), "{r2:?}");
    assert!(on_proxy_port.accept().is_err(), "a connection reached {own_address}:3128");
    for reached in ["other-reached", "direct-reached", "udp-made", "mptcp-made", "fast-open", "listening"] {
        assert!(!r.stdout.contains(reached), "{reached}: {r:?}");
    }
    assert!(r.stderr.contains(&format!("localhost:{other}")), "the refusal is noted: {}", r.stderr);
}

#[test]
fn nothing_the_command_starts_outlives_it_not_even_in_a_new_session() {
    let p = Project::new();
    p.file("proj/build/.keep", "");
    let sandbox = landlocked(&p, LANDLOCK);
    let script = "setsid -f sh -c 'sleep 1; echo late > build/setsid.txt'; \
                  python3 -c 'import os, time\nif os.fork() == 0:\n    try:\n        os.setsid()\n    except OSError as e:\n        print(\"setsid\", e.errno, flush=True)\n    time.sleep(1)\n    open(\"build/forked.txt\", \"w\").write(\"late\")\nelse:\n    time.sleep(0.3)'; \
                  (sleep 1; echo late > build/background.txt) & echo started";
    let r = sh_in(&sandbox, script);
    assert!(r.ok() && r.stdout.contains("started") && r.stdout.contains("setsid 1"), "{r:?}");
    std::thread::sleep(Duration::from_millis(1800));
    for late in ["setsid.txt", "forked.txt", "background.txt"] {
        assert!(!p.exists(&format!("proj/build/{late}")), "{late} was written after the command ended: {r:?}");
    }
}

#[test]
fn a_program_that_does_not_exist_is_the_commands_failure() {
    let p = Project::new();
    let sandbox = landlocked(&p, LANDLOCK);
    let argv: Vec<std::ffi::OsString> = ["--bind", "/", "/tmp/x"].iter().map(Into::into).collect();
    let r = sandbox.execute_argv(&argv, None, Duration::from_secs(10)).unwrap();
    assert_eq!(r.exit_code, 127, "{r:?}");
    assert!(r.stderr.starts_with("--bind: No such file or directory"), "{r:?}");
}


#[test]
fn no_mode_owner_or_attribute_is_changed_where_landlock_does_not_look() {
    let p = Project::new();
    p.file("proj/build/run.sh", "#!/bin/sh\n");
    let own = warden_policy::private_folder().unwrap();
    let before = std::fs::metadata(&own).unwrap().permissions();
    let sandbox = landlocked(&p, LANDLOCK);
    let script = format!(
        "chmod 777 {} && echo opened; chmod +x build/run.sh && echo made-executable; chown 0:0 build/run.sh && echo chowned; \
         python3 -c 'import os; os.setxattr(\"build/run.sh\", \"user.x\", b\"1\")' && echo xattr",
        own.display()
    );
    let r = sh_in(&sandbox, &script);
    for done in ["opened", "made-executable", "chowned", "xattr"] {
        assert!(!r.stdout.contains(done), "{done}: {r:?}");
    }
    assert_eq!(std::fs::metadata(&own).unwrap().permissions(), before);
}

#[test]
fn read_all_shows_the_host_but_not_its_devices_or_wardens_folder() {
    let p = Project::new();
    let own = warden_policy::private_folder().unwrap();
    let token = own.join(format!("landlock-test-{}.token", std::process::id()));
    std::fs::write(&token, SECRET).unwrap();
    let sandbox = landlocked(&p, "  shell: { backend: landlock, read: all }\n");
    // A folder on the way to a denied path may be listed, and Landlock's rights
    // hold for all below: names show, contents do not.
    let script = format!(
        "cat /etc/hostname >/dev/null && echo host-read; cat {}; for d in /dev/sda /dev/vda /dev/nvme0n1 /dev/mem; do head -c1 $d >/dev/null 2>&1 && echo disk-read; done; \
         cat /sys/class/net/lo/address && echo sys-read",
        token.display()
    );
    let r = sh_in(&sandbox, &script);
    let _ = std::fs::remove_file(&token);
    assert_no_secret(&r);
    assert!(r.stdout.contains("host-read"), "{r:?}");
    assert!(!r.stdout.contains("disk-read") && !r.stdout.contains("sys-read"), "{r:?}");
}
