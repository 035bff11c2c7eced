#!/usr/bin/env python3
"""Prints the benchmarks chapter's (docs/src/benchmarks.md) runtime benchmark table from criterion's medians (target/criterion)."""
import json
import pathlib
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")


def median_ns(*parts):
    data = json.loads(ROOT.joinpath(*parts, "new", "estimates.json").read_text())
    return data["median"]["point_estimate"]


def show(ns):
    return f"{ns / 1000:.1f} µs" if ns < 1e6 else f"{ns / 1e6:.2f} ms"


call = median_ns("warm_call_echo")
guest, native = median_ns("read_64mib", "guest_wasi"), median_ns("read_64mib", "native_read")
floor = median_ns("read_64mib", "two_copies_floor")
print("| measurement | Warden | baseline | ratio | goal |")
print("|---|---|---|---|---|")
print(f"| warm call of the C `echo` tool (instantiate + call + drop) | {show(call)} | | | median ≤ 50 µs "
      f"({'met' if call <= 50_000 else 'missed'}) |")
for label, key, goal_ms in [("Python", "warm_call_python_search", 5), ("JavaScript", "warm_call_js_search", 3),
                            ("Rust", "warm_call_rust_search", None)]:
    ns = median_ns(key)
    goal = f"median ≤ {goal_ms} ms ({'met' if ns <= goal_ms * 1e6 else 'missed'})" if goal_ms else "none set"
    print(f"| warm call of the {label} `notes` tool's `search` (instantiate + call + drop) | {show(ns)} | | | {goal} |")
print(f"| guest reads a 64 MiB file through WASI (1 MiB reads) | {show(guest)} | {show(native)} (native reads) "
      f"| {guest / native:.2f}× | ≤ 2× ({'met' if guest / native <= 2 else 'missed'}) |")
print(f"| the same reads plus one copy, in plain Rust (the floor) | {show(floor)} | {show(native)} "
      f"| {floor / native:.2f}× | |")
