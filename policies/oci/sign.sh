#!/usr/bin/env bash
# sign.sh REGISTRY REPOSITORY MANIFEST_DIGEST KEY.pem: signs a manifest as
# `cosign sign --key` does in its "simple signing" form (an ECDSA P-256
# signature of the payload naming the digest, stored under the tag
# sha256-HEX.sig), with openssl and curl. For a loopback registry; cosign's
# own command is in docs/src/components/oci.md. Make a key pair with:
#   openssl ecparam -name prime256v1 -genkey -noout -out KEY.pem
#   openssl ec -in KEY.pem -pubout -out KEY.pub
set -euo pipefail
registry=$1 repo=$2 manifest=$3 key=$4
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

printf '{"critical":{"identity":{"docker-reference":"%s/%s"},"image":{"docker-manifest-digest":"%s"},"type":"cosign container image signature"},"optional":null}' \
    "$registry" "$repo" "$manifest" > "$work/payload.json"
openssl dgst -sha256 -sign "$key" -out "$work/signature.der" "$work/payload.json"
printf '{}' > "$work/config.json"
push_blob "$work/payload.json"
push_blob "$work/config.json"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":2},"layers":[{"mediaType":"application/vnd.dev.cosign.simplesigning.v1+json","digest":"%s","size":%d,"annotations":{"dev.cosignproject.cosign/signature":"%s"}}]}' \
    "$(digest "$work/config.json")" "$(digest "$work/payload.json")" "$(stat -c %s "$work/payload.json")" "$(base64 -w0 "$work/signature.der")" > "$work/manifest.json"
curl -fsS -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary @"$work/manifest.json" "$base/manifests/sha256-${manifest#sha256:}.sig" > /dev/null
echo "signed $manifest: tag sha256-${manifest#sha256:}.sig"
