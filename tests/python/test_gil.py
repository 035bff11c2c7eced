"""The GIL is released around every operation: another Python thread runs
while one waits in a read, a tool call or a command. (How much time two
threads reading together save is measured in the benchmark, not here.)"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

import warden


def python_runs_meanwhile(work: Callable[[], object]) -> int:
    """How many times another thread went round a pure-Python loop while `work` ran."""
    done = threading.Event()
    rounds = 0

    def count() -> None:
        nonlocal rounds
        while not done.is_set():
            rounds += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        work()
    finally:
        done.set()
        counter.join()
    return rounds


def big_sandbox(tmp_path: Path) -> warden.Sandbox:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "big.txt").write_text("x" * (64 << 20))
    return warden.Sandbox.from_config({"version": 1, "sandbox": {"paths": {"data": {"root": "./data", "mode": "ro"}}}}, base=tmp_path)


def test_a_read_lets_other_threads_run(tmp_path: Path) -> None:
    sandbox = big_sandbox(tmp_path)
    # Held for a 64 MiB read and decode, the GIL would leave the counter near 0.
    rounds = python_runs_meanwhile(lambda: [sandbox.read_bytes("/data/big.txt") for _ in range(5)])
    assert rounds > 10_000


def test_a_command_lets_other_threads_run(tools_policy: Path) -> None:
    sandbox = warden.Sandbox.from_policy(tools_policy)
    rounds = python_runs_meanwhile(lambda: sandbox.exec("sleep 0.3"))
    assert rounds > 10_000


def test_a_tool_call_lets_other_threads_run(tools_policy: Path, component) -> None:
    sandbox = warden.Sandbox.from_policy(tools_policy)
    stuck = component("hostile/stuck.wasm")

    def spin() -> None:
        try:
            sandbox.call_tool(stuck, "spin", {}, limits={"timeout": 0.3, "fuel": 10**15})
        except warden.errors.ToolTimeoutError:
            pass

    assert python_runs_meanwhile(spin) > 10_000


def test_threads_share_one_sandbox(tools_policy: Path) -> None:
    sandbox = warden.Sandbox.from_policy(tools_policy)
    failures: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(50):
                sandbox.write(f"/portfolio/t{n}.md", f"{n}:{i}")
                assert sandbox.read(f"/portfolio/t{n}.md") == f"{n}:{i}"
        except BaseException as e:  # noqa: BLE001 - reported below
            failures.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
