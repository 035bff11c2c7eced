#!/usr/bin/env bash
# The system packages the demo and the tests need, from apt:
#   bubblewrap    the OS sandbox of `warden exec` (shell commands)
#   nodejs, npm   componentize-js, for the JavaScript tools
#   python3-venv  the virtual environment the PyPI toolchains go into
# As root they are installed. Otherwise the command to run is printed; without
# bubblewrap the set-up goes on (shell commands then run WITHOUT an OS sandbox,
# with a warning on every result), without the others it stops.
set -euo pipefail

missing=()
[ -x /usr/bin/bwrap ] || missing+=(bubblewrap)
command -v npm >/dev/null || missing+=(nodejs npm)
python3 -c "import venv, ensurepip" 2>/dev/null || missing+=(python3-venv)
[ ${#missing[@]} -eq 0 ] && exit 0

install=(apt-get install -y -qq --no-install-recommends "${missing[@]}")
if [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${missing[*]} with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get update -qq >/dev/null || ! "${install[@]}" >/dev/null; then
        echo "setup: apt-get could not install ${missing[*]} (see above); install them by hand: ${install[*]}" >&2
        exit 1
    fi
    exit 0
fi

echo "setup: missing system packages: ${missing[*]}. As root, run:" >&2
echo "    apt-get update && ${install[*]}" >&2
if [ "${missing[*]}" != bubblewrap ]; then
    echo "setup: the example tools cannot be built without them; stopping" >&2
    exit 1
fi
echo "setup: going on without bubblewrap: the demo's shell command will run WITHOUT an OS sandbox, with a warning" >&2
