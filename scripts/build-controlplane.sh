#!/usr/bin/env bash
# Builds the e2e control plane from Go modules into a cache outside the repo:
#   etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl  (pinned in test/e2e/controlplane/go.mod)
#   kwok, helm                                                             (go install pkg@version, pinned below)
# The cache dir is keyed by go.mod + go.sum + this script (+ the preamble scripts/lib/build-common.sh: key, lock,
# Go environment); test/e2e/harness/binaries.ts finds it with the same key.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/controlplane-<key>/
#   bin/<name>          each binary, built to bin/.<name>.tmp and renamed, so a killed build never leaves half a file
#   kwok-stages/*/     kwok's stage configs (copied out of the module cache; kwok v0.8 needs them via --config)
#   manifest.json       versions and paths, for the harness and for humans
#   .complete           written last; its presence is the "cache is usable" signal
# It also writes ${MESHGATE_CACHE}/controlplane-current.json pointing at the last completed dir.
part=controlplane
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"

KWOK_VERSION=v0.8.0
HELM_VERSION=v3.19.5

mod="$root/test/e2e/controlplane"
key_inputs() { printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$root/scripts/build-controlplane.sh"; }
# controlplane-current.json, rewritten only when it changes, so warm runs stay read-only.
on_complete() {
  local want; want="{\"dir\": \"$dir\", \"binDir\": \"$bin\", \"manifest\": \"$dir/manifest.json\"}"
  if [ "$(cat "$cache/controlplane-current.json" 2>/dev/null)" != "$want" ]; then
    printf '%s\n' "$want" > "$cache/controlplane-current.json.tmp"
    mv -f "$cache/controlplane-current.json.tmp" "$cache/controlplane-current.json"
  fi
}
cache_begin "$@"
go_env 1.25

k8s_version="$(cd "$mod" && go list -m -f '{{.Version}}' k8s.io/kubernetes)"
etcd_version="$(cd "$mod" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
minor="$(echo "$k8s_version" | cut -d. -f2)"
# The release's git commit, from the proxy's .info file (Origin.Hash); empty if the proxy did not record it.
k8s_info="$(cd "$mod" && go mod download -json k8s.io/kubernetes | sed -n 's/.*"Info": "\(.*\)",*$/\1/p')"
git_commit="$(sed -n 's/.*"Hash":"\([0-9a-f]\{40\}\)".*/\1/p' "$k8s_info" 2>/dev/null || true)"
build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
# Same variables as kubernetes' hack/lib/version.sh, so /version and `kubectl version` report the pinned release.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
  [ -z "$git_commit" ] || ldflags+=" -X $pkg.gitCommit=$git_commit"
done

log "building Kubernetes $k8s_version, etcd $etcd_version, kwok $KWOK_VERSION, helm $HELM_VERSION into $dir"
log "cold builds take a long time on 2 cores (about half an hour); later runs reuse the cache"
steps_total=7
# install_tool <name> <pkg@version> [ldflags], for step: go install outside the module (its own go.mod pins deps).
install_tool() {
  local name="$1" pkg="$2" extra="${3:-}" tmp="$dir/.gobin-$1"
  rm -rf "$tmp"
  (cd "$dir" && GOFLAGS=-buildvcs=false GOBIN="$tmp" nice go install -trimpath -ldflags "-s -w $extra" "$pkg") &&
    mv -f "$tmp/$name" "$bin/.$name.tmp" && rm -rf "$tmp"
}

step etcd go_build "$mod" etcd -ldflags "-s -w" go.etcd.io/etcd/server/v3
for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  step "$c" go_build "$mod" "$c" -ldflags "$ldflags" "k8s.io/kubernetes/cmd/$c"
done
step kwok install_tool kwok "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
# helm's default version string is only "v3.19"; stamp the full one like its release builds do.
step helm install_tool helm "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"

# kwok's stage configs: pods get Ready/Running, nodes get Ready and heartbeat. Copied next to the binaries so the
# harness does not depend on the module cache later. Sources live in kwok's module under kustomize/stage/.
kwok_src="$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage"
[ -d "$kwok_src" ] || die "kwok stage configs not found at $kwok_src"
rm -rf "$dir/kwok-stages" && mkdir -p "$dir/kwok-stages"
# node: Ready + lease heartbeat. pod-fast: straight to Running. pod-general: also walks init containers.
copy_stages() { # copy_stages <dest subdir> <source files...>
  local sub="$1"; shift
  mkdir -p "$dir/kwok-stages/$sub"
  for f in "$@"; do
    [ -f "$kwok_src/$f" ] || die "kwok stage config $kwok_src/$f is missing"
    cp "$kwok_src/$f" "$dir/kwok-stages/$sub/"
  done
}
copy_stages node node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
copy_stages pod-fast pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml
copy_stages pod-general pod/general/pod-create.yaml pod/general/pod-init-container-running.yaml \
  pod/general/pod-init-container-completed.yaml pod/general/pod-ready.yaml pod/general/pod-complete.yaml \
  pod/general/pod-delete.yaml

cat > "$dir/manifest.json.tmp" <<EOF
{
  "kubernetesVersion": "$k8s_version",
  "etcdVersion": "$etcd_version",
  "kwokVersion": "$KWOK_VERSION",
  "helmVersion": "$HELM_VERSION",
  "goVersion": "$(go env GOVERSION)",
  "binDir": "$bin",
  "kwokStageDir": "$dir/kwok-stages",
  "builtAt": "$build_date"
}
EOF
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
# Each go.mod/script change makes a new ~460 MB dir; pruning (scripts/lib/build-common.sh) always keeps the 3 most
# recently used.
cache_finish 3
