"""Drives `warden mcp` with the official Python MCP SDK (PyPI `mcp`), as an
agent host would: both protocol revisions, over stdio and over HTTP, with an
elicitation callback that answers once, for the session, or deny; each answer
is checked against the files and the audit log.

Usage: python mcp_sdk.py WARDEN_BINARY FOLDER
FOLDER gets a policy, a tree and an audit log of its own. Prints one
`ok <check>` line per check; any failure raises and exits non-zero.
"""
import asyncio
import json
import os
import re
import subprocess
import sys

from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

WARDEN, ROOT = sys.argv[1], os.path.abspath(sys.argv[2])
POLICY = os.path.join(ROOT, "policy.yaml")
AUDIT = os.path.join(ROOT, "audit.jsonl")


def setup():
    for folder in ("portfolio/drafts", "pipeline"):
        os.makedirs(os.path.join(ROOT, folder), exist_ok=True)
    with open(os.path.join(ROOT, "portfolio/notes.md"), "w") as f:
        f.write("hello notes")
    with open(POLICY, "w") as f:
        f.write("version: 1\nsandbox:\n  paths:\n"
                "    portfolio: { root: ./portfolio, mode: rw, write_approval: true }\n"
                "    pipeline: { root: ./pipeline }\n"
                f"  audit: {AUDIT}\n")


class Person:
    """Answers each form with the next decision, for the narrowest folder."""

    def __init__(self):
        self.decisions, self.forms = [], []

    async def __call__(self, context, params):
        self.forms.append(params)
        decision = self.decisions.pop(0)
        if decision == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"decision": decision, "folder": "/portfolio/drafts"})


def decisions(form):
    """The decisions a form offers, by value."""
    decision = form.requested_schema["properties"]["decision"]
    return [o["const"] for o in decision.get("oneOf", [])] or decision.get("enum")


def text(result):
    return result.content[0].text


def audit_lines():
    if not os.path.exists(AUDIT):
        return []
    with open(AUDIT) as f:
        return [json.loads(line) for line in f]


async def session(name, server, mode):
    person = Person()
    async with Client(server, mode=mode, elicitation_callback=person, client_info=types.Implementation(name="sdk-test", version="1")) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        assert tools[:7] == ["read_file", "write_file", "edit_file", "list_files", "delete_file", "move_file", "copy_file"], tools
        read = await client.call_tool("read_file", {"path": "/portfolio/notes.md"})
        assert not read.is_error and read.structured_content["content"] == "hello notes", read
        denied = await client.call_tool("write_file", {"path": "/pipeline/x.md", "content": "x"})
        assert denied.is_error and text(denied) == "Cannot write to '/pipeline/x.md': path is read-only.\nWritable paths: none", text(denied)
        before = len(audit_lines())
        path = f"/portfolio/drafts/{name}"
        person.decisions = ["once"]
        once = await client.call_tool("write_file", {"path": f"{path}-1.md", "content": "1"})
        assert not once.is_error and os.path.exists(os.path.join(ROOT, f"portfolio/drafts/{name}-1.md")), text(once)
        assert person.forms[-1].message.startswith(f"write_file asks to write {path}-1.md"), person.forms[-1].message
        person.decisions = ["deny"]
        refused = await client.call_tool("write_file", {"path": f"{path}-2.md", "content": "2"})
        assert refused.is_error and text(refused) == f"Cannot write to '{path}-2.md': the user declined access.\nWritable paths: none", text(refused)
        # Stateless HTTP (2026-07-28) keeps no session: "for this session" is not offered there.
        stateless = name == "http-2026"
        person.decisions = ["once", "once"] if stateless else ["session", "session"]
        first = await client.call_tool("write_file", {"path": f"{path}-3.md", "content": "3"})
        offered = decisions(person.forms[-1])
        assert offered == (["once", "deny"] if stateless else ["once", "session", "deny"]), offered
        asked = len(person.forms)
        later = await client.call_tool("write_file", {"path": f"{path}-4.md", "content": "4"})
        assert not first.is_error and not later.is_error, (text(first), text(later))
        if not stateless:
            # A session grant outlives the call where the client keeps a session.
            assert len(person.forms) == asked, "asked again inside a session grant"
        else:
            assert len(person.forms) == asked + 1
        assert not os.path.exists(os.path.join(ROOT, f"portfolio/drafts/{name}-2.md"))
        lines = audit_lines()[before:]
        assert [l["decision"] for l in lines[:3]] == ["allow", "deny", "allow"], lines
        assert all(l["client"] == "sdk-test" and l["tool"] == "write_file" for l in lines), lines
    print(f"ok {name}")


