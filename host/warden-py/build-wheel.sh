#!/usr/bin/env bash
# Builds the `warden-sandbox` wheel into target/wheels.
#
#   bash host/warden-py/build-wheel.sh            a release wheel (what a release ships)
#   bash host/warden-py/build-wheel.sh --dev      the dev profile, over the crates `cargo build`
#                                                 compiled already (what CI tests; minutes faster)
#
# The wheel holds the native extension (the library and the `warden` command
# in one: one copy of wasmtime) and the network bridge program that commands
# under a network allowlist start inside their sandbox. maturin comes from
# PyPI into .tools/py, as guests/build.sh installs the other Python tools.
set -Eeuo pipefail
trap 'echo "build-wheel.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
MATURIN=1.16.0

case "${1:-}" in
    --dev) profile=dev; dir=debug; strip=(--strip) ;;
    "") profile=release; dir=release; strip=() ;;
    *) echo "usage: build-wheel.sh [--dev]" >&2; exit 2 ;;
esac

if [ ! -x "$repo/.tools/py/bin/python" ]; then
    python3 -m venv "$repo/.tools/py"
fi
if ! "$repo/.tools/py/bin/maturin" --version 2>/dev/null | grep -q "$MATURIN"; then
    "$repo/.tools/py/bin/pip" install --quiet --disable-pip-version-check "maturin==$MATURIN"
fi

cargo build --quiet --locked --manifest-path "$repo/Cargo.toml" --profile "$profile" -p warden-net --bin warden-net-bridge
mkdir -p "$here/python/warden/_bin"
install -m 0755 "$repo/target/$dir/warden-net-bridge" "$here/python/warden/_bin/warden-net-bridge"
strip "$here/python/warden/_bin/warden-net-bridge" 2>/dev/null || true

"$repo/.tools/py/bin/maturin" build --quiet --locked --manifest-path "$here/Cargo.toml" --profile "$profile" "${strip[@]}" \
    --out "$repo/target/wheels"
