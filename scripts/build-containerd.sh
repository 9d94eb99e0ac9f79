#!/usr/bin/env bash
# Builds containerd 2.x (github.com/containerd/containerd/v2, pinned in test/containerd/go.mod) into a cache outside
# the repo: the newer runtime next to Debian's containerd 1.6.20 that the real-node tier runs today.
#   containerd               with the CRI plugin (its `cni` section: conf_dir, max_conf_num)
#   containerd-shim-runc-v2  the runc shim (tag no_grpc, like the release's shim)
#   ctr                      the client (image import for the real-node images)
# CGO_ENABLED=0 is the minimal build that works: of containerd's built-in plugins only the btrfs snapshotter needs
# cgo (cmd/containerd/builtins/btrfs_linux.go: `!no_btrfs && cgo`); overlayfs, native, the CRI plugin and the runc
# shim are pure Go. Tag urfave_cli_no_docs as in its Makefile (leaves the man-page generator out); versions stamped
# as the Makefile does.
#
# Cache dir ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/containerd-<key>/, keyed by go.mod + go.sum + this script
# (+ the preamble scripts/lib/build-common.sh: layout, lock, key); test/meshbin/binaries.ts finds it with the same
# key.
#   bin/<name>      the three binaries
#   manifest.json   version, revision, per-binary build seconds
part=containerd
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
mod="$root/test/containerd"
key_inputs() { printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$root/scripts/build-containerd.sh"; }
cache_begin "$@"
go_env 1.26.6

pkg=github.com/containerd/containerd/v2
version="$(cd "$mod" && go list -m -f '{{.Version}}' "$pkg")"
# The release's git commit, from the proxy's .info file (Origin.Hash); empty if the proxy did not record it.
info="$(cd "$mod" && go mod download -json "$pkg" | sed -n 's/.*"Info": "\(.*\)",*$/\1/p')"
revision="$(sed -n 's/.*"Hash":"\([0-9a-f]\{40\}\)".*/\1/p' "$info" 2>/dev/null || true)"
ldflags="-s -w -X $pkg/version.Version=$version -X $pkg/version.Revision=$revision -X $pkg/version.Package=$pkg"

log "building containerd $version (${revision:-revision unknown}): containerd, containerd-shim-runc-v2, ctr into $dir"
log "a cold build takes about 4 minutes on 2 cores; later runs reuse the cache"
steps_total=3
step containerd go_build "$mod" containerd -tags urfave_cli_no_docs -ldflags "$ldflags" "$pkg/cmd/containerd"
step containerd-shim-runc-v2 go_build "$mod" containerd-shim-runc-v2 -tags "urfave_cli_no_docs no_grpc" \
  -ldflags "$ldflags" "$pkg/cmd/containerd-shim-runc-v2"
step ctr go_build "$mod" ctr -tags urfave_cli_no_docs -ldflags "$ldflags" "$pkg/cmd/ctr"

cat > "$dir/manifest.json.tmp" <<EOF
{
  "containerdVersion": "$version",
  "revision": "$revision",
  "goVersion": "$(go env GOVERSION)",
  "binDir": "$bin",
  "buildSeconds": $(build_seconds_json),
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
EOF
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
cache_finish 3
