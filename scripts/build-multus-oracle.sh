#!/usr/bin/env bash
# Builds the Multus oracle (test/cni/multus-oracle): a small Go program linking multus-cni v4.2.3's own packages
# (types.LoadNetConf, k8sclient.GetDefaultNetworks/TryLoadPodDelegates over a fake API, the thick daemon's
# config.NewManager/GenerateConfig), which test/cni/multus.test.ts runs to prove meshgate follows Multus as Multus
# does. The cache dir is keyed by the first 12 hex digits of sha256(go.mod + go.sum + main.go + this script);
# test/cni/oracle-binary.ts recomputes the same key, keep the two in sync.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/multus-oracle-<key>/
#   bin/multus-oracle   built to bin/.multus-oracle.tmp and renamed, so a killed build never leaves half a file
#   .complete           written last; its presence is the "cache is usable" signal
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/cni/multus-oracle"
script="$root/scripts/build-multus-oracle.sh"
log() { printf '[multus-oracle] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

inputs=("$mod/go.mod" "$mod/go.sum" "$mod/main.go" "$script")
key="$(cat "${inputs[@]}" | sha256sum | cut -c1-12)"
cache="${MESHGATE_CACHE:-$HOME/.cache/meshgate}"
dir="$cache/multus-oracle-$key"
bin="$dir/bin"

if [ -f "$dir/.complete" ]; then
  log "up to date: $bin"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH. Install Go >= 1.24 (the Multus oracle is built from Go modules)."
mkdir -p "$bin"
# One builder per cache dir: a second `npm test` started meanwhile waits here, then finds .complete.
exec 9>"$dir/.lock"
if ! flock -n 9; then
  log "another build of $dir is running; waiting for it"
  flock 9
fi
if [ -f "$dir/.complete" ]; then log "up to date: $bin"; exit 0; fi

# Same Go environment as scripts/build-controlplane.sh: no toolchain download, static binaries, go.mod/go.sum
# decide (sum.golang.org is not reachable here; the committed go.sum still verifies every module).
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOSUMDB=off
export GOPROXY="${GOPROXY:-$(go env GOPROXY)}"
[ -n "$GOPROXY" ] || export GOPROXY="https://proxy.golang.org,direct"

start=$SECONDS
log "building into $dir (client-go and multus-cni: 2-7 minutes cold on 2 busy cores)"
(cd "$mod" && nice go build -trimpath -o "$bin/.multus-oracle.tmp" .) || die "building multus-oracle failed (see above)"
mv -f "$bin/.multus-oracle.tmp" "$bin/multus-oracle"

new_key="$(cat "${inputs[@]}" | sha256sum | cut -c1-12)"
[ "$new_key" = "$key" ] || log "WARNING: the oracle's go.mod/go.sum changed during the build (run 'go mod tidy' there and commit)"
touch "$dir/.complete"
# Keep the 3 newest finished builds (other worktrees may use older keys), delete the rest.
ls -1dt "$cache"/multus-oracle-*/.complete 2>/dev/null | tail -n +4 | while read -r stamp; do
  log "removing old build $(dirname "$stamp")"
  rm -rf "$(dirname "$stamp")"
done
log "done in $((SECONDS - start))s: $bin"
