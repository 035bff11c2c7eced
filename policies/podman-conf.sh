#!/usr/bin/env bash
# Prints the containers.conf settings podman needs on this host, if any:
#   runtime = "runc"           crun refuses a hybrid cgroup v1/v2 layout
#   cgroup_manager = "cgroupfs", events_logger = "file"   no systemd
#   default_ulimits            podman's defaults exceed a hard limit that
#                              root without CAP_SYS_RESOURCE cannot raise
# policies/setup.sh writes them to /etc/containers/containers.conf.d/warden.conf.
set -euo pipefail
containers=()
engine=()
if [ -d /sys/fs/cgroup/unified ] || [ -d /sys/fs/cgroup/memory ]; then
    engine+=('runtime = "runc"')
fi
if [ ! -d /run/systemd/system ]; then
    engine+=('cgroup_manager = "cgroupfs"' 'events_logger = "file"')
fi
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
[ "$nproc" = unlimited ] && nproc=32768
[ "$nproc" -gt 32768 ] && nproc=32768
if [ "$nofile" != unlimited ] && [ "$nofile" -lt 1048576 ]; then
    containers+=("default_ulimits = [\"nofile=$nofile:$nofile\", \"nproc=$nproc:$nproc\"]")
fi
if [ ${#containers[@]} -gt 0 ]; then
    echo "[containers]"
    printf '%s\n' "${containers[@]}"
fi
if [ ${#engine[@]} -gt 0 ]; then
    echo "[engine]"
    printf '%s\n' "${engine[@]}"
fi
