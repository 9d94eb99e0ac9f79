#!/usr/bin/env bash
# Builds the CNI oracle (test/cni/oracle): a small Go program linking the REAL libcni and go-cni, which
# test/cni/oracle.test.ts runs to prove meshgate's CNI config reading agrees with the container runtimes.
# Two binaries from one source:
#   cni-oracle         go.mod:        libcni v1.1.1 + go-cni v1.1.6 (what Debian's containerd 1.6.20 builds with)
#   cni-oracle-latest  go.latest.mod: the newest libcni and go-cni releases, for the comparison with them
# Cache dir ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/cni-oracle-<key>/bin, keyed by go.mod + go.sum + go.latest.mod +
# go.latest.sum + main.go + this script (+ the preamble: scripts/lib/build-common.sh, which also holds the layout
# and the lock); test/cni/oracle-binary.ts finds it with the same key.
part=cni-oracle
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
mod="$root/test/cni/oracle"
key_inputs() {
  printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$mod/go.latest.mod" "$mod/go.latest.sum" "$mod/main.go" \
    "$root/scripts/build-cni-oracle.sh"
}
cache_begin "$@"
go_env 1.21

log "building into $dir (about a minute cold)"
step cni-oracle go_build "$mod" cni-oracle .
step cni-oracle-latest go_build "$mod" cni-oracle-latest -modfile=go.latest.mod .
cache_finish 3