def with_token(url, token):
    """The HTTP transport to `url`, every request carrying the server's bearer token."""
    return streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))


def served(server):
    """The URL and token a `warden mcp --http` prints on its first lines."""
    url = re.search(r"serving MCP at (http://127\.0\.0\.1:\d+/mcp)", server.stderr.readline()).group(1)
    token_file = re.search(r"token file: (.+) \(this user only\)", server.stderr.readline()).group(1)
    assert server.stderr.readline().startswith("warden: for example: claude mcp add --transport http warden ")
    with open(token_file) as f:
        return url, f.read().strip()


async def two_clients_at_once(url, token):
    """Two HTTP sessions open together: a grant for one is not a grant for the other."""
    alice, bob = Person(), Person()
    info = lambda n: types.Implementation(name=n, version="1")
    async with Client(with_token(url, token), mode="legacy", elicitation_callback=alice, client_info=info("alice")) as a, \
            Client(with_token(url, token), mode="legacy", elicitation_callback=bob, client_info=info("bob")) as b:
        alice.decisions, bob.decisions = ["session"], ["deny"]
        first_a, first_b = await asyncio.gather(
            a.call_tool("write_file", {"path": "/portfolio/drafts/alice-1.md", "content": "a"}),
            b.call_tool("write_file", {"path": "/portfolio/drafts/bob-1.md", "content": "b"}),
        )
        assert not first_a.is_error, text(first_a)
        assert first_b.is_error and text(first_b) == "Cannot write to '/portfolio/drafts/bob-1.md': the user declined access.\nWritable paths: none", text(first_b)
        # Alice's session grant covers her next write; Bob is asked again and refused again.
        bob.decisions = ["deny"]
        second_a, second_b = await asyncio.gather(
            a.call_tool("write_file", {"path": "/portfolio/drafts/alice-2.md", "content": "a"}),
            b.call_tool("write_file", {"path": "/portfolio/drafts/bob-2.md", "content": "b"}),
        )
        assert not second_a.is_error and second_b.is_error, (text(second_a), text(second_b))
        assert (len(alice.forms), len(bob.forms)) == (1, 2), (alice.forms, bob.forms)
    drafts = os.listdir(os.path.join(ROOT, "portfolio/drafts"))
    assert "alice-2.md" in drafts and not any(d.startswith("bob") for d in drafts), drafts
    clients = [(l["client"], l["decision"]) for l in audit_lines() if l["client"] in ("alice", "bob")]
    assert sorted(clients) == [("alice", "allow"), ("bob", "deny"), ("bob", "deny")], clients
    print("ok two-http-clients")


async def main():
    setup()
    stdio = StdioServerParameters(command=WARDEN, args=["mcp", "--policy", POLICY])
    await session("stdio-2025", stdio, "legacy")
    await session("stdio-2026", stdio, "auto")
    server = subprocess.Popen([WARDEN, "mcp", "--policy", POLICY, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    try:
        url, token = served(server)
        await session("http-2025", with_token(url, token), "legacy")
        await session("http-2026", with_token(url, token), "auto")
        await two_clients_at_once(url, token)
    finally:
        server.kill()


asyncio.run(main())
