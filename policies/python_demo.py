"""The Python package in a few lines, as `bash policies/demo.sh` shows it:
a read, a refusal in the sandbox's words, a write a person (here a
function) approves, a component tool and a command in the OS sandbox.

    python policies/python_demo.py EXAMPLE_FOLDER GUESTS_FOLDER
"""

import sys

import warden

example, guests = sys.argv[1], sys.argv[2]


def approve(request: warden.ApprovalRequest) -> str:
    print(f"  the approver is asked: {request.question}")
    return "once"


sandbox = warden.Sandbox.from_policy(f"{example}/policy.yaml", approver=approve)
print("read:", sandbox.read("/portfolio/reports/q3.md").splitlines()[0])
try:
    sandbox.read("/portfolio/../../etc/passwd")
except warden.errors.PathNotInSandboxError as refusal:
    print("refused:", str(refusal).replace("\n", " | "))
print("write:", sandbox.write("/portfolio/drafts/from-python.md", "# From Python\n"))

tools = warden.Sandbox.from_policy(f"{example}/tools.yaml")
print("tool:", tools.call_tool(f"{guests}/textkit.wasm", "count", {"path": "/portfolio/notes.md"}).output)
ran = tools.exec(["sh", "-c", "ls drafts"])
print(f"command (in an OS sandbox: {ran.sandboxed}):", " ".join(ran.stdout.split()))
