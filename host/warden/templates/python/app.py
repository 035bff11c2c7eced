"""{{name}}: a Warden tool in Python. Counts the lines and words of a text file in the sandbox."""
from warden_tool import Toolbox

toolbox = Toolbox()


@toolbox.tool("{{name}}", "Count the lines and words of a text file.", {
    "type": "object",
    "required": ["path"],
    "properties": {"path": {"type": "string", "description": "e.g. /data/hello.md"}},
})
def count(args):
    path = args["path"]
    # Plain Python file access: the policy's mounts (/data, /out) are the only folders there are.
    with open(path, encoding="utf-8", errors="replace") as file:
        text = file.read()
    return f"{path}: {text.count(chr(10))} lines, {len(text.split())} words"


WitWorld = toolbox.world()
