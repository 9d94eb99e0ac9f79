#!/usr/bin/env bash
# Builds meshgate's NRI plugin (nri/, its own Go module: github.com/containerd/nri pinned to v0.12.3, the release
# containerd 2.4.2 vendors) into a cache outside the repo:
#   meshgate-nri   static (CGO_ENABLED=0), what the chart's nriPlugin DaemonSet runs and the real-node tier's
#                  containerd 2.4 line connects to each node's NRI socket
# Cache dir ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/nri-<key>/, keyed by the module's go.mod, go.sum and Go sources
# + this script (+ the preamble scripts/lib/build-common.sh); test/meshbin/binaries.ts finds it with the same key.
#   bin/meshgate-nri
#   manifest.json   nri version, per-binary build seconds
part=nri
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
mod="$root/nri"
key_inputs() {
  printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$mod/main.go" "$mod/policy.go" "$mod/seccomp.go" "$mod/print.go" \
    "$root/scripts/build-nri.sh"
}
cache_begin "$@"
go_env 1.24

nri_version="$(cd "$mod" && go list -m -f '{{.Version}}' github.com/containerd/nri)"
log "building meshgate-nri (nri $nri_version) into $dir; cold: the nri module and its ttrpc/protobuf closure, ~1 min"
steps_total=1
step meshgate-nri go_build "$mod" meshgate-nri -ldflags "-s -w" .

cat > "$dir/manifest.json.tmp" <<JSON
{
  "nriVersion": "$nri_version",
  "goVersion": "$(go env GOVERSION)",
  "binDir": "$bin",
  "buildSeconds": $(build_seconds_json),
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
JSON
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
cache_finish 3
