#!/usr/bin/env bash
# Builds {{name}}.wasm from app.js with componentize-js (from npm; needs node and npm).
{{prologue}}
cli=$toolchain/js/node_modules/@bytecodealliance/componentize-js/src/cli.js
if [ ! -f "$cli" ]; then
    mkdir -p "$toolchain/js"
    # componentize-js imports preview2-shim at run time without depending on it.
    npm install --silent --no-audit --no-fund --prefix "$toolchain/js" \
        "@bytecodealliance/componentize-js@$COMPONENTIZE_JS" "@bytecodealliance/preview2-shim@$PREVIEW2_SHIM"
fi
# -d http fetch-event: a tool needs no wasi:http, which Warden does not offer.
node "$cli" --wit wit -n tool -d http fetch-event -o {{name}}.wasm app.js
