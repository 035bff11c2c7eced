#!/usr/bin/env bash
# Runs {{name}} under Warden with policy.yaml and checks its answers.
# WARDEN names the warden binary [default: warden on the PATH].
set -euo pipefail
cd "$(dirname "$0")"
warden=${WARDEN:-warden}
failed=0

# expect STATUS OUTPUT INPUT: `warden call` with INPUT exits STATUS and prints OUTPUT (stdout and stderr).
expect() {
    local got status=0
    got=$("$warden" call --policy policy.yaml {{name}}.wasm {{name}} --input "$3" 2>&1) || status=$?
    if [ "$status" != "$1" ] || [ "$got" != "$2" ]; then
        printf 'FAIL %s\n  expected (exit %s): %s\n  got      (exit %s): %s\n' "$3" "$1" "$2" "$status" "$got" >&2
        failed=1
    fi
}

expect 0 '{{expected_output}}' '{{expected_input}}'
{{checks}}
[ "$failed" = 0 ] && echo "ok: {{name}} answers, and stays in its sandbox"
exit "$failed"
