#!/usr/bin/env python3
"""Prints the benchmarks chapter's (docs/src/benchmarks.md) spawn table from criterion's medians (target/criterion/spawn_true)."""
import json
import pathlib
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion") / "spawn_true"


def median_ms(name):
    return json.loads((ROOT / name / "new" / "estimates.json").read_text())["median"]["point_estimate"] / 1e6


plain, raw, warden = median_ms("plain"), median_ms("raw_bwrap"), median_ms("warden_exec")
print("| spawn `/bin/true` (in-process, criterion) | median | vs raw bwrap |")
print("|---|---|---|")
print(f"| plain spawn | {plain:.2f} ms | {plain / raw:.2f}× |")
print(f"| raw `bwrap`, Warden's mounts and flags | {raw:.2f} ms | 1.00× |")
verdict = "met" if warden / raw <= 1.15 else "missed"
print(f"| `ShellSandbox::execute_argv` (warden exec) | {warden:.2f} ms | {warden / raw:.2f}× (goal ≤ 1.15×: {verdict}) |")
