"""The container bench of this build and of another (an earlier commit's),
run in turns, so that a busy spell of the machine falls on both: the median
of each build's `execute("true")` medians, and their ratio.

Usage: python3 host/warden-shell/benches/container_vs.py THIS_BENCH BASELINE_BENCH [TURNS]
Each argument is a bench executable (`cargo bench -p warden-shell --bench
container --no-run` prints where it is), run from the repository's root.
"""
import re
import statistics
import subprocess
import sys

ROW = re.compile(r'^\| execute\("true"\).*?\| ([0-9.]+) ms \|')


def execute_median(bench):
    out = subprocess.run([bench, "--bench"], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        match = ROW.match(line)
        if match:
            return float(match.group(1)), out
    raise SystemExit(f"no execute row in the output of {bench}:\n{out}")


def main():
    this, baseline = sys.argv[1], sys.argv[2]
    turns = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    ours, theirs = [], []
    for turn in range(turns):
        for bench, into in ((this, ours), (baseline, theirs)):
            median, out = execute_median(bench)
            into.append(median)
            if turn == turns - 1:
                print(f"--- {bench}\n{out}")
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f'execute("true"), median of {turns} runs each, in turns: this build {a:.2} ms {ours}, baseline {b:.2} ms {theirs}: {a / b:.2}x')


main()
