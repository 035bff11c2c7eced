#!/usr/bin/env bash
# The Python package's tests: builds the wheel (dev profile, over the crates
# the workspace build compiled), installs it into a fresh virtual environment
# with nothing else of this repository, and runs pytest there.
#   bash tests/python/run.sh [PYTEST ARGS...]
set -Eeuo pipefail
trap 'echo "tests/python/run.sh: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=$repo/target/python-tests/venv

rm -f "$repo"/target/wheels/warden_sandbox-*.whl
bash "$repo/host/warden-py/build-wheel.sh" --dev
wheel=$(ls "$repo"/target/wheels/warden_sandbox-*.whl)

python3 -m venv --clear "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$wheel" -r "$here/requirements.txt"
cd "$here"
# The installed package, not a source tree's: pytest runs outside host/warden-py.
PATH="$venv/bin:$PATH" "$venv/bin/python" -m pytest -p no:cacheprovider -q "$@"
