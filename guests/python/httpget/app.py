"""httpget: one GET with warden_tool.http_get, in the `tool-http` world: the
Python twin of guests/c/httpget, for the network allowlist's tests."""
from warden_tool import Toolbox, http_get

toolbox = Toolbox()


@toolbox.tool("get", "GET scheme://authority/path and report the status and the body's size.", {
    "type": "object",
    "required": ["authority"],
    "properties": {"scheme": {"enum": ["http", "https"]}, "authority": {"type": "string"}, "path": {"type": "string"}},
})
def get(args):
    status, body = http_get(f"{args.get('scheme', 'http')}://{args['authority']}{args.get('path', '/')}")
    return {"status": status, "bytes": len(body)}


WitWorld = toolbox.world()
