#!/usr/bin/env python3
"""Whole processes spawning /bin/true, side by side in one run (interleaved, the order rotated each round):
plain, raw bwrap with exactly the mounts and flags `warden exec` gives it (printed
by the bwrap_args example, without its seccomp and status pipes), `warden exec`
(release build), and `srt` (npm @anthropic-ai/sandbox-runtime, which needs ripgrep
and socat) when installed, each with one writable project folder and no network.

Usage: bash host/warden/build.sh --release && cargo build --release -p warden-shell --example bwrap_args &&
       host/warden-shell/benches/process.py [WARDEN_BINARY]    (default target/release/warden, the static front)
srt is installed with: npm install --prefix .tools/npm @anthropic-ai/sandbox-runtime
Goal: `warden exec` <= 1.25x raw bwrap at the median; under Landlock
(`shell: { backend: landlock }`, no namespaces made) <= 0.5x raw bwrap.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
WARDEN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target/release/warden"))
SRT = os.path.join(REPO, ".tools/npm/node_modules/.bin/srt")
BWRAP_ARGS = os.path.join(REPO, "target/release/examples/bwrap_args")
RUNS = 60


def timed(cmd, cwd):
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {done.stderr.decode()}")
    # Raw bwrap leaves the placeholders Warden removes after a run: so does this, untimed.
    for name in os.listdir(cwd):
        path = os.path.join(cwd, name)
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
    return elapsed


def main():
    work = tempfile.mkdtemp()
    proj = os.path.join(work, "proj")
    os.mkdir(proj)
    policy = os.path.join(work, "policy.yaml")
    with open(policy, "w") as f:
        f.write("version: 1\nsandbox:\n  paths:\n    proj: { root: ./proj, mode: rw }\n")
    landlock = os.path.join(work, "landlock.yaml")
    with open(landlock, "w") as f:
        f.write("version: 1\nsandbox:\n  paths:\n    proj: { root: ./proj, mode: rw }\n  shell: { backend: landlock }\n")
    settings = os.path.join(work, "srt.json")
    with open(settings, "w") as f:
        json.dump({"network": {"allowedDomains": [], "deniedDomains": []},
                   "filesystem": {"denyRead": [], "allowWrite": [proj], "denyWrite": []}}, f)
    raw = subprocess.run([BWRAP_ARGS, policy], check=True, stdout=subprocess.PIPE).stdout.decode().splitlines()
    cases = {"plain /bin/true": ["/bin/true"],
             "raw bwrap, Warden's mounts and flags": ["/usr/bin/bwrap"] + raw,
             "warden exec -- /bin/true": [WARDEN, "exec", "--policy", policy, "--", "/bin/true"],
             "warden exec -- /bin/true, backend: landlock": [WARDEN, "exec", "--policy", landlock, "--", "/bin/true"]}
    if os.path.exists(SRT):
        cases["srt /bin/true"] = [SRT, "-s", settings, "/bin/true"]
    headers = subprocess.run(["readelf", "--program-headers", "--wide", WARDEN], check=True, stdout=subprocess.PIPE).stdout
    print(f"{WARDEN}: linked {'dynamically' if b'INTERP' in headers else 'statically'}\n")
    for cmd in cases.values():
        timed(cmd, proj)
    samples = {name: [] for name in cases}
    # Rotated each round, so that each case follows each other one as often: a run
    # leaves work behind it (a network namespace is torn down after bwrap exits),
    # which a fixed order would always charge to the same next case.
    names = list(cases)
    for round in range(RUNS):
        for name in names[round % len(names):] + names[:round % len(names)]:
            samples[name].append(timed(cases[name], proj))
    print(f"| whole process ({RUNS} runs each) | median | p90 |")
    print("|---|---|---|")
    for name, s in samples.items():
        print(f"| `{name}` | {statistics.median(s) * 1000:.2f} ms | {statistics.quantiles(s, n=10)[-1] * 1000:.2f} ms |")
    ratio = statistics.median(samples["warden exec -- /bin/true"]) / statistics.median(samples["raw bwrap, Warden's mounts and flags"])
    print(f"\n`warden exec` / raw bwrap at the median: {ratio:.2f}x (goal <= 1.25x: {'met' if ratio <= 1.25 else 'missed'})")
    ratio = statistics.median(samples["warden exec -- /bin/true, backend: landlock"]) / statistics.median(samples["raw bwrap, Warden's mounts and flags"])
    print(f"`warden exec` under Landlock / raw bwrap at the median: {ratio:.2f}x (goal <= 0.5x: {'met' if ratio <= 0.5 else 'missed'})")


main()
