#!/usr/bin/env python3
"""Prints the benchmarks chapter's (docs/src/benchmarks.md) benchmark table from criterion's medians (target/criterion)."""
import json
import pathlib
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
ROWS = [
    ("read 4 KiB (bytes)", "read_4k", "warden_read_bytes", "std_fs_read", 1.5),
    ("read 4 KiB (text)", "read_4k", "warden_read_text", "std_fs_read_to_string", 1.5),
    ("read 1 MiB (bytes)", "read_1m", "warden_read_bytes", "std_fs_read", 1.5),
    ("read 1 MiB (text)", "read_1m", "warden_read_text", "std_fs_read_to_string", 1.5),
    ("list 10,000 files", "list_10k", "warden_list_files", "plain_walk", 2.0),
]


def median_ns(group, name):
    data = json.loads((ROOT / group / name / "new" / "estimates.json").read_text())
    return data["median"]["point_estimate"]


def show(ns):
    return f"{ns / 1000:.1f} µs" if ns < 1e6 else f"{ns / 1e6:.2f} ms"


print("| operation | Warden | baseline | ratio | goal |")
print("|---|---|---|---|---|")
for label, group, ours, base, goal in ROWS:
    a, b = median_ns(group, ours), median_ns(group, base)
    verdict = "met" if a / b <= goal else "missed"
    print(f"| {label} | {show(a)} | {show(b)} ({base}) | {a / b:.2f}× | ≤ {goal}× ({verdict}) |")
