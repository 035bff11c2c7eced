#!/usr/bin/env bash
# The main job, end to end: build Warden, validate the example policy, and use
# its capability filesystem as a tool would (on a scratch copy of the example tree).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --quiet --manifest-path "$repo/Cargo.toml" -p warden
warden="${CARGO_TARGET_DIR:-$repo/target}/debug/warden"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp -r "$repo/policies/example" "$scratch/"
policy="$scratch/example/policy.yaml"

step() {
    printf '\n$ warden %s\n' "$*"
    set +e
    "$warden" "$@"
    local status=$?
    set -e
    printf '[exit %d]\n' "$status"
}

step check "$policy"
step fs --policy "$policy" list
step fs --policy "$policy" read /portfolio/reports/q3.md
step fs --policy "$policy" read /portfolio/credentials.txt
step fs --policy "$policy" read /portfolio/../../etc/passwd
echo "Q4 outlook: steady." | step fs --policy "$policy" --worker writer write /portfolio/drafts/q4.md
echo "overwrite" | step fs --policy "$policy" write /pipeline/status.md
step fs --policy "$policy" --worker analyzer list /
step fs --policy "$policy" --worker analyzer read /portfolio/notes.md
