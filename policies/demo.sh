#!/usr/bin/env bash
# The main job, end to end: install the system packages it needs (setup.sh),
# build the example tools (guests/build.sh installs their toolchains into
# .tools/ the first time) and Warden, then run the tools in sandboxes under the
# example policies, on a scratch copy of the example tree.
set -Eeuo pipefail
trap 'echo "policies/demo.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
repo="$(cd "$(dirname "$0")/.." && pwd)"
bash "$repo/policies/setup.sh"
bash "$repo/guests/build.sh"
bash "$repo/tests/browser/setup.sh"
bash "$repo/docs/build.sh"
# The README's second command runs the tests with cargo-nextest.
if ! cargo nextest --version >/dev/null 2>&1; then
    echo "installing cargo-nextest, the tests' runner (a few minutes, once)" >&2
    cargo install --quiet --locked cargo-nextest
fi
echo "building warden (the first build compiles wasmtime: several minutes)" >&2
bash "$repo/host/warden/build.sh" --quiet
guests="$repo/guests/out"
warden="${CARGO_TARGET_DIR:-$repo/target}/debug/warden"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp -r "$repo/policies/example" "$scratch/"
policy="$scratch/example/policy.yaml"
tools="$scratch/example/tools.yaml"

# A step may fail on purpose (a refusal is part of the demo): its exit status is shown.
step() {
    printf '\n$ warden %s\n' "$*"
    local status=0
    "$warden" "$@" || status=$?
    printf '[exit %d]\n' "$status"
}

step check "$tools"
step tools "$guests/textkit.wasm"
step call --policy "$tools" "$guests/textkit.wasm" grep --input '{"pattern":"Q","path":"/portfolio"}'
step call --policy "$tools" "$guests/textkit.wasm" report --input '{"source":"/portfolio","output":"/portfolio/drafts/report.md"}'
step fs --policy "$tools" read /portfolio/drafts/report.md
step call --policy "$tools" "$guests/textkit.wasm" report --input '{"source":"/portfolio","output":"/pipeline/report.md"}'
step call --policy "$tools" "$guests/textkit.wasm" count --input '{"path":"/portfolio/credentials.txt"}'
step call --policy "$tools" --worker analyzer "$guests/textkit.wasm" grep --input '{"pattern":"Q","path":"/portfolio/reports"}'
step call --policy "$tools" "$guests/notes_py.wasm" search --input '{"pattern":"q3","path":"/portfolio"}'
step call --policy "$tools" "$guests/notes_js.wasm" summarize --input '{"path":"/pipeline","output":"/portfolio/drafts/pipeline.md"}'
step call --policy "$tools" "$guests/notes_py.wasm" summarize --input '{"path":"/portfolio","output":"/pipeline/summary.md"}'
step run --policy "$tools" "$guests/wc.wasm" /portfolio/notes.md /pipeline/status.md
step run "$guests/hello.wasm" Warden
step run --timeout 200ms "$guests/hostile/loop.wasm"
step run --deterministic --stats "$guests/entropy.wasm"
step exec --policy "$tools" --cwd /portfolio -- /bin/sh -c 'echo "from a shell" > drafts/shell.md; cat drafts/shell.md; ls /root; echo x > ../pipeline/x.md'

# Command rules: how a line is split and judged; a forbidden one refused before it runs; an asked one
# refused with nobody to ask, then run with an answer given in advance.
commands="$scratch/example/commands.yaml"
step check "$commands"
step rules check --policy "$commands" -- env A=1 git -C /x push origin main
step rules check --policy "$commands" --script 'cd drafts && bash -lc "rm -rf ." || echo $(id)'
step exec --policy "$commands" --cwd /portfolio -- sh -c 'cd drafts && rm -rf .'
step exec --policy "$commands" --cwd /portfolio -- git push
step exec --policy "$commands" --cwd /portfolio --approve 'exec:git push' -- sh -c 'git push 2>/dev/null || echo "git push ran (approved); there is no repository here"'

# Tools from an OCI registry: a loopback registry (Debian's docker-registry); textkit and hello published as
# wasm artifacts, textkit signed in cosign's format (by openssl here; cosign itself is in docs/src/components/oci.md); textkit's
# tag pinned by warden lock and its signature checked; hello run by digest, then refused when a signature is required.
oci="$scratch/oci"
read -r oci_port oci_pid < <(bash "$repo/policies/oci/registry.sh" "$oci")
trap 'kill "$oci_pid" 2>/dev/null; rm -rf "$scratch"' EXIT
registry="127.0.0.1:$oci_port"
openssl ecparam -name prime256v1 -genkey -noout -out "$oci/acme.pem"
openssl ec -in "$oci/acme.pem" -pubout -out "$scratch/example/acme.pub" 2>/dev/null
textkit_digest=$(bash "$repo/policies/oci/publish.sh" "$registry" tools/textkit:v1 "$guests/textkit.wasm")
hello_digest=$(bash "$repo/policies/oci/publish.sh" "$registry" tools/hello:v1 "$guests/hello.wasm")
bash "$repo/policies/oci/sign.sh" "$registry" tools/textkit "$textkit_digest" "$oci/acme.pem"
oci_policy="$scratch/example/registry.yaml"
sed -i "s/REGISTRY_PORT/$oci_port/" "$oci_policy"
export WARDEN_CACHE_DIR="$oci/cache"
step pull --insecure-registry "$registry" --verify-key "$scratch/example/acme.pub" "oci://$registry/tools/textkit:v1"
step lock "$oci_policy"
step check "$oci_policy"
step call --policy "$oci_policy" "oci://$registry/tools/textkit@$textkit_digest" count --input '{"path":"/portfolio/notes.md"}'
step run --insecure-registry "$registry" "oci://$registry/tools/hello@$hello_digest" Warden
step run --insecure-registry "$registry" --verify-key "$scratch/example/acme.pub" "oci://$registry/tools/hello@$hello_digest" Warden
unset WARDEN_CACHE_DIR
kill "$oci_pid"

