#!/usr/bin/env bash
# Builds Warden's two programs into target/debug (or target/release with --release):
#
#   warden-full   every command, with wasmtime;
#   warden        the front: runs `warden exec` itself and hands every other
#                 command to warden-full. Linked statically (glibc's static-pie):
#                 each command then starts and ends without the dynamic loader,
#                 about 1 ms less per `warden exec` on a 2-core machine
#                 (docs/src/benchmarks.md).
#
# warden-full is linked with packed relative relocations (`-z pack-relative-relocs`,
# DT_RELR): its 42,000 relocation entries (1 MB) become 11 KB, and a `warden run`
# takes 0.94-0.96x the time; it stays position-independent. The front, with a
# seventh of those entries, gained nothing measurable and is left as it is. Only
# glibc 2.36 and later applies packed relocations (the linker then makes the
# program require GLIBC_ABI_DT_RELR, which an older one lacks and refuses to start):
# where the build host's C library is older, warden-full is linked without them (and
# a warden-full built here needs glibc 2.36 or later where it runs).
#
#   bash host/warden/build.sh [--release] [cargo options, e.g. --quiet]
#
# `cargo build -p warden` alone gives a dynamically linked front, and a warden-full
# without packed relocations, which work the same and start slower. Cargo has no
# per-program target features or link arguments, so both are linked by `cargo rustc`;
# a later `cargo build` links them its own way again.
set -Eeuo pipefail
trap 'echo "host/warden/build.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
repo=$(cd "$(dirname "$0")/../.." && pwd)

profile=(--profile dev) dir=debug
if [ "${1:-}" = --release ]; then
    profile=(--release) dir=release
    shift
fi
cargo=(--locked --manifest-path "$repo/Cargo.toml" -p warden "${profile[@]}" "$@")
# The build host's glibc, as `getconf GNU_LIBC_VERSION` prints it ("glibc 2.36"); with
# another C library getconf fails, inside the `||` so that the ERR trap stays quiet.
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || true)
glibc=${glibc#glibc }
glibc_major=${glibc%%.*} glibc_minor=${glibc#*.}
glibc_minor=${glibc_minor%%.*}
packed=()
if [[ $glibc_major =~ ^[0-9]+$ && $glibc_minor =~ ^[0-9]+$ ]] && ((glibc_major > 2 || (glibc_major == 2 && glibc_minor >= 36))); then
    packed=(-C link-arg=-Wl,-z,pack-relative-relocs)
fi
cargo rustc "${cargo[@]}" --bin warden-full -- "${packed[@]}"
cargo rustc "${cargo[@]}" --bin warden -- -C target-feature=+crt-static

front="${CARGO_TARGET_DIR:-$repo/target}/$dir/warden"
# Read first, so that a missing file or readelf fails the script. A program with an
# interpreter (PT_INTERP) is linked dynamically; one not of type DYN is not position-independent.
headers=$(readelf --file-header --program-headers --wide "$front")
if [[ $headers == *INTERP* || $headers != *"DYN (Position-Independent"* ]]; then
    echo "host/warden/build.sh: $front is not a static position-independent program" >&2
    exit 1
fi
sections=$(readelf --section-headers --wide "$front-full")
if ((${#packed[@]})) && [[ $sections != *" .relr.dyn "* ]]; then
    echo "host/warden/build.sh: $front-full has no packed relocations (.relr.dyn)" >&2
    exit 1
fi
