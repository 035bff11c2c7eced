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
# The wheel's platform tag is one its symbols allow (auditwheel, as a release would check it).
"$venv/bin/pip" install --quiet --disable-pip-version-check auditwheel==6.8.2
audit=$("$venv/bin/auditwheel" show "$wheel")
if ! grep -q 'consistent with the following platform tag: "manylinux_2_[0-9]*_x86_64"' <<<"$audit" ||
    ! grep -q "$(basename "$wheel" | sed -E 's/.*-(manylinux_2_[0-9]+_x86_64)\.whl/\1/')" <<<"$audit"; then
    echo "tests/python/run.sh: auditwheel does not find the wheel's tag manylinux-consistent:" >&2
    echo "$audit" >&2
    exit 1
fi
echo "auditwheel: $(basename "$wheel") is consistent with its manylinux tag"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$wheel" -r "$here/requirements.txt"
# It names the whole pydantic-ai (every model provider) where pydantic-ai-slim, installed above, is what it
# uses. 0.8.0: the reference tests import its ApprovalController, which 0.9.0 removed.
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps pydantic-ai-blocking-approval==0.8.0
cd "$here"
# The installed package, not a source tree's: pytest runs outside host/warden-py.
PATH="$venv/bin:$PATH" "$venv/bin/python" -m pytest -p no:cacheprovider -q --ignore=reference "$@"

# pydantic-ai-filesystem-sandbox 0.9.0's own tests (from its sdist on PyPI), against the drop-in.
reference=$repo/target/python-tests/reference
rm -rf "$reference" && mkdir -p "$reference"
"$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    --dest "$reference" pydantic-ai-filesystem-sandbox==0.9.0
tar -xzf "$reference"/pydantic_ai_filesystem_sandbox-0.9.0.tar.gz -C "$reference"
cp "$here/reference/conftest.py" "$reference/pydantic_ai_filesystem_sandbox-0.9.0/tests/conftest.py"
cd "$reference/pydantic_ai_filesystem_sandbox-0.9.0"
# Its own package is not installed: `src/` is left out of the path, so the import is the drop-in's.
PATH="$venv/bin:$PATH" "$venv/bin/python" -m pytest -p no:cacheprovider -q -rxX -o asyncio_default_fixture_loop_scope=function tests