# The same policy's folders in a container (podman or docker), one per command, then one kept across commands.
# Its commands run as the writable mount's owner, never as root unless the policy
# says so (shell.container.user: root): run as root, the demo gives that folder to nobody.
if [ "$(id -u)" = 0 ]; then chown -R 65534:65534 "$scratch/example/portfolio"; fi
box="$scratch/example/container.yaml"
step check "$box"
step exec --policy "$box" -- sh -c 'pwd; echo "from a container" > drafts/container.md; cat drafts/container.md; echo "credentials.txt (deny_read) holds $(wc -c < credentials.txt) bytes here"; echo x > /pipeline/x.md'
step sandbox start --policy "$box" --name "demo-$$"
step exec --sandbox "demo-$$" -- sh -c 'echo "kept across commands" > /tmp/state'
step exec --sandbox "demo-$$" --timeout 1s -- sh -c 'sleep 60 & sleep 60'
step exec --sandbox "demo-$$" -- sh -c 'cat /tmp/state; ps -o pid,args'
step sandbox stop "demo-$$"

# Network by allowlist: a server on a loopback port, reached by name through the proxy;
# another port refused; a command that bypasses the proxy has no route; a component's HTTP GET and socket.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
net="$scratch/example/network.yaml"
net_box="$scratch/example/network-container.yaml"
sed -i "s/8642/$port/" "$net" "$net_box"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$scratch/example/pipeline" >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$scratch"' EXIT
python3 -c "import socket, time
for _ in range(100):
    try: socket.create_connection(('127.0.0.1', $port)).close(); break
    except OSError: time.sleep(0.05)"
step check "$net"
step exec --policy "$net" -- sh -c "curl -sS http://localhost:$port/status.md"
step exec --policy "$net" -- sh -c "curl -sS -f http://localhost:$((port + 1))/status.md"
step exec --policy "$net" -- sh -c "curl -sS --noproxy '*' http://localhost:$port/status.md"
step exec --policy "$net_box" -- sh -c "wget -q -O- http://localhost:$port/status.md; wget -q -O- http://localhost:$((port + 1))/status.md"
step call --policy "$net" "$guests/httpget.wasm" get --input "{\"authority\":\"localhost:$port\",\"path\":\"/status.md\"}"
step call --policy "$net" "$guests/httpget.wasm" get --input "{\"authority\":\"localhost:$((port + 1))\"}"
step call --stats --policy "$net" "$guests/hostile/net.wasm" probe --input "{\"port\":$((port + 1))}"

step check "$policy"
step fs --policy "$policy" list
step fs --policy "$policy" read /portfolio/reports/q3.md
step fs --policy "$policy" read /portfolio/credentials.txt
step fs --policy "$policy" read /portfolio/../../etc/passwd
# /portfolio needs approval for writes: nobody is asked here (no terminal), then an answer given in advance.
echo "Q4 outlook: steady." | step fs --policy "$policy" --worker writer write /portfolio/drafts/q4.md
echo "Q4 outlook: steady." | step fs --policy "$policy" --worker writer --approve write:/portfolio/drafts --audit "$scratch/audit.jsonl" write /portfolio/drafts/q4.md
step suggest --audit "$scratch/audit.jsonl"
echo "overwrite" | step fs --policy "$policy" write /pipeline/status.md
step fs --policy "$policy" --worker analyzer list /
step fs --policy "$policy" --worker analyzer read /portfolio/notes.md

# An agent's view: the official Python MCP SDK drives `warden mcp` over stdio.
printf '\n$ warden mcp --policy %s   (driven by the Python MCP SDK; an approval asked of the person)\n' "$policy"
"$repo/.tools/py/bin/python" "$repo/policies/mcp_demo.py" "$warden" "$policy"

# From Python: the wheel (the library and the `warden` command) in a virtual environment of its own.
printf '\n$ pip install warden-sandbox (the wheel, built here), then python policies/python_demo.py\n'
if ! bash "$repo/host/warden-py/build-wheel.sh" --dev >"$scratch/wheel.log" 2>&1; then
    cat "$scratch/wheel.log" >&2
    echo "demo: building the Python wheel failed (see above)" >&2
    exit 1
fi
python3 -m venv --clear "$scratch/venv"
"$scratch/venv/bin/pip" install --quiet --disable-pip-version-check "$repo"/target/wheels/warden_sandbox-*.whl
"$scratch/venv/bin/warden" --version
"$scratch/venv/bin/python" "$repo/policies/python_demo.py" "$scratch/example" "$guests"
