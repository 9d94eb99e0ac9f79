#!/usr/bin/env bash
# Builds the e2e control plane from Go modules into a cache outside the repo:
#   etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl  (pinned in test/e2e/controlplane/go.mod)
#   kwok, helm                                                             (go install pkg@version, pinned below)
# The cache dir is keyed by the first 12 hex digits of sha256(go.mod + go.sum + this script), so editing any of
# them gives a fresh dir, and an unchanged tree reuses the finished one (a warm run only hashes three files).
# test/e2e/harness/binaries.ts recomputes the same key; keep the two in sync.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/controlplane-<key>/
#   bin/<name>          each binary, built to bin/.<name>.tmp and renamed, so a killed build never leaves half a file
#   kwok-stages/*/     kwok's stage configs (copied out of the module cache; kwok v0.8 needs them via --config)
#   manifest.json       versions and paths, for the harness and for humans
#   .complete           written last; its presence is the "cache is usable" signal
# It also writes ${MESHGATE_CACHE}/controlplane-current.json pointing at the last completed dir.
set -euo pipefail

KWOK_VERSION=v0.8.0
HELM_VERSION=v3.19.5

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/e2e/controlplane"
script="$root/scripts/build-controlplane.sh"
log() { printf '[controlplane] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

key="$(cat "$mod/go.mod" "$mod/go.sum" "$script" | sha256sum | cut -c1-12)"
cache="${MESHGATE_CACHE:-$HOME/.cache/meshgate}"
dir="$cache/controlplane-$key"
bin="$dir/bin"

write_current() {
  # Rewritten only when it changes, so warm runs stay read-only.
  local want; want="{\"dir\": \"$dir\", \"binDir\": \"$bin\", \"manifest\": \"$dir/manifest.json\"}"
  if [ "$(cat "$cache/controlplane-current.json" 2>/dev/null)" != "$want" ]; then
    printf '%s\n' "$want" > "$cache/controlplane-current.json.tmp"
    mv -f "$cache/controlplane-current.json.tmp" "$cache/controlplane-current.json"
  fi
}

if [ -f "$dir/.complete" ]; then
  write_current
  log "up to date: $bin"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH. Install Go >= 1.25 (the control plane is built from source with it)."
mkdir -p "$bin"
# One builder per cache dir: a second `npm test` started meanwhile waits here, then finds .complete.
exec 9>"$dir/.lock"
if ! flock -n 9; then
  log "another build of $dir is running; waiting for it"
  flock 9
fi
if [ -f "$dir/.complete" ]; then write_current; log "up to date: $bin"; exit 0; fi

# Environment for every go command below.
#  - GOTOOLCHAIN=local: never download another Go toolchain (not reachable here); use the installed go.
#  - CGO_ENABLED=0: static binaries, no C toolchain needed, like the official release builds.
#  - GOFLAGS=-mod=mod: resolve from go.mod/go.sum; -buildvcs=false: don't stamp the repo's git state.
#  - GOSUMDB=off: sum.golang.org is NOT reachable from this environment. The committed go.sum still verifies every
#    module of test/e2e/controlplane; only the kwok/helm `go install pkg@version` downloads rely on the proxy alone.
#  - GOPROXY: respected if the caller set it, otherwise the go default.
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOSUMDB=off
export GOPROXY="${GOPROXY:-$(go env GOPROXY)}"
[ -n "$GOPROXY" ] || export GOPROXY="https://proxy.golang.org,direct"

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
start=$SECONDS
total=7
step=0
build() { # build <name> <go build args...>: build to a temp name, then rename into place
  local name="$1"; shift
  step=$((step + 1))
  if [ -x "$bin/$name" ]; then log "$name ($step/$total) already built"; return; fi
  log "building $name ($step/$total)… (elapsed $((SECONDS - start))s)"
  local t0=$SECONDS
  (cd "$mod" && nice go build -trimpath -o "$bin/.$name.tmp" "$@") || die "building $name failed (see above)"
  mv -f "$bin/.$name.tmp" "$bin/$name"
  log "built $name in $((SECONDS - t0))s"
}
install_tool() { # install_tool <name> <pkg@version> [ldflags]: go install outside the module (own go.mod pins deps)
  local name="$1" pkg="$2" extra="${3:-}" tmp="$dir/.gobin-$1"
  step=$((step + 1))
  if [ -x "$bin/$name" ]; then log "$name ($step/$total) already built"; return; fi
  log "building $name ($step/$total)… (elapsed $((SECONDS - start))s)"
  local t0=$SECONDS
  rm -rf "$tmp"
  (cd "$dir" && GOFLAGS=-buildvcs=false GOBIN="$tmp" nice go install -trimpath -ldflags "-s -w $extra" "$pkg") ||
    die "go install $pkg failed (see above)"
  mv -f "$tmp/$name" "$bin/$name"
  rm -rf "$tmp"
  log "built $name in $((SECONDS - t0))s"
}

build etcd -ldflags "-s -w" go.etcd.io/etcd/server/v3
for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  build "$c" -ldflags "$ldflags" "k8s.io/kubernetes/cmd/$c"
done
install_tool kwok "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
# helm's default version string is only "v3.19"; stamp the full one like its release builds do.
install_tool helm "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"

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
new_key="$(cat "$mod/go.mod" "$mod/go.sum" "$script" | sha256sum | cut -c1-12)"
[ "$new_key" = "$key" ] || log "WARNING: go.mod/go.sum changed during the build (run 'go mod tidy' there and commit)"
touch "$dir/.complete"
write_current
# Each go.mod/script change makes a new ~500 MB dir; keep the 3 newest finished ones (other worktrees may use
# older keys), delete the rest.
ls -1dt "$cache"/controlplane-*/.complete 2>/dev/null | tail -n +4 | while read -r stamp; do
  log "removing old build $(dirname "$stamp")"
  rm -rf "$(dirname "$stamp")"
done
log "done in $((SECONDS - start))s: $bin"
