"""Component tools through the Python API: answers, refusals in the
sandbox's words, limits that stop a hostile tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import warden
from warden import errors


@pytest.fixture
def sandbox(tools_policy: Path) -> warden.Sandbox:
    return warden.Sandbox.from_policy(tools_policy)


def test_echo(sandbox: warden.Sandbox, component) -> None:
    result = sandbox.call_tool(component("echo.wasm"), "echo", {"text": "hello"})
    assert json.loads(result.output) == {"text": "hello"}
    assert result.fuel_consumed > 0


def test_a_tool_reads_through_the_sandbox(sandbox: warden.Sandbox, component) -> None:
    result = sandbox.call_tool(component("textkit.wasm"), "count", {"path": "/portfolio/notes.md"})
    assert json.loads(result.output)["path"] == "/portfolio/notes.md"


def test_a_tool_escaping_is_refused_in_the_sandbox_words(sandbox: warden.Sandbox, component) -> None:
    with pytest.raises(errors.ToolDeniedError) as raised:
        sandbox.call_tool(component("hostile/escape_rs.wasm"), "escape", {"attempt": "absolute"})
    assert "Readable paths: /portfolio, /pipeline" in str(raised.value)
    assert isinstance(raised.value, PermissionError)


def test_a_spinning_tool_stops_at_its_time_limit(sandbox: warden.Sandbox, component) -> None:
    with pytest.raises(errors.ToolTimeoutError) as raised:
        sandbox.call_tool(component("hostile/stuck.wasm"), "spin", {}, limits={"timeout": 0.3, "fuel": 10**15})
    assert str(raised.value) == "the tool ran past its time limit of 300ms"
    assert isinstance(raised.value, TimeoutError)


def test_fuel_and_memory_limits(sandbox: warden.Sandbox, component) -> None:
    with pytest.raises(errors.ToolLimitError) as raised:
        sandbox.call_tool(component("hostile/stuck.wasm"), "spin", {}, limits={"fuel": 100_000})
    assert str(raised.value) == "the tool ran out of fuel (limit: 100000)"
    with pytest.raises(errors.ToolLimitError):
        sandbox.call_tool(component("hostile/stuck.wasm"), "hog", {}, limits={"memory": "16MiB"})


def test_bad_input_and_bad_limits(sandbox: warden.Sandbox, component) -> None:
    with pytest.raises(errors.ToolInputError) as raised:
        sandbox.call_tool(component("echo.wasm"), "echo", "{not json")
    assert str(raised.value).startswith("the input is not JSON: ")
    with pytest.raises(errors.ToolUsageError) as raised:
        sandbox.call_tool(component("echo.wasm"), "echo", {}, limits={"memory": "lots"})
    assert str(raised.value) == "limits: memory: 'lots' is not a size; write e.g. 4096, 64KiB or 256MiB"
    with pytest.raises(TypeError):
        sandbox.call_tool(component("echo.wasm"), "echo", {}, limits={"cpu": 1})


def test_a_command_component_is_not_a_tool(sandbox: warden.Sandbox, component) -> None:
    with pytest.raises(errors.ToolUsageError) as raised:
        sandbox.call_tool(component("hello.wasm"), "hello", {})
    assert str(raised.value) == "this component is a command (it exports `wasi:cli/run`), not a tool; use `warden run`"


def test_a_missing_component(sandbox: warden.Sandbox, tmp_path: Path) -> None:
    with pytest.raises(errors.ToolLoadError) as raised:
        sandbox.call_tool(tmp_path / "none.wasm", "x", {})
    assert str(raised.value).startswith(f"cannot load {tmp_path / 'none.wasm'}: ")


def test_a_tool_write_is_asked_and_runs_again_once_allowed(example: Path, component) -> None:
    asked: list[str] = []

    def approver(request: warden.ApprovalRequest) -> str:
        asked.append(f"{request.tool}: {request.access} {request.path}")
        return "once"

    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=approver)
    sandbox.call_tool(component("textkit.wasm"), "report", {"source": "/portfolio", "output": "/portfolio/drafts/r.md"})
    assert asked == ["textkit.wasm report: write /portfolio/drafts/r.md"]
    assert (example / "portfolio" / "drafts" / "r.md").read_text().startswith("#")


def test_a_tool_write_declined_is_refused_in_the_sandbox_words(example: Path, component) -> None:
    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=lambda request: "deny")
    with pytest.raises(errors.ToolDeniedError) as raised:
        sandbox.call_tool(component("textkit.wasm"), "report", {"source": "/portfolio", "output": "/portfolio/drafts/r.md"})
    assert str(raised.value) == "Cannot write to '/portfolio/drafts/r.md': the user declined access.\nWritable paths: none"
    assert not (example / "portfolio" / "drafts" / "r.md").exists()


def test_threads_asking_at_once_get_their_own_answers(example: Path) -> None:
    import threading

    def approver(request: warden.ApprovalRequest) -> str:
        return "once" if request.path.endswith("yes.md") else "deny"

    sandbox = warden.Sandbox.from_policy(example / "policy.yaml", approver=approver)
    outcomes: dict[str, str] = {}

    def write(name: str) -> None:
        try:
            sandbox.write(f"/portfolio/{name}", name)
            outcomes[name] = "written"
        except errors.ApprovalDeniedError:
            outcomes[name] = "denied"

    threads = [threading.Thread(target=write, args=(f"{n}-{kind}.md",)) for n in range(8) for kind in ("yes", "no")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(outcome == ("written" if name.endswith("yes.md") else "denied") for name, outcome in outcomes.items())
    assert len(outcomes) == 16
    assert sorted(p.name for p in (example / "portfolio").glob("*-*.md")) == sorted(f"{n}-yes.md" for n in range(8))
