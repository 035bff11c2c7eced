#!/usr/bin/env bash
# The Python package's benchmarks (see bench/bench.py): a release wheel in a
# venv of its own, beside pydantic-ai-filesystem-sandbox 0.9.0 and the Rust
# library's warm-call example, all built here.
#   bash host/warden-py/bench.sh
set -Eeuo pipefail
trap 'echo "bench.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=$repo/target/python-bench/venv

rm -f "$repo"/target/wheels/warden_sandbox-*.whl
bash "$here/build-wheel.sh"
cargo build --quiet --locked --release --manifest-path "$repo/Cargo.toml" -p warden-wasm --example warm_call

python3 -m venv --clear "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$repo"/target/wheels/warden_sandbox-*.whl pydantic-ai-slim==2.68.0
# The reference names the whole pydantic-ai; pydantic-ai-slim is what it uses.
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps pydantic-ai-filesystem-sandbox==0.9.0 pydantic-ai-blocking-approval==0.8.0
"$venv/bin/python" "$here/bench/bench.py" "$repo/target/release/examples/warm_call"
