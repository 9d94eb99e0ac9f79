#!/usr/bin/env bash
# Removes what real-node runs left on the host: every process in their cgroups (containerd shims and containers
# outlive containerd), their mounts (kubelet tmpfs volumes, overlay rootfs, netns bind mounts), their cgroup dirs,
# their run dirs, the host paths they created, and it restores the sysctls the kubelet changed.
#   cleanup.sh RUN_ID   one run (called at the end of a run, and by its watchdog if the run was killed)
#   cleanup.sh --all    every run (called at the start of a run: a killed run must not break the next one)
# Call it holding the real-node lock ($BASE/lock): runs never overlap, so "--all" cannot hit a live run.
# The state it reads is written by test/realnode/harness/host.ts; keep the two in sync:
#   $BASE/runs/<id>/              one run's files (containerd root/state, kubelet root, logs, ...)
#   /sys/fs/cgroup/<c>/meshgate-realnode/<id>/   one run's cgroups, in every mounted v1 hierarchy <c>
#   $BASE/sysctls.saved           "name value" lines: the values before the first kubelet started
#   $BASE/created-paths           host paths that did not exist before the runs (kubelet/containerd hardcode them)
set -uo pipefail

BASE="${MESHGATE_REALNODE_BASE:-/tmp/meshgate-realnode}"
CG_NAME=meshgate-realnode
target="${1:?usage: cleanup.sh RUN_ID | --all}"
log() { printf '[realnode-cleanup] %s\n' "$*" >&2; }

if [ "$target" = --all ]; then
  ids="$( { ls -1 "$BASE/runs" 2>/dev/null; for c in /sys/fs/cgroup/*/"$CG_NAME"; do ls -1 "$c" 2>/dev/null; done; } |
    grep -E '^[a-z0-9-]+$' | sort -u)"
else
  [[ "$target" =~ ^[a-z0-9-]+$ ]] || { log "bad run id '$target'"; exit 2; }
  ids="$target"
fi

# Every mounted hierarchy: the v1 ones (cpu, memory, pids, name=systemd, ...) and cgroup2's "unified", which holds
# no controllers here but where runc mirrors the container cgroups (hybrid mode).
hierarchies() { for c in /sys/fs/cgroup/*/; do echo "${c%/}"; done; }

# Kills every process in the run's cgroups. The pids hierarchy sees all of them; freezing first means none can fork
# while we read the list. Repeats because a dying shim can still reap/spawn for a moment.
kill_cgroup() {
  local id="$1" pids tries=0
  local pidcg="/sys/fs/cgroup/pids/$CG_NAME/$id" frz="/sys/fs/cgroup/freezer/$CG_NAME/$id"
  [ -d "$pidcg" ] || return 0
  while :; do
    pids="$(find "$pidcg" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)"
    [ -z "$pids" ] && return 0
    [ -d "$frz" ] && echo FROZEN > "$frz/freezer.state" 2>/dev/null
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null
    [ -d "$frz" ] && echo THAWED > "$frz/freezer.state" 2>/dev/null
    tries=$((tries + 1))
    if [ "$tries" -ge 50 ]; then log "run $id: processes survive SIGKILL: $pids"; return 1; fi
    sleep 0.1
  done
}

# Lazily unmounts everything under the run dir, deepest first (mountinfo field 5 is the mount point; octal
# escapes like \040 are decoded by printf %b).
unmount_all() {
  local dir="$1" m
  [ -d "$dir" ] || return 0
  awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r |
    while read -r m; do umount -l "$(printf '%b' "$m")" 2>/dev/null || log "umount -l $m failed"; done
}

remove_cgroups() {
  local id="$1" h
  for h in $(hierarchies); do
    [ -d "$h/$CG_NAME/$id" ] || continue
    # Depth-first: a cgroup dir can only be removed once it has no children (and no processes).
    find "$h/$CG_NAME/$id" -depth -type d -exec rmdir {} \; 2>/dev/null
    [ -d "$h/$CG_NAME/$id" ] && log "cgroup $h/$CG_NAME/$id could not be removed"
  done
}

exists() { # exists <id>: the run has a dir or a cgroup somewhere
  local h
  [ -e "$BASE/runs/$1" ] && return 0
  for h in $(hierarchies); do [ -d "$h/$CG_NAME/$1" ] && return 0; done
  return 1
}

for id in $ids; do
  exists "$id" || continue
  t0=$(date +%s%N)
  ms() { echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms"; }
  kill_cgroup "$id"; killed=$(ms)
  unmount_all "$BASE/runs/$id"; unmounted=$(ms)
  remove_cgroups "$id"; cgroups=$(ms)
  rm -rf "$BASE/runs/$id" 2>/dev/null || log "rm -rf $BASE/runs/$id failed"
  log "removed run $id (at: processes killed $killed, unmounted $unmounted, cgroups removed $cgroups, files removed $(ms))"
done

# The top-level cgroups stay only while some run still has dirs in them.
for h in $(hierarchies); do rmdir "$h/$CG_NAME" 2>/dev/null; done

# Host-wide state is restored once no run is left.
if [ -z "$(ls -A "$BASE/runs" 2>/dev/null)" ]; then
  if [ -f "$BASE/sysctls.saved" ]; then
    while read -r name value; do
      [ -n "$name" ] || continue
      echo "$value" > "/proc/sys/${name//.//}" 2>/dev/null || log "could not restore $name=$value"
    done < "$BASE/sysctls.saved"
    rm -f "$BASE/sysctls.saved"
  fi
  if [ -f "$BASE/created-paths" ]; then
    while read -r p; do [ -n "$p" ] && rm -rf "$p"; done < "$BASE/created-paths"
    rm -f "$BASE/created-paths"
  fi
fi
exit 0
