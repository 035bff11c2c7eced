"""notes: search a folder of notes, and write a summary of it. Python twin of guests/js/notes."""
import os

from warden_tool import InvalidInput, Toolbox, log

toolbox = Toolbox()
MAX_MATCHES = 200


def files_under(path):
    """The files at or under `path`, in name order; the sandbox lists in that order too."""
    if not os.path.isdir(path):
        yield path
        return
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.is_dir(follow_symlinks=False):
            yield from files_under(entry.path)
        elif entry.is_file():
            yield entry.path


@toolbox.tool("search", "Find the lines containing a text (case-insensitive) in a file or a folder of files.", {
    "type": "object",
    "required": ["pattern", "path"],
    "properties": {"pattern": {"type": "string", "minLength": 1}, "path": {"type": "string"}},
})
def search(args):
    pattern = args["pattern"].lower()
    if not pattern:
        raise InvalidInput("the pattern is empty")
    lines, found = [], 0
    for path in files_under(args["path"]):
        with open(path, encoding="utf-8", errors="replace") as file:
            for number, line in enumerate(file, 1):
                if pattern in line.lower():
                    found += 1
                    if found <= MAX_MATCHES:
                        lines.append(f"{path}:{number}: {line.rstrip()}")
    lines.append(f"{found} match{'' if found == 1 else 'es'}")
    return "\n".join(lines)


@toolbox.tool("summarize", "Write a Markdown summary (lines, words, first heading of each file) of a folder to a file.", {
    "type": "object",
    "required": ["path", "output"],
    "properties": {"path": {"type": "string"}, "output": {"type": "string"}},
})
def summarize(args):
    source, output = args["path"], args["output"]
    rows = []
    for path in files_under(source):
        with open(path, encoding="utf-8", errors="replace") as file:
            text = file.read()
        heading = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#")), "")
        rows.append(f"| {path} | {text.count(chr(10))} | {len(text.split())} | {heading} |")
    document = f"# Summary of {source}\n\n| file | lines | words | first heading |\n|---|---|---|---|\n"
    document += "".join(row + "\n" for row in rows) + f"\n{len(rows)} files.\n"
    with open(output, "w", encoding="utf-8") as file:
        file.write(document)
    log("info", f"summarized {len(rows)} files")
    return f"wrote {output} ({len(document.encode())} bytes, {len(rows)} files)"


WitWorld = toolbox.world()
