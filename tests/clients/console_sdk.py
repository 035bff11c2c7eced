"""The official Python MCP SDK as an agent host whose client takes no forms
(no elicitation callback), under `warden mcp --console`: one `write_file` to a
mount that asks for approval, answered by the person at Warden's console
(the Rust browser test clicks there).

Usage: python console_sdk.py WARDEN_BINARY POLICY AUDIT NAME
Prints `calling`, then `ok TEXT` or `error TEXT` with the call's result.
Warden's stderr (where the console's login file is named) is this script's.
"""
import asyncio
import sys

from mcp import Client, StdioServerParameters, types

WARDEN, POLICY, AUDIT, NAME = sys.argv[1:5]


async def main():
    server = StdioServerParameters(command=WARDEN, args=["mcp", "--policy", POLICY, "--audit", AUDIT, "--console", "127.0.0.1:0"])
    async with Client(server, mode="legacy", client_info=types.Implementation(name="python-sdk", version="1")) as client:
        print("calling", flush=True)
        result = await client.call_tool("write_file", {"path": f"/portfolio/drafts/{NAME}", "content": "x"})
        print(("error " if result.is_error else "ok ") + result.content[0].text, flush=True)


asyncio.run(main())
