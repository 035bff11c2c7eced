"""The `warden` command the wheel installs: on PATH, the same CLI, `warden mcp` included."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import warden


def warden_command() -> str:
    found = shutil.which("warden", path=os.path.dirname(sys.executable))
    assert found, "the wheel installs a `warden` command beside the interpreter"
    return found


def test_version() -> None:
    done = subprocess.run([warden_command(), "--version"], capture_output=True, text=True, check=True)
    assert done.stdout == f"warden {warden.__version__}\n"


def test_exit_statuses_and_errors_are_the_clis(tools_policy: Path) -> None:
    done = subprocess.run(
        [warden_command(), "fs", "--policy", str(tools_policy), "write", "/pipeline/x.md"],
        input="x",
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3
    assert done.stderr == "Cannot write to '/pipeline/x.md': path is read-only.\nWritable paths: /portfolio\n"


def test_a_network_allowlist_finds_the_bridge_in_the_package(example: Path) -> None:
    done = subprocess.run(
        [warden_command(), "exec", "--policy", str(example / "network.yaml"), "--", "sh", "-c", "echo $HTTP_PROXY"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("http://127.0.0.1:")


def test_mcp_over_stdio(tools_policy: Path) -> None:
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "/etc/passwd"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "/portfolio/notes.md"}}},
    ]
    done = subprocess.run(
        [warden_command(), "mcp", "--policy", str(tools_policy)],
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=60,
    )
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines()) if "id" in a}
    assert answers[1]["result"]["serverInfo"]["name"]
    refused = answers[2]["result"]
    assert refused["isError"] is True
    assert refused["content"][0]["text"] == "Cannot access '/etc/passwd': path is outside sandbox.\nReadable paths: /portfolio, /pipeline"
    read = json.loads(answers[3]["result"]["content"][0]["text"])
    assert read["content"] == (tools_policy.parent / "portfolio" / "notes.md").read_text()
