#!/usr/bin/env bash
# Builds Istio's own components from the Go module istio.io/istio (1.27.0, pinned in test/istio/go.mod) into a cache
# outside the repo, for the tests that put the real Istio next to meshgate:
#   istio-injector   test/istio/cmd/istio-injector: Istio's pkg/kube/inject webhook served like istiod serves it
#   istio-cni        istio.io/istio/cni/cmd/istio-cni: the CNI plugin (sidecar mode programs iptables itself)
#   install-cni      istio.io/istio/cni/cmd/install-cni: the istio-cni DaemonSet's node agent (installs the plugin
#                    and, with AMBIENT_ENABLED, serves ztunnel's ZDS socket and programs ambient pods' redirection)
#   istio-iptables   test/istio/cmd/istio-iptables: Istio's rule generator, the command istio-init runs
# and copies the module's istio-discovery chart next to them; test/e2e/harness/istio.ts renders it with helm at
# test time (so hub/tag/values can be overridden per test) and feeds the result to istio-injector.
#
# All four are built from ONE go.mod, one after the other with one build cache, so the packages they share compile
# once (the first binary pays for them). The cache dir is keyed by go.mod + go.sum + the Go sources under
# test/istio + this script (+ the preamble scripts/lib/build-common.sh); test/e2e/harness/istio.ts finds it with
# the same key.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/istio-<key>/
#   bin/<name>                 each binary, built to bin/.<name>.tmp and renamed
#   charts/istio-discovery/    manifests/charts/istio-control/istio-discovery of the same module
#   charts/gateway/            manifests/charts/gateway (the istio/gateway chart) of the same module
#   manifest.json              versions, paths and per-binary build seconds
#   .complete                  written last; its presence is the "cache is usable" signal
part=istio
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
mod="$root/test/istio"
# Key inputs in a fixed order (sorted paths), so the TS side can hash the same bytes.
key_inputs() {
  printf '%s\n' "$mod/go.mod" "$mod/go.sum"
  (cd "$mod" && find cmd -name '*.go' | LC_ALL=C sort | sed "s|^|$mod/|")
  printf '%s\n' "$root/scripts/build-istio.sh"
}
cache_begin "$@"
go_env 1.24

# The release this pseudo-version is (see test/istio/go.mod): stamped like Istio's release builds stamp it.
ISTIO_RELEASE=1.27.0
istio_version="$(cd "$mod" && go list -m -f '{{.Version}}' istio.io/istio)"
istio_dir="$(cd "$mod" && go mod download -json istio.io/istio | sed -n 's/.*"Dir": "\(.*\)",*$/\1/p')"
[ -d "$istio_dir" ] || die "istio.io/istio $istio_version is not in the module cache (go mod download failed?)"
commit="${istio_version##*-}"
ldflags="-s -w"
ldflags+=" -X istio.io/istio/pkg/version.buildVersion=$ISTIO_RELEASE -X istio.io/istio/pkg/version.buildTag=$ISTIO_RELEASE"
ldflags+=" -X istio.io/istio/pkg/version.buildGitRevision=$commit -X istio.io/istio/pkg/version.buildStatus=Clean"

log "building Istio $ISTIO_RELEASE ($istio_version): istio-iptables, istio-cni, install-cni, istio-injector into $dir"
log "a cold build takes several minutes on 2 cores; later runs reuse the cache"
build() { step "$1" go_build "$mod" "$1" -ldflags "$ldflags" "$2"; } # build <name> <package>
# Smallest closure first; the later ones reuse what the earlier compiled (istio-injector: pkg/kube/inject pulls in
# pilot's model; install-cni: istio-cni's packages plus the ambient node agent).
build istio-iptables ./cmd/istio-iptables
build istio-cni istio.io/istio/cni/cmd/istio-cni
build install-cni istio.io/istio/cni/cmd/install-cni
build istio-injector ./cmd/istio-injector

chart_src="$istio_dir/manifests/charts/istio-control/istio-discovery"
[ -f "$chart_src/Chart.yaml" ] || die "istio-discovery chart not found at $chart_src"
rm -rf "$dir/charts" && mkdir -p "$dir/charts"
cp -R "$chart_src" "$dir/charts/istio-discovery"
# The istio/gateway chart: its pods are what istiod's gateway template injects (test/e2e/istio-gateway.test.ts).
gateway_src="$istio_dir/manifests/charts/gateway"
[ -f "$gateway_src/Chart.yaml" ] || die "gateway chart not found at $gateway_src"
cp -R "$gateway_src" "$dir/charts/gateway"
chmod -R u+w "$dir/charts" # the module cache is read-only; keep the copy removable

cat > "$dir/manifest.json.tmp" <<EOF
{
  "istioRelease": "$ISTIO_RELEASE",
  "istioModuleVersion": "$istio_version",
  "istioCommit": "$commit",
  "goVersion": "$(go env GOVERSION)",
  "binDir": "$bin",
  "discoveryChart": "$dir/charts/istio-discovery",
  "gatewayChart": "$dir/charts/gateway",
  "buildSeconds": $(build_seconds_json),
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
EOF
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
# Each change makes a new dir of about 260 MB; pruning always keeps the 3 most recently used.
cache_finish 3
