#!/usr/bin/env bash
# Builds the CNI oracle (test/cni/oracle): a small Go program linking the REAL libcni and go-cni, which
# test/cni/oracle.test.ts runs to prove meshgate's CNI config reading agrees with the container runtimes.
# Three binaries from one source, one per libcni line containerd ships:
#   cni-oracle          go.mod:          libcni v1.1.1 + go-cni v1.1.6 (Debian's containerd 1.6.20; 1.6/1.7 are 1.1.x)
#   cni-oracle-libcni12 go.libcni12.mod: libcni v1.2.3 + go-cni v1.1.12 (containerd 2.0)
#   cni-oracle-latest   go.latest.mod:   the newest libcni and go-cni releases (v1.3.1, containerd >= 2.1 is 1.3.x)
# CRI-O's selection is built by scripts/build-ocicni-oracle.sh from CRI-O's own code.
# The cache dir is keyed by the first 12 hex digits of sha256(go.mod + go.sum + go.latest.mod + go.latest.sum +
# go.libcni12.mod + go.libcni12.sum + main.go + this script); test/cni/oracle-binary.ts recomputes the same key,
# keep the two in sync.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/cni-oracle-<key>/
#   bin/<name>   built to bin/.<name>.tmp and renamed, so a killed build never leaves half a file
#   .complete    written last; its presence is the "cache is usable" signal
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/cni/oracle"
script="$root/scripts/build-cni-oracle.sh"
log() { printf '[cni-oracle] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

inputs=("$mod/go.mod" "$mod/go.sum" "$mod/go.latest.mod" "$mod/go.latest.sum" "$mod/go.libcni12.mod"
  "$mod/go.libcni12.sum" "$mod/main.go" "$script")
key="$(cat "${inputs[@]}" | sha256sum | cut -c1-12)"
cache="${MESHGATE_CACHE:-$HOME/.cache/meshgate}"
dir="$cache/cni-oracle-$key"
bin="$dir/bin"

if [ -f "$dir/.complete" ]; then
  log "up to date: $bin"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH. Install Go >= 1.21 (the CNI oracle is built from Go modules)."
mkdir -p "$bin"
# One builder per cache dir: a second `npm test` started meanwhile waits here, then finds .complete.
exec 9>"$dir/.lock"
if ! flock -n 9; then
  log "another build of $dir is running; waiting for it"
  flock 9
fi
if [ -f "$dir/.complete" ]; then log "up to date: $bin"; exit 0; fi

# Same Go environment as scripts/build-controlplane.sh: no toolchain download, static binaries, go.mod/go.sum
# decide (sum.golang.org is not reachable here; the committed go.sum files still verify every module).
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOSUMDB=off
export GOPROXY="${GOPROXY:-$(go env GOPROXY)}"
[ -n "$GOPROXY" ] || export GOPROXY="https://proxy.golang.org,direct"

start=$SECONDS
build() { # build <name> <go build args...>
  local name="$1"; shift
  log "building $name… (elapsed $((SECONDS - start))s)"
  (cd "$mod" && nice go build -trimpath -o "$bin/.$name.tmp" "$@" .) || die "building $name failed (see above)"
  mv -f "$bin/.$name.tmp" "$bin/$name"
}
log "building into $dir (about a minute cold)"
build cni-oracle
build cni-oracle-libcni12 -modfile=go.libcni12.mod
build cni-oracle-latest -modfile=go.latest.mod

new_key="$(cat "${inputs[@]}" | sha256sum | cut -c1-12)"
[ "$new_key" = "$key" ] || log "WARNING: the oracle's go.mod/go.sum changed during the build (run 'go mod tidy' there and commit)"
touch "$dir/.complete"
# Keep the 3 newest finished builds (other worktrees may use older keys), delete the rest.
ls -1dt "$cache"/cni-oracle-*/.complete 2>/dev/null | tail -n +4 | while read -r stamp; do
  log "removing old build $(dirname "$stamp")"
  rm -rf "$(dirname "$stamp")"
done
log "done in $((SECONDS - start))s: $bin"
