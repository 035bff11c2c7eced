#!/usr/bin/env bash
# Builds the small image the container examples and tests use, from the
# host's busybox-static (no registry needed): localhost/warden-busybox:1,
# /bin/sh and the busybox applets, /etc/passwd, /tmp. Imported into podman's
# store, and docker's when its daemon answers. Quick when already there.
set -euo pipefail
image=localhost/warden-busybox:1
busybox=/bin/busybox
if ! "$busybox" --list >/dev/null 2>&1; then
    echo "container-image: $busybox is missing: apt-get install busybox-static" >&2
    exit 1
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,etc,tmp,proc,dev,sys,workspace}
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\n' > "$root/etc/group"
chmod 1777 "$root/tmp"
for engine in podman docker; do
    command -v "$engine" >/dev/null || continue
    "$engine" info >/dev/null 2>&1 || continue
    if "$engine" image inspect "$image" >/dev/null 2>&1; then
        echo "container-image: $engine has $image" >&2
        continue
    fi
    if ! out=$(tar -C "$root" -c . | "$engine" import - "$image" 2>&1); then
        echo "container-image: $engine could not import $image: $out" >&2
        exit 1
    fi
    echo "container-image: imported $image into $engine" >&2
done
