#!/usr/bin/env python3
"""Each language's `notes` tool, whole process: Python (~18 MB), JavaScript (~13 MB) and
Rust (~0.2 MB); and, for C, which has no `notes`, textkit's `grep` of the same file.

  cached start + first call   `warden call ... search` with a warm compile cache
                              goal: median <= 150 ms (Python), <= 100 ms (JavaScript)
  first run                   the same call with an empty cache: compile, store, call
  compile once                first run / cached run, side by side in one run

Usage: host/warden-wasm/benches/polyglot.py [WARDEN_BINARY]   (default target/release/warden)
Needs guests/build.sh to have run.
"""
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from process import timed  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
WARDEN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target/release/warden"))
GUESTS = os.path.join(REPO, "guests/out")
CACHED_RUNS = 40
FIRST_RUNS = 3
GOALS_MS = {"Python": 150, "JavaScript": 100}
# (guest, tool, the answer it must give)
GUESTS_BY_LANG = {
    "C (textkit `grep`)": ("textkit.wasm", "grep", None),
    "Python": ("notes_py.wasm", "search", "/d/notes.md:202: the risk memo\n1 match"),
    "JavaScript": ("notes_js.wasm", "search", "/d/notes.md:202: the risk memo\n1 match"),
    "Rust": ("notes_rs.wasm", "search", "/d/notes.md:202: the risk memo\n1 match"),
}


def main():
    work = tempfile.mkdtemp()
    data = os.path.join(work, "data")
    os.mkdir(data)
    with open(os.path.join(data, "notes.md"), "w") as f:
        f.write("# Notes\n" + "a few words on a line\n" * 200 + "the risk memo\n")
    warm_cache = os.path.join(work, "cache")
    guests = {lang: (guest, tool) for lang, (guest, tool, _) in GUESTS_BY_LANG.items()}

    def call(guest):
        file, tool = guest
        return [WARDEN, "call", "--dir", f"{data}::/d:ro", os.path.join(GUESTS, file),
                tool, "--input", '{"pattern":"risk","path":"/d"}']

    def in_cache(cache):
        # The default compile cache folder, placed there: Warden maps the code
        # cached there (a --cache-dir, which a policy could mount, is read and copied).
        return {**os.environ, "WARDEN_CACHE_DIR": cache}

    for lang, (file, tool, expected) in GUESTS_BY_LANG.items():  # the tools answer, before anything is timed
        answer = subprocess.run(call((file, tool)), capture_output=True, text=True, env=in_cache(warm_cache))
        if answer.returncode != 0 or "the risk memo" not in answer.stdout or (expected and answer.stdout.strip() != expected):
            sys.exit(f"{file} answered {answer.stdout!r} {answer.stderr!r}")
    first = {lang: [] for lang in guests}
    for i in range(FIRST_RUNS):
        for lang, guest in guests.items():
            first[lang].append(timed(call(guest), in_cache(os.path.join(work, f"cold-{lang}-{i}"))))
    cached = {lang: [] for lang in guests}
    for _ in range(CACHED_RUNS):  # interleaved, so that machine noise hits both alike
        for lang, guest in guests.items():
            cached[lang].append(timed(call(guest), in_cache(warm_cache)))

    print(f"| tool (`warden call ... search`, whole process) | size | first run (empty cache, {FIRST_RUNS} runs) "
          f"| cached start + first call ({CACHED_RUNS} runs) | p90 | compile once: first / cached | goal |")
    print("|---|---|---|---|---|---|---|")
    for lang, guest in guests.items():
        size = os.path.getsize(os.path.join(GUESTS, guest[0])) / 1e6
        cold, warm = statistics.median(first[lang]) * 1000, statistics.median(cached[lang]) * 1000
        p90 = statistics.quantiles(cached[lang], n=10)[-1] * 1000
        goal = GOALS_MS.get(lang)
        verdict = f"≤ {goal} ms ({'met' if warm <= goal else 'missed'})" if goal else "none set"
        name = lang if lang.startswith("C ") else f"{lang} `notes`"
        print(f"| {name} | {size:.2f} MB | {cold:.0f} ms | {warm:.1f} ms | {p90:.1f} ms | {cold / warm:.0f}× | {verdict} |")


main()
