#!/usr/bin/env bash
# Builds cert-manager's controller and CA injector (github.com/cert-manager/cert-manager, pinned in
# test/cert-manager/go.mod; our own small mains there, since the module proxy does not serve cert-manager's command
# modules) into a cache outside the repo, for test/e2e/cert-manager.test.ts, and copies the module's Helm chart next
# to them: the test renders cert-manager's CRDs from it with the real helm and applies them to the harness apiserver.
#
# The cache dir is keyed by the first 12 hex digits of sha256(go.mod + go.sum + both mains + this script);
# test/e2e/harness/cert-manager.ts recomputes the same key.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/cert-manager-<key>/
#   bin/controller, bin/cainjector   built to bin/.<name>.tmp and renamed
#   chart/                           deploy/charts/cert-manager of the same module, version stamped
#   manifest.json                    versions, paths and build seconds
#   .complete                        written last; its presence is the "cache is usable" signal
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/cert-manager"
script="$root/scripts/build-cert-manager.sh"
log() { printf '[cert-manager] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

key="$(cat "$mod/go.mod" "$mod/go.sum" "$mod/controller/main.go" "$mod/cainjector/main.go" "$script" | sha256sum | cut -c1-12)"
cache="${MESHGATE_CACHE:-$HOME/.cache/meshgate}"
dir="$cache/cert-manager-$key"
bin="$dir/bin"

if [ -f "$dir/.complete" ]; then
  log "up to date: $bin"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH. Install Go >= 1.26 (cert-manager is built from source with it)."
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

version="$(cd "$mod" && go list -m -f '{{.Version}}' github.com/cert-manager/cert-manager)"
src="$(cd "$mod" && go mod download -json github.com/cert-manager/cert-manager | sed -n 's/.*"Dir": "\(.*\)",*$/\1/p')"
[ -d "$src" ] || die "github.com/cert-manager/cert-manager $version is not in the module cache (go mod download failed?)"

log "building cert-manager $version (controller, cainjector) into $dir"
log "a cold build takes a few minutes on 2 cores; later runs reuse the cache"
start=$SECONDS
for cmd in controller cainjector; do
  log "go build ./$cmd"
  (cd "$mod" && nice go build -trimpath \
    -ldflags "-s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$version" \
    -o "$bin/.$cmd.tmp" "./$cmd") || die "building the cert-manager $cmd failed (see above)"
  mv -f "$bin/.$cmd.tmp" "$bin/$cmd"
  log "built $cmd after $((SECONDS - start))s"
done
seconds=$((SECONDS - start))

rm -rf "$dir/chart"
cp -R "$src/deploy/charts/cert-manager" "$dir/chart"
chmod -R u+w "$dir/chart" # the module cache is read-only; keep the copy removable
# The release tool stamps the version; the module carries v0.0.0.
sed -i "s/^version: v0.0.0$/version: $version/; s/^appVersion: v0.0.0$/appVersion: $version/" "$dir/chart/Chart.yaml"

cat > "$dir/manifest.json.tmp" <<JSON
{
  "certManagerVersion": "$version",
  "goVersion": "$(go env GOVERSION)",
  "controller": "$bin/controller",
  "cainjector": "$bin/cainjector",
  "chartDir": "$dir/chart",
  "buildSeconds": $seconds,
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
JSON
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
touch "$dir/.complete"
# Keep the 2 newest finished builds (other worktrees may use an older key), delete the rest.
ls -1dt "$cache"/cert-manager-*/.complete 2>/dev/null | tail -n +3 | while read -r stamp; do
  log "removing old build $(dirname "$stamp")"
  rm -rf "$(dirname "$stamp")"
done
log "done in ${seconds}s: $bin"
