#!/usr/bin/env bash
# `warden exec --sandbox N -- true`, whole process, against the engine's own
# `exec` and (given a second binary) another Warden build, in interleaved
# pairs by farm-bench (this machine's tool library). Release build first:
#   bash host/warden/build.sh --release
#   host/warden-shell/benches/kept_exec.sh [podman|docker] [BASELINE_WARDEN]
set -euo pipefail
engine=${1:-podman}
baseline=${2:-}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
warden="$repo/target/release/warden"
work=$(mktemp -d)
name="bench$$"
trap '"$warden" sandbox stop "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir "$work/proj"
cat > "$work/policy.yaml" <<YAML
version: 1
sandbox:
  paths:
    proj: { root: ./proj, mode: rw }
  shell:
    backend: container
    container: { image: "localhost/warden-busybox:1", engine: $engine, user: root }
YAML
cd "$work"
"$warden" sandbox start --policy policy.yaml --name "$name"
farm-bench -n 30 --vs "$engine exec warden-$name true" -- "$warden" exec --sandbox "$name" -- true
if [ -n "$baseline" ]; then
    farm-bench -n 20 --vs "$baseline exec --sandbox $name -- true" -- "$warden" exec --sandbox "$name" -- true
fi
