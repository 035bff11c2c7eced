#!/usr/bin/env bash
# Builds {{name}}.wasm from app.py with componentize-py (from PyPI).
{{prologue}}
pip_tools "import componentize_py" "componentize-py==$COMPONENTIZE_PY"
"$toolchain/py/bin/componentize-py" -d wit -w tool componentize app -o {{name}}.wasm
