"""An agent of pydantic-ai (PyPI `pydantic-ai-slim[mcp]`) with Warden as its
MCP toolset over stdio, driven by a `FunctionModel` instead of an LLM: it reads
an allowed file, then a path outside the sandbox, and the test checks that the
model was given the file's text and then Warden's exact denial.

Usage: python pydantic_ai_agent.py WARDEN_BINARY FOLDER
"""
import asyncio
import os
import sys

from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

WARDEN, ROOT = sys.argv[1], os.path.abspath(sys.argv[2])
POLICY = os.path.join(ROOT, "policy.yaml")
DENIAL = "Cannot access '/etc/passwd': path is outside sandbox.\nReadable paths: /notes"

os.makedirs(os.path.join(ROOT, "notes"), exist_ok=True)
with open(os.path.join(ROOT, "notes/plan.md"), "w") as f:
    f.write("ship it")
with open(POLICY, "w") as f:
    f.write("version: 1\nsandbox:\n  paths:\n    notes: { root: ./notes }\n")

seen = []


def model(messages, info: AgentInfo):
    """Reads the plan, then tries /etc/passwd, then stops; keeps what it was told."""
    for part in messages[-1].parts:
        if isinstance(part, ToolReturnPart):
            seen.append(("return", part.content))
        elif isinstance(part, RetryPromptPart):
            seen.append(("retry", part.content))
    calls = sum(isinstance(p, ToolCallPart) for m in messages for p in getattr(m, "parts", []))
    if calls == 0:
        return ModelResponse(parts=[ToolCallPart("read_file", {"path": "/notes/plan.md"})])
    if calls == 1:
        return ModelResponse(parts=[ToolCallPart("read_file", {"path": "/etc/passwd"})])
    return ModelResponse(parts=[TextPart("done")])


async def main():
    toolset = MCPToolset(StdioTransport(WARDEN, ["mcp", "--policy", POLICY]))
    agent = Agent(FunctionModel(model), toolsets=[toolset])
    async with agent:
        result = await agent.run("Read the plan.")
    assert result.output == "done", result.output
    assert seen[0][0] == "return" and "ship it" in str(seen[0][1]), seen
    # The tool error reaches the model as Warden's own words, exactly.
    assert seen[1][1] == DENIAL, seen
    print("ok pydantic-ai: the model got the file, then the exact denial")


asyncio.run(main())
