#!/usr/bin/env bash
# Prints what real-node runs may have left on this machine and exits 1 if anything is there: cgroups, mounts,
# run dirs, processes (in the last run's network namespace, or real-node binaries anywhere), the netns itself,
# changed sysctls, hardcoded host paths. Run it after `npm run scenarios`, or after killing one, to check teardown.
# Reads the files test/realnode/harness/host.ts writes under $BASE (see there).
set -uo pipefail
BASE="${MESHGATE_REALNODE_BASE:-/tmp/meshgate-realnode}"
found=0
say() { printf '  %s\n' "$*"; found=1; }

echo "real-node leftovers check ($BASE):"
for c in /sys/fs/cgroup/*/meshgate-realnode; do [ -e "$c" ] && say "cgroup $c"; done
grep -F " $BASE/" /proc/self/mountinfo | awk '{print $5}' | while read -r m; do echo "  mount $m"; done
grep -qF " $BASE/" /proc/self/mountinfo && found=1
[ -n "$(ls -A "$BASE/runs" 2>/dev/null)" ] && say "run dirs: $(ls "$BASE/runs" | tr '\n' ' ')"

netns="$(cat "$BASE/last-netns" 2>/dev/null)"
for p in /proc/[0-9]*; do
  pid="${p#/proc/}"
  ns="$(readlink "$p/ns/net" 2>/dev/null)" || continue
  exe="$(readlink "$p/exe" 2>/dev/null)"
  if [ -n "$netns" ] && [ "$ns" = "$netns" ]; then say "process $pid ($exe) in the last run's netns $ns"
  elif [[ "$exe" == */containerd* || "$exe" == */kubelet || "$exe" == */pause || "$exe" == */meshgate-e2e-proxy || "$exe" == */istio-cni ]]; then
    say "process $pid ($exe) outside the runs"
  fi
done
[ -n "$netns" ] && echo "  (last run's netns $netns: gone once no process holds it; checked above)"

if [ -f "$BASE/sysctls.baseline" ]; then
  while read -r name value; do
    now="$(cat "/proc/sys/${name//.//}")"
    [ "$now" = "$value" ] || say "sysctl $name=$now (before the first run: $value)"
  done < "$BASE/sysctls.baseline"
fi
[ -f "$BASE/sysctls.saved" ] && say "$BASE/sysctls.saved still there (a run's sysctls are not restored yet)"
if [ -f "$BASE/created-paths" ]; then
  say "$BASE/created-paths still there: $(tr '\n' ' ' < "$BASE/created-paths")"
fi
if [ "$found" = 0 ]; then echo "  nothing left behind"; else exit 1; fi
