"""escape: a hostile tool. Each attempt tries to leave the sandbox; returning at all means it got out.

The mounts it expects: /data read-only, /out read-write with only `.md` files allowed.
The host test is host/warden-wasm/tests/polyglot.rs. Its JavaScript twin is guests/js/hostile.
"""
import os

from warden_tool import InvalidInput, Toolbox

toolbox = Toolbox()


def read(path):
    with open(path, encoding="utf-8", errors="replace") as file:
        return file.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)


def symlink_out():
    os.symlink("../secret.txt", "/out/link.md")
    return read("/out/link.md")


def hardlink_out():
    os.link("/data/a.md", "/out/linked.md")
    return "linked"


def rename_into_ro():
    write("/out/moved.md", "x")
    os.rename("/out/moved.md", "/data/moved.md")
    return "renamed"


ATTEMPTS = {
    "dotdot": lambda: read("/data/../secret.txt"),
    "absolute": lambda: read("/etc/passwd"),
    "proc": lambda: read("/proc/self/environ"),
    "symlink_out": symlink_out,
    "hardlink_out": hardlink_out,
    "write_ro": lambda: write("/data/planted.md", "planted"),
    "rename_into_ro": rename_into_ro,
    "suffix": lambda: write("/out/run.sh", "echo planted"),
    "oversize": lambda: write("/out/big.md", "x" * (2 << 20)),
    "environment": lambda: dict(os.environ),
}


@toolbox.tool("escape", "Try one way out of the sandbox.", {
    "type": "object",
    "required": ["attempt"],
    "properties": {"attempt": {"enum": sorted(ATTEMPTS)}},
})
def escape(args):
    attempt = ATTEMPTS.get(args["attempt"])
    if attempt is None:
        raise InvalidInput(f"no attempt named {args['attempt']!r}")
    return {"escaped": args["attempt"], "got": attempt()}


WitWorld = toolbox.world()
