#!/usr/bin/env bash
# Builds what the real-node test tier (test/realnode) runs besides Debian's containerd/runc/CNI plugins:
#   kubelet              from the control-plane Go module (test/e2e/controlplane: cmd/kubelet is in its tool block),
#                        so it is exactly the Kubernetes release the apiserver is
#   pause                kubernetes' build/pause/linux/pause.c from the same module, gcc -static (the sandbox image)
#   meshgate-e2e-proxy   test/realnode/images/proxy.c (+ standin.h), gcc -static: the stand-in for Istio's proxyv2
#   meshgate-e2e-become-proxy  test/realnode/images/become-proxy.c, gcc -static: scenario S9's app (setuid(1337))
#   meshgate-e2e-cri     test/realnode/cri (own go.mod): the CRI client of the emulation check
# OCI image archives are made from these by the harness at run time (test/realnode/harness/image.ts): milliseconds.
# The cache dir is keyed by go.mod + go.sum + this script + proxy.c + become-proxy.c + the CRI client's go.mod, go.sum
# and main.go + standin.h (+ the preamble scripts/lib/build-common.sh); test/realnode/harness/binaries.ts finds it with the same
# key. The kubelet depends only on the control-plane module: a new dir copies it from an older one built from the
# same go.mod/go.sum (bin/kubelet.key), so editing proxy.c or become-proxy.c costs a second, not a kubelet build.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/realnode-<key>/
#   bin/<name>      built to bin/.<name>.tmp and renamed, so a killed build never leaves half a file
#   manifest.json   versions and paths
#   .complete       written last; its presence is the "cache is usable" signal
# and ${MESHGATE_CACHE}/realnode-current.json pointing at the last completed dir.
part=realnode
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"

PAUSE_VERSION=3.10.1 # build/pause/Makefile TAG of Kubernetes 1.34

mod="$root/test/e2e/controlplane"
cri="$root/test/realnode/cri"
proxy_src="$root/test/realnode/images/proxy.c"
become_src="$root/test/realnode/images/become-proxy.c"
key_inputs() {
  printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$root/scripts/build-realnode.sh" "$proxy_src" "$become_src" \
    "$cri/go.mod" "$cri/go.sum" "$cri/main.go" "$root/test/realnode/images/standin.h"
}
kubelet_key="$(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-64)"
# realnode-current.json, rewritten only when it changes, so warm runs stay read-only.
on_complete() {
  local want; want="{\"dir\": \"$dir\", \"binDir\": \"$bin\", \"manifest\": \"$dir/manifest.json\"}"
  if [ "$(cat "$cache/realnode-current.json" 2>/dev/null)" != "$want" ]; then
    printf '%s\n' "$want" > "$cache/realnode-current.json.tmp"
    mv -f "$cache/realnode-current.json.tmp" "$cache/realnode-current.json"
  fi
}
cache_begin "$@"
# With the control plane's Go environment the kubelet build reuses its build cache: only ~100 kubelet-only packages
# are compiled.
go_env 1.25
need gcc "apt-get install gcc libc6-dev: pause and the proxy stand-in are static C."

k8s_version="$(cd "$mod" && go list -m -f '{{.Version}}' k8s.io/kubernetes)"
k8s_src="$(cd "$mod" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)"
[ -n "$k8s_src" ] && [ -d "$k8s_src" ] || { (cd "$mod" && go mod download k8s.io/kubernetes); k8s_src="$(cd "$mod" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)"; }
minor="$(echo "$k8s_version" | cut -d. -f2)"
k8s_info="$(cd "$mod" && go mod download -json k8s.io/kubernetes | sed -n 's/.*"Info": "\(.*\)",*$/\1/p')"
git_commit="$(sed -n 's/.*"Hash":"\([0-9a-f]\{40\}\)".*/\1/p' "$k8s_info" 2>/dev/null || true)"
build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
  [ -z "$git_commit" ] || ldflags+=" -X $pkg.gitCommit=$git_commit"
done

log "building kubelet $k8s_version, pause $PAUSE_VERSION and the proxy stand-in into $dir"
# A kubelet built from the same go.mod/go.sum in an older dir is the same kubelet (only the -X buildDate differs).
for old in "$cache"/realnode-*/bin; do
  [ ! -x "$bin/kubelet" ] && [ "$old" != "$bin" ] && [ -x "$old/kubelet" ] && [ "$(cat "$old/kubelet.key" 2>/dev/null)" = "$kubelet_key" ] || continue
  log "kubelet: reusing $old/kubelet (same control-plane go.mod/go.sum)"
  cp "$old/kubelet" "$bin/.kubelet.tmp" && mv -f "$bin/.kubelet.tmp" "$bin/kubelet"
done
step kubelet go_build "$mod" kubelet -ldflags "$ldflags" k8s.io/kubernetes/cmd/kubelet
printf '%s\n' "$kubelet_key" > "$bin/kubelet.key"
# Flags as in build/pause/Makefile (CFLAGS = -Os -Wall -Werror -static -DVERSION=...).
step pause gcc -Os -Wall -Werror -static "-DVERSION=v$PAUSE_VERSION" -o "$bin/.pause.tmp" "$k8s_src/build/pause/linux/pause.c"
step meshgate-e2e-proxy gcc -Os -Wall -Werror -static -o "$bin/.meshgate-e2e-proxy.tmp" "$proxy_src"
step meshgate-e2e-become-proxy gcc -Os -Wall -Werror -static -o "$bin/.meshgate-e2e-become-proxy.tmp" "$become_src"
step meshgate-e2e-cri go_build "$cri" meshgate-e2e-cri -ldflags "-s -w" .

cat > "$dir/manifest.json.tmp" <<EOF
{
  "kubernetesVersion": "$k8s_version",
  "pauseVersion": "$PAUSE_VERSION",
  "goVersion": "$(go env GOVERSION)",
  "binDir": "$bin",
  "builtAt": "$build_date"
}
EOF
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
# A kubelet is ~80 MB; pruning always keeps the 3 most recently used dirs.
cache_finish 3
