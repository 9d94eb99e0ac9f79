#!/usr/bin/env bash
# Builds cert-manager's controller and CA injector (github.com/cert-manager/cert-manager, pinned in
# test/cert-manager/go.mod; our own small mains there, since the module proxy does not serve cert-manager's command
# modules) into a cache outside the repo, for test/e2e/cert-manager.test.ts, and copies the module's Helm chart next
# to them: the test renders cert-manager's CRDs from it with the real helm and applies them to the harness apiserver.
#
# The cache dir is keyed by go.mod + go.sum + both mains and their shared package + this script (+ the preamble scripts/lib/build-common.sh:
# key, lock, Go environment); test/e2e/harness/cert-manager.ts finds it with the same key.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/cert-manager-<key>/
#   bin/controller, bin/cainjector   built to bin/.<name>.tmp and renamed
#   chart/                           deploy/charts/cert-manager of the same module, version stamped
#   manifest.json                    versions, paths and build seconds
#   .complete                        written last; its presence is the "cache is usable" signal
part=cert-manager
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
mod="$root/test/cert-manager"
key_inputs() {
  printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$mod/controller/main.go" "$mod/cainjector/main.go" \
    "$mod/internal/command/command.go" "$root/scripts/build-cert-manager.sh"
}
cache_begin "$@"
go_env 1.26

version="$(cd "$mod" && go list -m -f '{{.Version}}' github.com/cert-manager/cert-manager)"
src="$(cd "$mod" && go mod download -json github.com/cert-manager/cert-manager | sed -n 's/.*"Dir": "\(.*\)",*$/\1/p')"
[ -d "$src" ] || die "github.com/cert-manager/cert-manager $version is not in the module cache (go mod download failed?)"

log "building cert-manager $version (controller, cainjector) into $dir"
log "a cold build takes a few minutes on 2 cores; later runs reuse the cache"
steps_total=2
for cmd in controller cainjector; do
  step "$cmd" go_build "$mod" "$cmd" \
    -ldflags "-s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$version" "./$cmd"
done

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
  "buildSeconds": $((SECONDS - start)),
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
JSON
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
cache_finish 2
