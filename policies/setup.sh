#!/usr/bin/env bash
# The system packages the demo and the tests need, from apt:
#   bubblewrap    the OS sandbox of `warden exec` (shell commands)
#   nodejs, npm   componentize-js, for the JavaScript tools
#   python3-venv  the virtual environment the PyPI toolchains go into
#   curl          the tests' client for the network allowlist's proxy
#   podman, runc, catatonit, busybox-static
#                 the container backend (`backend: container`) and its example image
#   chromium      the browser the console's tests drive (tests/browser)
# As root they are installed, podman's settings for this host written to
# /etc/containers/containers.conf.d/warden.conf (see policies/podman-conf.sh)
# and the example image built. Otherwise the command to run is printed; without
# bubblewrap or podman the set-up goes on (shell commands then run WITHOUT an OS
# sandbox, with a warning on every result; container policies fail), without
# the others it stops.
set -euo pipefail
here=$(dirname "$0")

containers_ready() {
    local conf=/etc/containers/containers.conf.d/warden.conf
    if [ "$(id -u)" = 0 ] && [ ! -e "$conf" ] && [ -n "$(bash "$here/podman-conf.sh")" ]; then
        mkdir -p "$(dirname "$conf")"
        bash "$here/podman-conf.sh" > "$conf"
        echo "setup: wrote podman's settings for this host to $conf" >&2
    fi
    if command -v podman >/dev/null; then
        bash "$here/container-image.sh"
    fi
}

missing=()
[ -x /usr/bin/bwrap ] || missing+=(bubblewrap)
command -v npm >/dev/null || missing+=(nodejs npm)
python3 -c "import venv, ensurepip" 2>/dev/null || missing+=(python3-venv)
command -v curl >/dev/null || missing+=(curl)
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
[ -x /usr/bin/catatonit ] || [ -x /usr/libexec/podman/catatonit ] || missing+=(catatonit)
[ -x /bin/busybox ] || missing+=(busybox-static)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -eq 0 ]; then
    containers_ready
    exit 0
fi

install=(apt-get install -y -qq --no-install-recommends "${missing[@]}")
if [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${missing[*]} with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get update -qq >/dev/null || ! "${install[@]}" >/dev/null; then
        echo "setup: apt-get could not install ${missing[*]} (see above); install them by hand: ${install[*]}" >&2
        exit 1
    fi
    containers_ready
    exit 0
fi

echo "setup: missing system packages: ${missing[*]}. As root, run:" >&2
echo "    apt-get update && ${install[*]}" >&2
optional=" bubblewrap podman runc catatonit busybox-static chromium "
if [ -n "$(for m in "${missing[@]}"; do [[ $optional == *" $m "* ]] || echo "$m"; done)" ]; then
    echo "setup: the example tools cannot be built without them; stopping" >&2
    exit 1
fi
echo "setup: going on without them: without bubblewrap the demo's shell command runs WITHOUT an OS sandbox (with a warning); without podman, container policies fail; without chromium, the console's browser tests fail" >&2
