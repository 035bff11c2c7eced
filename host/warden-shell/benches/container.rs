//! The container backend, side by side in one run (interleaved rounds):
//! - `execute("true")` on a started container (`ShellSandbox::execute_argv`,
//!   started by the container's runner);
//! - `podman exec CONTAINER true`, the CLI as a process, on the same container;
//! - `execute_argv("/bin/true")` under bubblewrap (the default backend);
//!
//! then `start()` + `stop()`: a container made, started and removed.
//!
//! Goal: `execute` at most half the time of the `podman exec` CLI.
//! `benches/container_vs.py` runs this bench and another build's in turns,
//! for the figures of both side by side.
//! Needs the engine and the image of policies/container-image.sh.
//! Run: cargo bench -p warden-shell --bench container
//! (WARDEN_BENCH_ENGINE=docker for docker instead of podman).

use std::ffi::OsString;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use warden_shell::container::Owner;
use warden_shell::{Backend, ContainerName, ProcessCap, ShellSandbox};

const ROUNDS: usize = 40;
const STARTS: usize = 8;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("proj")).unwrap();
    // A container's commands run as the writable mount's owner, never as root unless a policy says so.
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(dir.path().join("proj"), Some(1000), Some(1000)).unwrap();
    }
    let write = |name: &str, shell: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("version: 1\nsandbox:\n  paths:\n    proj: {{ root: ./proj, mode: rw }}\n  shell:\n{shell}")).unwrap();
        warden_policy::load(&path).unwrap()
    };
    let engine = std::env::var("WARDEN_BENCH_ENGINE").unwrap_or_else(|_| "podman".into());
    let in_container =
        write("container.yaml", &format!("    backend: container\n    container: {{ image: \"localhost/warden-busybox:1\", engine: {engine} }}\n"));
    let in_bwrap = write("bwrap.yaml", "    read: system\n");
    let start = |n: usize| {
        let fs = warden_fs::Sandbox::open_for(&in_container, None).unwrap();
        let name = ContainerName { name: format!("bench{n}"), owner: Owner::ThisProcess };
        ShellSandbox::with_options(&in_container, fs, ProcessCap::start().unwrap(), name).unwrap()
    };
    let container = start(0);
    let Backend::Container { name, .. } = container.backend() else { panic!("not a container") };
    let bwrap = ShellSandbox::new(&in_bwrap, None).unwrap();
    assert!(matches!(bwrap.backend(), Backend::Bwrap(_)), "bubblewrap is needed for the comparison");
    // The seed's `execute("true")`: `sh -c true`.
    let sh_true = ["/bin/sh", "-c", "true"].map(OsString::from);
    let bin_true = [OsString::from("/bin/true")];

    let cli_label = format!("`{engine} exec CONTAINER true`, CLI process");
    let mut rows: Vec<(&str, Vec<Duration>)> =
        vec![("execute(\"true\") (`sh -c true`), Warden's container backend", vec![]), (&cli_label, vec![]), ("execute_argv(\"/bin/true\") under bubblewrap", vec![])];
    for round in 0..ROUNDS + 3 {
        let keep = round >= 3;
        let mut time = |i: usize, f: &mut dyn FnMut()| {
            let start = Instant::now();
            f();
            if keep {
                rows[i].1.push(start.elapsed());
            }
        };
        time(0, &mut || assert!(container.execute_argv(&sh_true, None, Duration::from_secs(30)).unwrap().ok()));
        time(1, &mut || assert!(Command::new(&engine).args(["exec", &name, "true"]).stdout(Stdio::null()).status().unwrap().success()));
        time(2, &mut || assert!(bwrap.execute_argv(&bin_true, None, Duration::from_secs(30)).unwrap().ok()));
    }
    let mut starts = Vec::new();
    for n in 1..=STARTS {
        let t = Instant::now();
        let sandbox = start(n);
        sandbox.plan();
        drop(sandbox);
        starts.push(t.elapsed());
    }
    drop(container);

    let cli = median(&mut rows[1].1.clone());
    println!("| {engine}: {ROUNDS} runs each, interleaved | median | p90 | vs `{engine} exec` |");
    println!("|---|---|---|---|");
    for (label, samples) in &mut rows {
        let (m, p90) = (median(samples), p90(samples));
        println!("| {label} | {:.2} ms | {:.2} ms | {:.3}× |", ms(m), ms(p90), m.as_secs_f64() / cli.as_secs_f64());
    }
    println!("| start() + stop(), {STARTS} times | {:.0} ms | {:.0} ms | |", ms(median(&mut starts)), ms(p90(&mut starts)));
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn p90(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() * 9 / 10]
}
