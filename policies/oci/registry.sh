#!/usr/bin/env bash
# registry.sh DIR: starts Debian's docker-registry (the CNCF distribution
# registry) on a free loopback port, its storage in DIR/data, and prints
# `PORT PID`. Only 127.0.0.1 listens; stop it with `kill PID`.
set -euo pipefail
dir=$1
mkdir -p "$dir/data"
cat > "$dir/registry.yml" <<YAML
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: $dir/data
http:
  addr: 127.0.0.1:0
  secret: warden-demo-$$
YAML
# Its access log goes to stdout: a closed pipe there would kill it.
docker-registry serve "$dir/registry.yml" > "$dir/registry.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/registry.log" | head -1)
    if [ -n "$port" ]; then
        echo "$port $pid"
        exit 0
    fi
    sleep 0.1
done
echo "registry.sh: docker-registry did not start; its log:" >&2
cat "$dir/registry.log" >&2
kill "$pid" 2>/dev/null || true
exit 1
