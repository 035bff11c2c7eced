#!/usr/bin/env bash
# The system packages the demo and the tests need, from apt:
#   bubblewrap    the OS sandbox of `warden exec` (shell commands)
#   nodejs, npm   componentize-js, for the JavaScript tools
#   python3-venv  the virtual environment the PyPI toolchains go into
#   curl          the tests' client for the network allowlist's proxy
#   podman, runc, catatonit, busybox-static
#                 the container backend (`backend: container`) and its example image
#   chromium      the browser the console's tests drive (tests/browser)
#   docker-registry
#                 the CNCF distribution registry the OCI tests run on loopback
#                 (tests/cli/oci); its own service, on :5000 on every interface,
#                 is never started: installed with a policy-rc.d that denies
#                 service starts, then stopped and disabled
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

# The tests start docker-registry themselves, each on a port of its own;
# the package's service must not run.
registry_off() {
    [ "$(id -u)" = 0 ] && command -v docker-registry >/dev/null || return 0
    if command -v systemctl >/dev/null; then systemctl disable --now docker-registry >/dev/null 2>&1 || true; fi
    if [ -x /etc/init.d/docker-registry ]; then /etc/init.d/docker-registry stop >/dev/null 2>&1 || true; fi
    update-rc.d docker-registry disable >/dev/null 2>&1 || true
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
command -v docker-registry >/dev/null || missing+=(docker-registry)
if [ ${#missing[@]} -eq 0 ]; then
    registry_off
    containers_ready
    exit 0
fi

install=(apt-get install -y -qq --no-install-recommends "${missing[@]}")
if [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${missing[*]} with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    # No service starts during the install (docker-registry's postinst would
    # start one); a policy-rc.d already there is the machine's own and stays.
    made_policy_rc=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        made_policy_rc=1
    fi
    installed=1
    apt-get update -qq >/dev/null && "${install[@]}" >/dev/null || installed=
    if [ -n "$made_policy_rc" ]; then rm -f /usr/sbin/policy-rc.d; fi
    if [ -z "$installed" ]; then
        echo "setup: apt-get could not install ${missing[*]} (see above); install them by hand: ${install[*]}" >&2
        exit 1
    fi
    registry_off
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
