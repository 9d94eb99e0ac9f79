#!/usr/bin/env bash
# Builds the CNI oracle (test/cni/oracle): a small Go program linking the REAL libcni and go-cni, which
# test/cni/oracle.test.ts runs to prove meshgate's CNI config reading agrees with the container runtimes.
# Three binaries from one source, one per libcni line containerd ships:
#   cni-oracle          go.mod:          libcni v1.1.1 + go-cni v1.1.6 (Debian's containerd 1.6.20; 1.6/1.7 are 1.1.x)
#   cni-oracle-libcni12 go.libcni12.mod: libcni v1.2.3 + go-cni v1.1.12 (containerd 2.0)
#   cni-oracle-latest   go.latest.mod:   the newest libcni and go-cni releases (v1.3.1, containerd >= 2.1 is 1.3.x)
# CRI-O's selection is built by scripts/build-ocicni-oracle.sh from CRI-O's own code.
# Cache dir ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/cni-oracle-<key>/bin, keyed by go.mod + go.sum + go.latest.mod +
# go.latest.sum + go.libcni12.mod + go.libcni12.sum + main.go + this script (+ the preamble:
# scripts/lib/build-common.sh, which also holds the layout and the lock); test/cni/oracle-binary.ts finds it with the
# same key.
part=cni-oracle
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
mod="$root/test/cni/oracle"
key_inputs() {
  printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$mod/go.latest.mod" "$mod/go.latest.sum" "$mod/go.libcni12.mod" \
    "$mod/go.libcni12.sum" "$mod/main.go" "$root/scripts/build-cni-oracle.sh"
}
cache_begin "$@"
go_env 1.21

log "building into $dir (about a minute cold)"
steps_total=3
step cni-oracle go_build "$mod" cni-oracle .
step cni-oracle-libcni12 go_build "$mod" cni-oracle-libcni12 -modfile=go.libcni12.mod .
step cni-oracle-latest go_build "$mod" cni-oracle-latest -modfile=go.latest.mod .
cache_finish 3
