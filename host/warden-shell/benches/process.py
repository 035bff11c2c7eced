#!/usr/bin/env python3
"""Whole processes spawning /bin/true, side by side in one run (interleaved):
plain, `warden exec` (release build), and `srt` (npm @anthropic-ai/sandbox-runtime,
which needs ripgrep and socat), each with one writable project folder and no network.

Usage: host/warden-shell/benches/process.py [WARDEN_BINARY]    (default target/release/warden)
srt is installed with: npm install --prefix .tools/npm @anthropic-ai/sandbox-runtime
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
WARDEN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target/release/warden"))
SRT = os.path.join(REPO, ".tools/npm/node_modules/.bin/srt")
RUNS = 40


def timed(cmd, cwd):
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {done.stderr.decode()}")
    return elapsed


def main():
    work = tempfile.mkdtemp()
    proj = os.path.join(work, "proj")
    os.mkdir(proj)
    policy = os.path.join(work, "policy.yaml")
    with open(policy, "w") as f:
        f.write("version: 1\nsandbox:\n  paths:\n    proj: { root: ./proj, mode: rw }\n")
    settings = os.path.join(work, "srt.json")
    with open(settings, "w") as f:
        json.dump({"network": {"allowedDomains": [], "deniedDomains": []},
                   "filesystem": {"denyRead": [], "allowWrite": [proj], "denyWrite": []}}, f)
    cases = {"plain /bin/true": ["/bin/true"],
             "warden exec -- /bin/true": [WARDEN, "exec", "--policy", policy, "--", "/bin/true"]}
    if os.path.exists(SRT):
        cases["srt /bin/true"] = [SRT, "-s", settings, "/bin/true"]
    for cmd in cases.values():
        timed(cmd, proj)
    samples = {name: [] for name in cases}
    for _ in range(RUNS):
        for name, cmd in cases.items():
            samples[name].append(timed(cmd, proj))
    print(f"| whole process ({RUNS} runs each) | median | p90 |")
    print("|---|---|---|")
    for name, s in samples.items():
        print(f"| `{name}` | {statistics.median(s) * 1000:.1f} ms | {statistics.quantiles(s, n=10)[-1] * 1000:.1f} ms |")


main()
