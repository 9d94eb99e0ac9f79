#!/usr/bin/env bash
# Builds Kyverno's admission controller (github.com/kyverno/kyverno/cmd/kyverno, pinned in test/kyverno/go.mod) into
# a cache outside the repo, for `npm run bench -- --peers` (a second real injector peer: a ClusterPolicy that adds a
# sidecar) and copies the module's CRDs next to it (Kyverno refuses to start without them).
#
# The cache dir is keyed by go.mod + go.sum + this script (+ the preamble scripts/lib/build-common.sh);
# bench/peers/kyverno.ts finds it with the same key.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/kyverno-<key>/
#   bin/kyverno      built to bin/.kyverno.tmp and renamed
#   crds/*.yaml      config/crds of the same module
#   manifest.json    versions, paths and build seconds
#   .complete        written last; its presence is the "cache is usable" signal
part=kyverno
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
mod="$root/test/kyverno"
key_inputs() { printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$root/scripts/build-kyverno.sh"; }
cache_begin "$@"
go_env 1.26

version="$(cd "$mod" && go list -m -f '{{.Version}}' github.com/kyverno/kyverno)"
src="$(cd "$mod" && go mod download -json github.com/kyverno/kyverno | sed -n 's/.*"Dir": "\(.*\)",*$/\1/p')"
[ -d "$src" ] || die "github.com/kyverno/kyverno $version is not in the module cache (go mod download failed?)"

log "building kyverno $version into $dir"
log "a cold build takes a long time on 2 cores (it links cloud SDKs, sigstore and notary); later runs reuse the cache"
step kyverno go_build "$mod" kyverno -ldflags "-s -w -X github.com/kyverno/kyverno/pkg/version.BuildVersion=$version" \
  github.com/kyverno/kyverno/cmd/kyverno

rm -rf "$dir/crds" && mkdir -p "$dir/crds"
find "$src/config/crds" -name '*.yaml' -exec cp {} "$dir/crds/" \;
chmod -R u+w "$dir/crds" # the module cache is read-only; keep the copy removable

cat > "$dir/manifest.json.tmp" <<JSON
{
  "kyvernoVersion": "$version",
  "goVersion": "$(go env GOVERSION)",
  "binary": "$bin/kyverno",
  "crdDir": "$dir/crds",
  "buildSeconds": $((SECONDS - start)),
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
JSON
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
# Pruning (scripts/lib/build-common.sh) always keeps the 2 most recently used builds.
cache_finish 2
