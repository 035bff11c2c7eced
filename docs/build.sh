#!/usr/bin/env bash
# Builds the user guide into docs/book/ with mdbook, installed the first time
# into .tools/cargo by `cargo install` (about two minutes). The demo runs this;
# the tests (host/warden-docs/tests/book.rs) build the guide with the same
# mdbook and also check its links, its generated reference pages and its
# runnable examples.
set -Eeuo pipefail
trap 'echo "docs/build.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
MDBOOK=0.5.4
docs=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$docs")
mdbook=$repo/.tools/cargo/bin/mdbook
if ! "$mdbook" --version 2>/dev/null | grep -qx "mdbook v$MDBOOK"; then
    echo "installing mdbook $MDBOOK (about two minutes, once)" >&2
    # Without the `serve` and `watch` features: only `mdbook build` is needed.
    cargo install --quiet --locked mdbook --version "$MDBOOK" --no-default-features --features search --root "$repo/.tools/cargo"
fi
if ! said=$("$mdbook" build "$docs" 2>&1); then
    echo "$said" >&2
    echo "docs/build.sh: mdbook could not build the guide (see above)" >&2
    exit 1
fi
# Anything but mdbook's progress lines (a warning, say) is shown.
grep -v ' INFO ' <<<"$said" >&2 || true
echo "the user guide is in $docs/book/index.html" >&2
