set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# Toolchains install here on first use; point WARDEN_TOOLCHAIN at a shared folder to reuse one.
toolchain=${WARDEN_TOOLCHAIN:-$here/.toolchain}

{{versions}}
# pip_tools CHECK PACKAGE...: installs the PyPI packages into $toolchain/py unless CHECK runs.
pip_tools() {
    local check=$1
    shift
    if ! "$toolchain/py/bin/python" -c "$check" 2>/dev/null; then
        [ -x "$toolchain/py/bin/python" ] || python3 -m venv "$toolchain/py"
        "$toolchain/py/bin/pip" install --quiet --disable-pip-version-check "$@"
    fi
}
cd "$here"
