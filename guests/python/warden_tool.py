"""Writing Warden tools in Python: declare tools, and every exception becomes a `tool-error`.

    from warden_tool import Toolbox, InvalidInput

    toolbox = Toolbox()

    @toolbox.tool("shout", "Upper-case a text.", {"type": "object", "required": ["text"],
                                                  "properties": {"text": {"type": "string"}}})
    def shout(args):
        return args["text"].upper()

    WitWorld = toolbox.world()   # componentize-py looks for this name

A tool gets its input as a dict and returns a str (or anything JSON can encode).
Files are plain Python (`open`, `os.scandir`): the sandbox's mounts are the preopens.
A tool built for the `tool-http` world (`componentize-py -w tool-http`) can send
HTTP requests with `http_get(url)`: Warden checks each against the policy's
network allowlist, and a refused one is reported in the sandbox's words.
"""
import errno
import json
from urllib.parse import urlsplit

import wit_world
from componentize_py_types import Err
from wit_world.imports import host, preopens
from wit_world.imports.streams import StreamError_Closed

try:  # Imported at build time or never: componentize-py keeps only what the build imported.
    from wit_world.imports import outgoing_handler
    from wit_world.imports import wasi_http_types as http
except ImportError:  # a tool built for the `tool` world has no wasi:http
    outgoing_handler = http = None

# Errors that mean "the sandbox refused", as wasi-libc reports them.
REFUSALS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.EFBIG, getattr(errno, "ENOTCAPABLE", 76)}


class InvalidInput(Exception):
    """Raise this when the input makes no sense; the caller sees `invalid-input`."""


def log(level, message):
    """Adds a line to the host's log for this call: level is "trace", "debug", "info", "warn" or "error"."""
    host.log(host.Level[level.upper()], message)


class Toolbox:
    def __init__(self):
        self._tools = {}

    def tool(self, name, description, input_schema):
        """Registers the decorated function as tool `name`."""
        def register(function):
            self._tools[name] = (description, input_schema, function)
            return function
        return register

    def world(self):
        """The class componentize-py instantiates to serve `describe` and `call`."""
        tools = self._tools

        class World(wit_world.WitWorld):
            def describe(self):
                return [wit_world.ToolInfo(name, description, json.dumps(schema))
                        for name, (description, schema, _) in tools.items()]

            def call(self, name, input):
                try:
                    return _run(tools, name, input)
                except Err:
                    raise
                except BaseException as error:  # noqa: BLE001 - nothing may become a trap
                    raise Err(_tool_error(error))

        return World


class HttpError(Exception):
    """A request wasi:http could not make (the host refused it, or the server failed)."""


def http_get(url):
    """GETs `url` (http or https) through wasi:http; returns (status, body bytes).

    urllib and sockets have no network in a component: the request goes to the
    host, which checks it against the network allowlist before connecting.
    """
    if outgoing_handler is None:
        raise HttpError("this tool was built without wasi:http: build it for the `tool-http` world")
    parts = urlsplit(url)
    request = http.OutgoingRequest(http.Fields())
    request.set_method(http.Method_Get())
    request.set_scheme(http.Scheme_Https() if parts.scheme == "https" else http.Scheme_Http())
    request.set_authority(parts.netloc)
    request.set_path_with_query((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
    try:
        future = outgoing_handler.handle(request, None)
        while (answer := future.get()) is None:
            future.subscribe().block()
    except Err as error:
        raise HttpError(f"{url}: {error.value}") from None
    if isinstance(answer, Err) or isinstance(answer.value, Err):
        raise HttpError(f"{url}: {answer.value if isinstance(answer, Err) else answer.value.value}")
    body = bytearray()
    # Each resource is dropped before the one it came from: the stream, the body, the response.
    with answer.value.value as response, response.consume() as incoming, incoming.stream() as stream:
        while True:
            try:
                body += stream.blocking_read(65536)
            except Err as error:
                if isinstance(error.value, StreamError_Closed):
                    break
                raise HttpError(f"{url}: reading the body: {error.value}") from None
        status = response.status()
    return status, bytes(body)


def _run(tools, name, input):
    if name not in tools:
        raise InvalidInput(f"no tool named {name!r}; this component offers: {', '.join(sorted(tools))}")
    _, schema, function = tools[name]
    try:
        args = json.loads(input)
    except ValueError as error:
        raise InvalidInput(f"the input is not JSON: {error}") from None
    if not isinstance(args, dict):
        raise InvalidInput("the input must be a JSON object")
    missing = [key for key in schema.get("required", []) if key not in args]
    if missing:
        raise InvalidInput(f"missing field {missing[0]!r}")
    result = function(args)
    return result if isinstance(result, str) else json.dumps(result, separators=(",", ":"))


def _outside_mounts(path):
    """wasi-libc says "no such file" for a path under no mount: that is a refusal too."""
    if not isinstance(path, str) or not path.startswith("/"):
        return False
    mounts = [name.rstrip("/") for _, name in preopens.get_directories()]
    return not any(path == m or path.startswith(m + "/") or m == "" for m in mounts)


def _tool_error(error):
    if isinstance(error, InvalidInput):
        return wit_world.ToolError_InvalidInput(str(error))
    if isinstance(error, OSError) and (error.errno in REFUSALS or _outside_mounts(error.filename)):
        # The path alone: Warden puts the sandbox's own message in its place.
        return wit_world.ToolError_Denied(error.filename or str(error))
    return wit_world.ToolError_Failed(f"{type(error).__name__}: {error}")
