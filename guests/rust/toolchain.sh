#!/usr/bin/env bash
# Finds or installs a Rust compiler that can build wasm32-wasip1 guests, and
# defines `wasi_cargo` to run cargo with it and `wasi_build` to build a
# workspace's release for the target. Sourced by guests/build.sh and by the
# build.sh of `warden new --lang rust` projects, with $tools set (where to
# install) and `fail` defined.
#
# - rustup with the wasm32-wasip1 target (`rustup target add wasm32-wasip1`):
#   the usual route, used when present.
# - Otherwise Debian's rustc-web (bookworm-security) with its standard
#   library's sources, its LLVM and lld, and Debian's wasi-libc, unpacked into
#   $tools/rust-wasi (no root, nothing under /usr), building std from source
#   with `-Zbuild-std` (the first build of each target folder compiles std:
#   a minute or two).
# Sets WASI_RUST_ROUTE to "rustup" or "debian" for the build to say which.

rust_wasi_debian_packages() {
    # Names that carry a version (llvm-22, libstd-rust-web-1.96) are read from the archive.
    local llvm libstd
    llvm=$(apt-cache depends rust-web-llvm 2>/dev/null | sed -n 's/.*Depends: llvm-\([0-9]\+\)$/\1/p' | head -1)
    libstd=$(apt-cache depends libstd-rust-web-dev 2>/dev/null | sed -n 's/.*Depends: \(libstd-rust-web-[0-9.]\+\)$/\1/p' | head -1)
    [ -n "$llvm" ] && [ -n "$libstd" ] || return 1
    # libgit2 and the rest are what Debian's cargo links and the image may lack.
    echo "rustc-web cargo-web $libstd libstd-rust-web-dev rust-web-src rust-web-llvm lld-$llvm libllvm$llvm wasi-libc" \
        "libgit2-1.5 libhttp-parser2.9 libmbedtls14 libmbedcrypto7 libmbedx509-1"
}

install_rust_wasi_debian() {
    local tc=$1 packages debs
    if ! packages=$(rust_wasi_debian_packages); then
        command -v apt-get >/dev/null || fail "no Rust wasm32-wasip1 target: run 'rustup target add wasm32-wasip1' (or, on Debian 12, have apt reach bookworm-security for rustc-web)"
        [ "$(id -u)" = 0 ] || fail "no Rust wasm32-wasip1 target and apt's lists do not know rustc-web: run 'rustup target add wasm32-wasip1', or 'sudo apt-get update' once"
        apt-get update -qq || fail "apt-get update failed (see above)"
        packages=$(rust_wasi_debian_packages) || fail "apt does not offer rustc-web here (Debian 12 bookworm-security has it); run 'rustup target add wasm32-wasip1' instead"
    fi
    echo "installing Debian's rustc-web and wasi-libc into $tc (once; about 150 MB to download)" >&2
    debs=$(mktemp -d)
    # shellcheck disable=SC2086 # a list of package names
    (cd "$debs" && apt-get download -qq $packages 2>&1 | grep -v 'Download is performed unsandboxed' >&2) || true
    ls "$debs"/*.deb >/dev/null 2>&1 || fail "apt-get download of rustc-web failed (see above)"
    rm -rf "$tc.partial" && mkdir -p "$tc.partial/root"
    for deb in "$debs"/*.deb; do
        dpkg-deb -x "$deb" "$tc.partial/root" || fail "cannot unpack $deb"
    done
    rm -rf "$debs"
    local usr=$tc.partial/root/usr src
    # -Zbuild-std reads library/ of the compiler's sources only.
    src=$(readlink -f "$usr/lib/rustlib/src/rust")
    [ -d "$src/library" ] || fail "rust-web-src holds no library/ folder"
    find "$src" -mindepth 1 -maxdepth 1 ! -name library -exec rm -rf {} +
    # rustc looks for the target's C runtime and libc in its sysroot's self-contained folder.
    local self_contained=$usr/lib/rustlib/wasm32-wasip1/lib/self-contained
    mkdir -p "$self_contained"
    for file in crt1-command.o crt1-reactor.o libc.a; do
        [ -f "$usr/lib/wasm32-wasi/$file" ] || fail "wasi-libc has no $file"
        ln -sf "../../../../wasm32-wasi/$file" "$self_contained/$file"
    done
    rm -rf "$tc" && mv "$tc.partial" "$tc"
}

setup_rust_wasi() {
    if command -v rustup >/dev/null && rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip1; then
        WASI_RUST_ROUTE=rustup
        wasi_cargo() { cargo "$@"; }
        return
    fi
    local tc=$tools/rust-wasi
    [ -x "$tc/root/usr/bin/rustc" ] || install_rust_wasi_debian "$tc"
    WASI_RUST_ROUTE=debian
    WASI_RUST_ROOT=$tc/root/usr
    wasi_cargo() {
        # Debian's compiler (stable, so RUSTC_BOOTSTRAP for -Z), its own cargo,
        # its libraries; builds std for the target from its sources, with
        # unwinding by WebAssembly exceptions (the final, exnref form), so
        # that a tool's panic can be caught and returned as an error.
        env LD_LIBRARY_PATH="$WASI_RUST_ROOT/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            PATH="$WASI_RUST_ROOT/bin:$PATH" RUSTC="$WASI_RUST_ROOT/bin/rustc" RUSTDOC="$WASI_RUST_ROOT/bin/rustdoc" \
            RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_unwind,panic_abort \
            CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="-C panic=unwind -C target-feature=+exception-handling -C llvm-args=-wasm-use-legacy-eh=false" \
            "$WASI_RUST_ROOT/bin/cargo" "$@"
    }
}

# wasi_build LOG [CARGO ARGS...]: a quiet release build for wasm32-wasip1,
# its messages kept in LOG. On the Debian route every crate warns that the
# exceptions target feature is unstable: that warning alone is not shown.
wasi_build() {
    local log=$1
    shift
    if ! wasi_cargo build --quiet --release --target wasm32-wasip1 "$@" 2>"$log"; then
        cat "$log" >&2
        return 1
    fi
    grep -v -e 'unstable feature specified for `-Ctarget-feature`: `exception-handling`' \
        -e "this feature is not stably supported" -e "^ *|$" -e "^ *= note" -e "generated 1 warning" -e "^$" "$log" >&2 || true
}
