"""The Python package's benchmarks, each side by side with its baseline in
one run (rounds interleaved, the median of the rounds' per-call times):

- `Sandbox.read` of a 4 KiB file against a plain `open().read()` (goal
  ≤ 1.5×) and against pydantic-ai-filesystem-sandbox 0.9's
  `FileSystemToolset.read` on the same tree (goal ≤ 0.2×); the drop-in's
  `FileSystemToolset.read` beside the reference's;
- `call_tool` of the C `echo` tool against the Rust library's warm call
  (the `warm_call` example, run as its own process; goal ≤ 1.3×);
- the same reads and calls in one thread and in two at once, beside Python's own
  `open().read()` (which releases the GIL too): 1× when they run side by side.

Run by host/warden-py/bench.sh, which builds what it needs.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

import pydantic_ai_filesystem_sandbox as reference

import warden
import warden.pydantic_ai as dropin

REPO = Path(__file__).resolve().parents[3]
ROUNDS = 15


def per_call_ns(function: Callable[[], object], calls: int) -> float:
    started = time.perf_counter_ns()
    for _ in range(calls):
        function()
    return (time.perf_counter_ns() - started) / calls


def side_by_side(functions: dict[str, Callable[[], float]]) -> dict[str, float]:
    """Each function measures one batch and returns ns per call; rounds rotate their order."""
    times: dict[str, list[float]] = {name: [] for name in functions}
    names = list(functions)
    for round_ in range(ROUNDS):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            times[name].append(functions[name]())
    return {name: statistics.median(values) for name, values in times.items()}


def reads(tree: Path) -> None:
    data = tree / "data"
    data.mkdir()
    file = data / "f.txt"
    file.write_text(("warden " * 600)[:4096])
    sandbox = warden.Sandbox.from_config({"version": 1, "sandbox": {"paths": {"data": {"root": str(data), "mode": "ro"}}}})
    ref_tools = reference.FileSystemToolset(
        reference.Sandbox(reference.SandboxConfig(mounts=[reference.Mount(host_path=data, mount_point="/data", mode="ro")]))
    )
    our_tools = dropin.FileSystemToolset(
        dropin.Sandbox(dropin.SandboxConfig(mounts=[dropin.Mount(host_path=data, mount_point="/data", mode="ro")]))
    )
    assert sandbox.read("/data/f.txt") == file.read_text() == ref_tools.read("/data/f.txt").content == our_tools.read("/data/f.txt").content

    def plain() -> str:
        with open(file) as f:
            return f.read()

    calls = 2000
    medians = side_by_side(
        {
            "open().read()": lambda: per_call_ns(plain, calls),
            "warden Sandbox.read": lambda: per_call_ns(lambda: sandbox.read("/data/f.txt"), calls),
            "reference FileSystemToolset.read": lambda: per_call_ns(lambda: ref_tools.read("/data/f.txt"), calls),
            "drop-in FileSystemToolset.read": lambda: per_call_ns(lambda: our_tools.read("/data/f.txt"), calls),
        }
    )
    base = medians["open().read()"]
    ref = medians["reference FileSystemToolset.read"]
    print("\n## read of 4 KiB (median of %d rounds of %d calls)" % (ROUNDS, calls))
    print("| what | per call | vs open().read() | vs the reference's read |")
    print("|---|---|---|---|")
    for name, ns in medians.items():
        print(f"| {name} | {ns / 1000:.2f} µs | {ns / base:.2f}× | {ns / ref:.2f}× |")


def side_by_side_threads(tree: Path) -> None:
    data = tree / "big"
    data.mkdir()
    for n in range(2):
        (data / f"{n}.bin").write_bytes(b"x" * (64 << 10))
    sandbox = warden.Sandbox.from_config({"version": 1, "sandbox": {"paths": {"big": {"root": str(data), "mode": "ro"}}}})
    tools = warden.Sandbox.from_policy(_example(tree) / "tools.yaml")
    echo = REPO / "guests" / "out" / "echo.wasm"
    blob = b"x" * (1 << 20)

    def plain(n: int) -> None:
        with open(data / f"{n}.bin", "rb") as f:
            f.read()

    work: dict[str, tuple[Callable[[int], object], int]] = {
        "warden read_bytes, 64 KiB": (lambda n: sandbox.read_bytes(f"/big/{n}.bin"), 3000),
        "Python open().read(), 64 KiB (it releases the GIL too)": (plain, 3000),
        "warden call_tool, echo": (lambda n: tools.call_tool(echo, "echo", '{"n":1}'), 1000),
        "hashlib.sha256 of 1 MiB (CPU only, releases the GIL)": (lambda n: hashlib.sha256(blob).digest(), 300),
    }
    print("\n## The same work in one thread, then in two threads at once (each as much as the one)")
    print("| work | one thread | two threads | ratio (1× = fully side by side, 2× = one at a time) |")
    print("|---|---|---|---|")
    for name, (step, calls) in work.items():

        def timed(threads: int) -> float:
            running = [threading.Thread(target=lambda n=n: [step(n) for _ in range(calls)]) for n in range(threads)]
            started = time.perf_counter_ns()
            for t in running:
                t.start()
            for t in running:
                t.join()
            return time.perf_counter_ns() - started

        medians = side_by_side({"one": lambda: timed(1), "two": lambda: timed(2)})
        print(f"| {name} | {medians['one'] / 1e6:.1f} ms | {medians['two'] / 1e6:.1f} ms | {medians['two'] / medians['one']:.2f}× |")


def _example(tree: Path) -> Path:
    example = tree / "example"
    if not example.exists():
        shutil.copytree(REPO / "policies" / "example", example)
    return example


def tool_calls(tree: Path, warm_call: Path) -> None:
    policy = _example(tree) / "tools.yaml"
    echo = REPO / "guests" / "out" / "echo.wasm"
    text = json.dumps({"text": "hello"})
    sandbox = warden.Sandbox.from_policy(policy)
    assert json.loads(sandbox.call_tool(echo, "echo", text).output) == {"text": "hello"}
    calls = 2000

    def rust() -> float:
        done = subprocess.run([warm_call, policy, echo, "echo", text, str(calls)], capture_output=True, text=True, check=True)
        return float(done.stdout)

    def python() -> float:
        for _ in range(200):
            sandbox.call_tool(echo, "echo", text)
        return per_call_ns(lambda: sandbox.call_tool(echo, "echo", text), calls)

    medians = side_by_side({"Rust library, warm call": rust, "Python call_tool": python})
    base = medians["Rust library, warm call"]
    print(f"\n## echo tool call (median of {ROUNDS} rounds of {calls} calls)")
    print("| what | per call | vs the Rust library |")
    print("|---|---|---|")
    for name, ns in medians.items():
        print(f"| {name} | {ns / 1000:.1f} µs | {ns / base:.2f}× |")


def main() -> None:
    warm_call = Path(sys.argv[1])
    with tempfile.TemporaryDirectory() as tree:
        reads(Path(tree))
        tool_calls(Path(tree), warm_call)
        side_by_side_threads(Path(tree))


if __name__ == "__main__":
    main()
