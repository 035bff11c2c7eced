"""The demo's MCP exchange: the official Python MCP SDK drives `warden mcp`
over stdio, as an agent host would, and prints what it sees. The person who
is asked for an approval is played by a callback that allows once.

Usage: python mcp_demo.py WARDEN_BINARY POLICY
"""
import asyncio
import sys

from mcp import Client, StdioServerParameters, types

WARDEN, POLICY = sys.argv[1], sys.argv[2]


async def person(context, params):
    print(f"  [the person is asked] {params.message}")
    print("  [the person answers] allow once, /portfolio/drafts")
    return types.ElicitResult(action="accept", content={"decision": "once", "folder": "/portfolio/drafts"})


def show(result):
    words = result.content[0].text.replace("\n", "\n    ")
    return f"{'isError: ' if result.is_error else ''}{words}"


async def main():
    server = StdioServerParameters(command=WARDEN, args=["mcp", "--policy", POLICY])
    async with Client(server, elicitation_callback=person, client_info=types.Implementation(name="demo", version="1")) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        print(f"tools/list: {', '.join(tools)}")
        for name, args in [
            ("read_file", {"path": "/portfolio/reports/q3.md", "max_chars": 40}),
            ("write_file", {"path": "/pipeline/x.md", "content": "x"}),
            ("read_file", {"path": "/portfolio/../../etc/passwd"}),
            ("write_file", {"path": "/portfolio/drafts/from-mcp.md", "content": "written by an agent, allowed once"}),
        ]:
            print(f"tools/call {name} {args}")
            print(f"    {show(await client.call_tool(name, args))}")


asyncio.run(main())
