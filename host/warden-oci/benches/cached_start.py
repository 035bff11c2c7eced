#!/usr/bin/env python3
"""A cached, verified oci:// component against the same component as a local file,
whole processes, side by side in one run (goal: within 10 %).

  warden call oci://...textkit@sha256:... count --offline --verify-key K   vs   warden call textkit.wasm count
  warden run  oci://...hello@sha256:...  --offline                         vs   warden run hello.wasm
  warden call oci://...notes_py@sha256:... search --offline (19 MB)         vs   warden call notes_py.wasm search

A loopback docker-registry is started (policies/oci/registry.sh), the components are
published to it (policies/oci/publish.sh), textkit is signed (policies/oci/sign.sh),
each is pulled once into a fresh cache, and the registry is stopped: every timed
oci:// run is served and checked from the cache alone.

Usage: host/warden-oci/benches/cached_start.py [WARDEN_BINARY]   (default target/release/warden)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
WARDEN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target/release/warden"))
GUESTS = os.path.join(REPO, "guests/out")
SCRIPTS = os.path.join(REPO, "policies/oci")
RUNS = 60


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


def timed(cmd):
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {done.stderr.decode()}")
    return elapsed


def main():
    work = tempfile.mkdtemp()
    port, pid = run(["bash", f"{SCRIPTS}/registry.sh", os.path.join(work, "registry")]).split()
    registry = f"127.0.0.1:{port}"
    key = os.path.join(work, "acme.pem")
    run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key])
    run(["openssl", "ec", "-in", key, "-pubout", "-out", os.path.join(work, "acme.pub")])
    textkit, hello, notes = (os.path.join(GUESTS, f) for f in ("textkit.wasm", "hello.wasm", "notes_py.wasm"))
    try:
        textkit_digest = run(["bash", f"{SCRIPTS}/publish.sh", registry, "tools/textkit:v1", textkit])
        hello_digest = run(["bash", f"{SCRIPTS}/publish.sh", registry, "tools/hello:v1", hello])
        notes_digest = run(["bash", f"{SCRIPTS}/publish.sh", registry, "tools/notes:v1", notes])
        run(["bash", f"{SCRIPTS}/sign.sh", registry, "tools/textkit", textkit_digest, key])
        cache = os.path.join(work, "cache")
        verify = ["--verify-key", os.path.join(work, "acme.pub")]
        textkit_ref = f"oci://{registry}/tools/textkit@{textkit_digest}"
        hello_ref = f"oci://{registry}/tools/hello@{hello_digest}"
        notes_ref = f"oci://{registry}/tools/notes@{notes_digest}"
        run([WARDEN, "pull", "--cache-dir", cache, "--insecure-registry", registry, *verify, textkit_ref])
        run([WARDEN, "pull", "--cache-dir", cache, "--insecure-registry", registry, hello_ref])
        run([WARDEN, "pull", "--cache-dir", cache, "--insecure-registry", registry, notes_ref])
    finally:
        os.kill(int(pid), 15)
    data = os.path.join(work, "data")
    os.mkdir(data)
    with open(os.path.join(data, "notes.md"), "w") as f:
        f.write("a few words on a line\n" * 200)
    count = ["count", "--input", '{"path":"/d/notes.md"}']
    search = ["search", "--input", '{"pattern":"words","path":"/d"}']
    pairs = {
        "call textkit count": (
            [WARDEN, "call", "--cache-dir", cache, "--offline", *verify, "--dir", f"{data}::/d:ro", textkit_ref, *count],
            [WARDEN, "call", "--cache-dir", cache, "--dir", f"{data}::/d:ro", textkit, *count],
        ),
        "call notes_py search (19 MB)": (
            [WARDEN, "call", "--cache-dir", cache, "--offline", "--dir", f"{data}::/d:ro", notes_ref, *search],
            [WARDEN, "call", "--cache-dir", cache, "--dir", f"{data}::/d:ro", notes, *search],
        ),
        "run hello": (
            [WARDEN, "run", "--cache-dir", cache, "--offline", hello_ref, "Warden"],
            [WARDEN, "run", "--cache-dir", cache, hello, "Warden"],
        ),
    }
    for oci, local in pairs.values():  # warm the compile cache and the page cache
        for _ in range(3):
            timed(oci)
            timed(local)
    print(f"| whole process ({RUNS} pairs, interleaved, warm caches) | oci://, cached, verified | local file | ratio (median of pairs) |")
    print("|---|---|---|---|")
    for name, (oci, local) in pairs.items():
        a, b = [], []
        for _ in range(RUNS):
            a.append(timed(oci))
            b.append(timed(local))
        ratio = statistics.median(x / y for x, y in zip(a, b))
        print(f"| {name} | {statistics.median(a) * 1000:.1f} ms | {statistics.median(b) * 1000:.1f} ms | {ratio:.3f}x |")


if __name__ == "__main__":
    main()
