#!/usr/bin/env bash
# Installs what the console's browser tests drive chromium with (playwright-core,
# pinned in package-lock.json) into .tools/browser, once per lock. The browser is
# Debian's chromium (policies/setup.sh installs it); nothing is downloaded here
# but the npm package.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tools="$here/../../.tools/browser"
if cmp -s "$here/package-lock.json" "$tools/installed.json"; then
    exit 0
fi
command -v npm >/dev/null || { echo "tests/browser/setup.sh: npm is missing; install nodejs and npm (bash policies/setup.sh does, as root)" >&2; exit 1; }
mkdir -p "$tools"
cp "$here/package.json" "$here/package-lock.json" "$tools/"
(cd "$tools" && npm ci --silent --no-audit --no-fund) || { echo "tests/browser/setup.sh: npm could not install playwright-core (see above)" >&2; exit 1; }
cp "$here/package-lock.json" "$tools/installed.json"
