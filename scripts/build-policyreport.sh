#!/usr/bin/env bash
# The wg-policy PolicyReport CRDs (wgpolicyk8s.io/v1alpha2 policyreports, clusterpolicyreports) as Kyverno ships them
# in its module (config/crds/policyreport), at the Kyverno version test/kyverno/go.mod pins: the real CRD that
# `kubectl get polr` reads, for the e2e test of meshgate's PolicyReports (test/e2e/day-one.test.ts). Only the module's
# source is downloaded from the Go module proxy (seconds); nothing is built (scripts/build-kyverno.sh builds Kyverno
# itself, for the benchmark peers).
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/policyreport-<key>/
#   crds/*.yaml      the module's config/crds/policyreport/wgpolicyk8s.io_*.yaml
#   manifest.json    the Kyverno version and the files
#   .complete        written last
part=policyreport
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
mod="$root/test/kyverno"
key_inputs() { printf '%s\n' "$mod/go.mod" "$root/scripts/build-policyreport.sh"; }
cache_begin "$@"
go_env 1.26

version="$(sed -n 's#^[[:space:]]*github.com/kyverno/kyverno \(v[^ ]*\).*#\1#p' "$mod/go.mod" | head -1)"
[ -n "$version" ] || die "test/kyverno/go.mod names no github.com/kyverno/kyverno version"
log "downloading github.com/kyverno/kyverno@$version (its source only) for its PolicyReport CRDs"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# Outside any module: only this module's zip is fetched, not its dependency graph.
src="$(cd "$scratch" && GOFLAGS= go mod download -json "github.com/kyverno/kyverno@$version" |
  sed -n 's/.*"Dir": "\(.*\)",*$/\1/p')"
[ -d "$src/config/crds/policyreport" ] || die "github.com/kyverno/kyverno@$version has no config/crds/policyreport"

rm -rf "$dir/crds" && mkdir -p "$dir/crds"
cp "$src"/config/crds/policyreport/wgpolicyk8s.io_*.yaml "$dir/crds/"
chmod -R u+w "$dir/crds" # the module cache is read-only; keep the copy removable
cat > "$dir/manifest.json.tmp" <<JSON
{
  "kyvernoVersion": "$version",
  "crdDir": "$dir/crds",
  "files": [$(cd "$dir/crds" && ls -1 | sed 's/.*/"&"/' | paste -sd,)]
}
JSON
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
cache_finish 2
