#!/usr/bin/env bash
# Builds Kyverno's admission controller (github.com/kyverno/kyverno/cmd/kyverno, pinned in test/kyverno/go.mod) into
# a cache outside the repo, for `npm run bench -- --peers` (a second real injector peer: a ClusterPolicy that adds a
# sidecar) and copies the module's CRDs next to it (Kyverno refuses to start without them).
#
# The cache dir is keyed by the first 12 hex digits of sha256(go.mod + go.sum + this script); bench/peers/kyverno.ts
# recomputes the same key.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/kyverno-<key>/
#   bin/kyverno      built to bin/.kyverno.tmp and renamed
#   crds/*.yaml      config/crds of the same module
#   manifest.json    versions, paths and build seconds
#   .complete        written last; its presence is the "cache is usable" signal
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/kyverno"
script="$root/scripts/build-kyverno.sh"
log() { printf '[kyverno] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

key="$(cat "$mod/go.mod" "$mod/go.sum" "$script" | sha256sum | cut -c1-12)"
cache="${MESHGATE_CACHE:-$HOME/.cache/meshgate}"
dir="$cache/kyverno-$key"
bin="$dir/bin"

if [ -f "$dir/.complete" ]; then
  log "up to date: $bin"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH. Install Go >= 1.26 (Kyverno is built from source with it)."
mkdir -p "$bin"
# One builder per cache dir: a second run started meanwhile waits here, then finds .complete.
exec 9>"$dir/.lock"
if ! flock -n 9; then
  log "another build of $dir is running; waiting for it"
  flock 9
fi
if [ -f "$dir/.complete" ]; then log "up to date: $bin"; exit 0; fi

# Same Go environment as scripts/build-controlplane.sh: no toolchain downloads, static binaries, go.sum-verified
# modules, no sum.golang.org (not reachable here).
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOSUMDB=off
export GOPROXY="${GOPROXY:-$(go env GOPROXY)}"
[ -n "$GOPROXY" ] || export GOPROXY="https://proxy.golang.org,direct"

version="$(cd "$mod" && go list -m -f '{{.Version}}' github.com/kyverno/kyverno)"
src="$(cd "$mod" && go mod download -json github.com/kyverno/kyverno | sed -n 's/.*"Dir": "\(.*\)",*$/\1/p')"
[ -d "$src" ] || die "github.com/kyverno/kyverno $version is not in the module cache (go mod download failed?)"

log "building kyverno $version into $dir"
log "a cold build takes a long time on 2 cores (it links cloud SDKs, sigstore and notary); later runs reuse the cache"
start=$SECONDS
(cd "$mod" && nice go build -trimpath -ldflags "-s -w -X github.com/kyverno/kyverno/pkg/version.BuildVersion=$version" \
  -o "$bin/.kyverno.tmp" github.com/kyverno/kyverno/cmd/kyverno) || die "building kyverno failed (see above)"
mv -f "$bin/.kyverno.tmp" "$bin/kyverno"
seconds=$((SECONDS - start))
log "built kyverno in ${seconds}s"

rm -rf "$dir/crds" && mkdir -p "$dir/crds"
find "$src/config/crds" -name '*.yaml' -exec cp {} "$dir/crds/" \;
chmod -R u+w "$dir/crds" # the module cache is read-only; keep the copy removable

cat > "$dir/manifest.json.tmp" <<JSON
{
  "kyvernoVersion": "$version",
  "goVersion": "$(go env GOVERSION)",
  "binary": "$bin/kyverno",
  "crdDir": "$dir/crds",
  "buildSeconds": $seconds,
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
JSON
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
touch "$dir/.complete"
# Keep the 2 newest finished builds (other worktrees may use an older key), delete the rest.
ls -1dt "$cache"/kyverno-*/.complete 2>/dev/null | tail -n +3 | while read -r stamp; do
  log "removing old build $(dirname "$stamp")"
  rm -rf "$(dirname "$stamp")"
done
log "done in ${seconds}s: $bin"
