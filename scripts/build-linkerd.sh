#!/usr/bin/env bash
# Builds Linkerd's Go parts from the source snapshots in ../shared/vendor (next to the repository; each SOURCE file
# names its commit) into a cache outside the repo, for the tests that put the real Linkerd next to meshgate:
#   linkerd-cni              linkerd2-proxy-init/cni-plugin: the CNI plugin (programs the pod's iptables itself)
#   linkerd2-proxy-init      linkerd2-proxy-init/proxy-init: the linkerd-init container's iptables program
#   linkerd-proxy-injector   test/linkerd/injector: a main calling linkerd2's controller/cmd/proxy-injector Main,
#                            the `proxy-injector` subcommand of Linkerd's controller image
# The module proxy serves no usable version of either module (see /work/shared/notes/real-nodes.md §3), so:
# linkerd2-proxy-init is built in its (read-only) snapshot with its own go.mod/go.sum (-mod=readonly: nothing is
# written there); linkerd2 is a `replace` in test/linkerd/injector/go.mod. CGO_ENABLED=0 like the upstream images.
# linkerd-network-validator (Rust) is scripts/build-linkerd-validator.sh.
#
# Cache dir ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/linkerd-<key>/, keyed by both snapshots' SOURCE, go.mod and
# go.sum, the injector's go.mod, go.sum and main.go, this script (+ the preamble scripts/lib/build-common.sh: layout,
# lock, key); test/meshbin/binaries.ts finds it with the same key.
#   bin/<name>      the three binaries
#   manifest.json   commits, versions and per-binary build seconds
part=linkerd
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
vendor="$root/../shared/vendor"
init_src="$vendor/linkerd2-proxy-init"
l5d_src="$vendor/linkerd2"
injector="$root/test/linkerd/injector"
key_inputs() {
  printf '%s\n' "$init_src/SOURCE" "$init_src/go.mod" "$init_src/go.sum" "$l5d_src/SOURCE" "$l5d_src/go.mod" \
    "$l5d_src/go.sum" "$injector/go.mod" "$injector/go.sum" "$injector/main.go" "$root/scripts/build-linkerd.sh"
}
cache_begin "$@"
go_env 1.26.4

commit_of() { sed -n 's/^commit: *\([0-9a-f]\{40\}\)$/\1/p' "$1/SOURCE"; }
init_commit="$(commit_of "$init_src")"
l5d_commit="$(commit_of "$l5d_src")"
[ -n "$init_commit" ] && [ -n "$l5d_commit" ] || die "no 'commit: <sha>' line in $init_src/SOURCE or $l5d_src/SOURCE"
# Linkerd's CI stamps `<channel>-<version>`; a build of a commit is "git-<8 hex>" like its dev builds.
l5d_version="git-${l5d_commit:0:8}"

log "building linkerd-cni and linkerd2-proxy-init ($init_commit), linkerd-proxy-injector ($l5d_commit) into $dir"
log "a cold build takes about 6 minutes on 2 cores (the injector links client-go, helm and the proxy API)"
steps_total=3
step linkerd-cni go_build "$init_src" linkerd-cni -mod=readonly -ldflags "-s -w" ./cni-plugin
step linkerd2-proxy-init go_build "$init_src" linkerd2-proxy-init -mod=readonly -ldflags "-s -w" ./proxy-init
step linkerd-proxy-injector go_build "$injector" linkerd-proxy-injector \
  -ldflags "-s -w -X github.com/linkerd/linkerd2/pkg/version.Version=$l5d_version" .

cat > "$dir/manifest.json.tmp" <<EOF
{
  "proxyInitCommit": "$init_commit",
  "linkerd2Commit": "$l5d_commit",
  "linkerdVersion": "$l5d_version",
  "goVersion": "$(go env GOVERSION)",
  "binDir": "$bin",
  "buildSeconds": $(build_seconds_json),
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
EOF
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
cache_finish 3
