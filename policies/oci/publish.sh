#!/usr/bin/env bash
# publish.sh REGISTRY REPOSITORY:TAG COMPONENT.wasm: pushes a component as
# the CNCF wasm OCI artifact (config application/vnd.wasm.config.v0+json,
# one application/wasm layer) over plain HTTP, as `wkg oci push` or `oras
# push` would, and prints the manifest digest. For a loopback registry; the
# standard tools are in docs/src/components/oci.md.
set -euo pipefail
registry=$1 name=$2 component=$3
repo=${name%:*} tag=${name##*:}
base="http://$registry/v2/$repo"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

digest() { echo "sha256:$(sha256sum "$1" | cut -d' ' -f1)"; }

push_blob() {
    local location
    location=$(curl -fsS -i -X POST "$base/blobs/uploads/" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
    case $location in *\?*) location="$location&" ;; *) location="$location?" ;; esac
    curl -fsS -X PUT -H 'Content-Type: application/octet-stream' --data-binary @"$1" "${location}digest=$(digest "$1")" > /dev/null
}

layer=$(digest "$component")
printf '{"architecture":"wasm","os":"wasip2","layerDigests":["%s"],"component":{"exports":[],"imports":[]}}' "$layer" > "$work/config.json"
push_blob "$component"
push_blob "$work/config.json"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.wasm.config.v0+json","digest":"%s","size":%d},"layers":[{"mediaType":"application/wasm","digest":"%s","size":%d,"annotations":{"org.opencontainers.image.title":"%s"}}]}' \
    "$(digest "$work/config.json")" "$(stat -c %s "$work/config.json")" "$layer" "$(stat -c %s "$component")" "$(basename "$component")" > "$work/manifest.json"
curl -fsS -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary @"$work/manifest.json" "$base/manifests/$tag" > /dev/null
digest "$work/manifest.json"
