#!/usr/bin/env python3
"""What joining a pids cgroup costs one process, by the way it joins (root, cgroup v1):
a fresh child writes `0` to `cgroup.procs` (moves its thread group, under the
kernel's global cgroup_threadgroup_rwsem, whose writer waits for an RCU grace
period) or to `tasks` (moves the calling thread only, without that lock).
Each join is alone, 0.3 s after the last, as one command's join is in practice
(back to back, the lock's slow path is skipped and both are fast).

Usage: sudo python3 host/warden-shell/benches/cgroup_join.py [RUNS]
"""
import os
import statistics
import sys
import time

BASE = "/sys/fs/cgroup/pids"
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 12


def join_ms(file, n):
    d = f"{BASE}/warden-bench-{os.getpid()}-{file}-{n}"
    os.mkdir(d)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        start = time.perf_counter()
        with open(f"{d}/{file}", "w") as f:
            f.write("0")
        os.write(w, str(time.perf_counter() - start).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    elapsed = float(os.read(r, 64)) * 1000
    os.rmdir(d)
    return elapsed


def main():
    if not os.path.isdir(BASE):
        sys.exit(f"{BASE} is not here: this measures cgroup v1's pids hierarchy")
    samples = {"cgroup.procs": [], "tasks": []}
    for n in range(RUNS):
        for file in samples:
            samples[file].append(join_ms(file, n))
            time.sleep(0.3)
    print(f"| join a pids cgroup (v1, {RUNS} lone joins each) | median | max |")
    print("|---|---|---|")
    for file, s in samples.items():
        print(f"| write `0` to `{file}` | {statistics.median(s):.2f} ms | {max(s):.2f} ms |")


main()
