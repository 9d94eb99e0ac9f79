#!/usr/bin/env bash
# Builds Istio's own components from the Go module istio.io/istio (1.27.0, pinned in test/istio/go.mod) into a cache
# outside the repo, for the tests that put the real Istio next to meshgate:
#   istio-injector   test/istio/cmd/istio-injector: Istio's pkg/kube/inject webhook served like istiod serves it
#   istio-cni        istio.io/istio/cni/cmd/istio-cni: the CNI plugin (sidecar mode programs iptables itself)
#   istio-iptables   test/istio/cmd/istio-iptables: Istio's rule generator, the command istio-init runs
# and copies the module's istio-discovery chart next to them; test/e2e/harness/istio.ts renders it with helm at
# test time (so hub/tag/values can be overridden per test) and feeds the result to istio-injector.
#
# All three are built from ONE go.mod, one after the other with one build cache, so the packages they share compile
# once (the first binary pays for them). The cache dir is keyed by the first 12 hex digits of sha256(go.mod + go.sum
# + the Go sources under test/istio + this script); test/e2e/harness/istio.ts recomputes the same key.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/istio-<key>/
#   bin/<name>                 each binary, built to bin/.<name>.tmp and renamed
#   charts/istio-discovery/    manifests/charts/istio-control/istio-discovery of the same module
#   manifest.json              versions, paths and per-binary build seconds
#   .complete                  written last; its presence is the "cache is usable" signal
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/istio"
script="$root/scripts/build-istio.sh"
log() { printf '[istio] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Key inputs in a fixed order (sorted paths), so the TS side can hash the same bytes.
key_inputs() {
  printf '%s\n' "$mod/go.mod" "$mod/go.sum"
  (cd "$mod" && find cmd -name '*.go' | LC_ALL=C sort | sed "s|^|$mod/|")
  printf '%s\n' "$script"
}
key="$(key_inputs | xargs -d "\n" cat | sha256sum | cut -c1-12)"
cache="${MESHGATE_CACHE:-$HOME/.cache/meshgate}"
dir="$cache/istio-$key"
bin="$dir/bin"

if [ -f "$dir/.complete" ]; then
  log "up to date: $bin"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH. Install Go >= 1.24 (Istio is built from source with it)."
mkdir -p "$bin"
# One builder per cache dir: a second `npm test` started meanwhile waits here, then finds .complete.
exec 9>"$dir/.lock"
if ! flock -n 9; then
  log "another build of $dir is running; waiting for it"
  flock 9
fi
if [ -f "$dir/.complete" ]; then log "up to date: $bin"; exit 0; fi

# Same Go environment as scripts/build-controlplane.sh (see there): no toolchain downloads, static binaries,
# go.sum-verified modules, no sum.golang.org (not reachable here).
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOSUMDB=off
export GOPROXY="${GOPROXY:-$(go env GOPROXY)}"
[ -n "$GOPROXY" ] || export GOPROXY="https://proxy.golang.org,direct"

# The release this pseudo-version is (see test/istio/go.mod): stamped like Istio's release builds stamp it.
ISTIO_RELEASE=1.27.0
istio_version="$(cd "$mod" && go list -m -f '{{.Version}}' istio.io/istio)"
istio_dir="$(cd "$mod" && go mod download -json istio.io/istio | sed -n 's/.*"Dir": "\(.*\)",*$/\1/p')"
[ -d "$istio_dir" ] || die "istio.io/istio $istio_version is not in the module cache (go mod download failed?)"
commit="${istio_version##*-}"
ldflags="-s -w"
ldflags+=" -X istio.io/istio/pkg/version.buildVersion=$ISTIO_RELEASE -X istio.io/istio/pkg/version.buildTag=$ISTIO_RELEASE"
ldflags+=" -X istio.io/istio/pkg/version.buildGitRevision=$commit -X istio.io/istio/pkg/version.buildStatus=Clean"

log "building Istio $ISTIO_RELEASE ($istio_version): istio-iptables, istio-cni, istio-injector into $dir"
log "a cold build takes several minutes on 2 cores; later runs reuse the cache"
start=$SECONDS
times=""
build() { # build <name> <package>: build to a temp name, then rename into place; records the seconds it took
  local name="$1" pkg="$2" t0=$SECONDS
  if [ -x "$bin/$name" ]; then log "$name already built"; times+="\"$name\": null, "; return; fi
  log "building $name… (elapsed $((SECONDS - start))s)"
  (cd "$mod" && nice go build -trimpath -ldflags "$ldflags" -o "$bin/.$name.tmp" "$pkg") || die "building $name failed (see above)"
  mv -f "$bin/.$name.tmp" "$bin/$name"
  log "built $name in $((SECONDS - t0))s"
  times+="\"$name\": $((SECONDS - t0)), "
}
# Smallest closure first; istio-injector (pkg/kube/inject pulls in pilot's model) reuses what the others compiled.
build istio-iptables ./cmd/istio-iptables
build istio-cni istio.io/istio/cni/cmd/istio-cni
build istio-injector ./cmd/istio-injector

chart_src="$istio_dir/manifests/charts/istio-control/istio-discovery"
[ -f "$chart_src/Chart.yaml" ] || die "istio-discovery chart not found at $chart_src"
rm -rf "$dir/charts" && mkdir -p "$dir/charts"
cp -R "$chart_src" "$dir/charts/istio-discovery"
chmod -R u+w "$dir/charts" # the module cache is read-only; keep the copy removable

cat > "$dir/manifest.json.tmp" <<EOF
{
  "istioRelease": "$ISTIO_RELEASE",
  "istioModuleVersion": "$istio_version",
  "istioCommit": "$commit",
  "goVersion": "$(go env GOVERSION)",
  "binDir": "$bin",
  "discoveryChart": "$dir/charts/istio-discovery",
  "buildSeconds": { ${times%, } },
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
EOF
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
new_key="$(key_inputs | xargs -d "\n" cat | sha256sum | cut -c1-12)"
[ "$new_key" = "$key" ] || log "WARNING: test/istio changed during the build (run 'go mod tidy' there and commit)"
touch "$dir/.complete"
# Each change makes a new dir of about 250 MB; keep the 3 newest finished ones (other worktrees may use older
# keys), delete the rest.
ls -1dt "$cache"/istio-*/.complete 2>/dev/null | tail -n +4 | while read -r stamp; do
  log "removing old build $(dirname "$stamp")"
  rm -rf "$(dirname "$stamp")"
done
log "done in $((SECONDS - start))s: $bin"
