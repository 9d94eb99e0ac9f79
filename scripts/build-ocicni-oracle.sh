#!/usr/bin/env bash
# Builds the CRI-O oracle (test/cni/ocicni-oracle): a small Go program that runs CRI-O's REAL network selection
# (github.com/cri-o/ocicni's InitCNI → loadNetworks) over a conf dir, which test/cni/oracle.test.ts compares with
# meshgate's CRI-O emulation for each libcni line. The module proxy refuses github.com/cri-o/ocicni, so it is built
# from the snapshots in ../shared/vendor (ocicni-latest, ocicni-libcni-1.1), copied into a TEMPORARY dir with
# test/cni/ocicni-oracle/export.go.in added to the package (it reads the chosen network, which is unexported);
# nothing of the snapshots is copied into the repository. Three binaries:
#   ocicni-oracle-latest    go.mod:          ocicni-latest      + libcni v1.3.0 (CRI-O >= 1.33)
#   ocicni-oracle-libcni12  go.libcni12.mod: ocicni-libcni-1.1  + libcni v1.2.3 (CRI-O 1.31, 1.32)
#   ocicni-oracle-libcni11  go.libcni11.mod: ocicni-libcni-1.1  + libcni v1.1.2 (CRI-O 1.25-1.30)
# Cache dir ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/ocicni-oracle-<key>/bin, keyed by the oracle's files, this
# script and each snapshot's SOURCE, go.mod, go.sum and pkg/ocicni/*.go (key_inputs below; + the preamble
# scripts/lib/build-common.sh: layout, lock, key); test/cni/oracle-binary.ts finds it with the same key.
part=ocicni-oracle
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
mod="$root/test/cni/ocicni-oracle"
vendor="${MESHGATE_VENDOR:-$root/../shared/vendor}"
snapshots=(ocicni-latest ocicni-libcni-1.1)
for s in "${snapshots[@]}"; do
  [ -f "$vendor/$s/SOURCE" ] || die "$vendor/$s/SOURCE is missing: the ocicni snapshots live in ../shared/vendor (set MESHGATE_VENDOR to move them)"
done
key_inputs() {
  printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$mod/go.libcni12.mod" "$mod/go.libcni12.sum" "$mod/go.libcni11.mod" \
    "$mod/go.libcni11.sum" "$mod/main.go" "$mod/export.go.in" "$root/scripts/build-ocicni-oracle.sh"
  for s in "${snapshots[@]}"; do
    printf '%s\n' "$vendor/$s/SOURCE" "$vendor/$s/go.mod" "$vendor/$s/go.sum"
    LC_ALL=C ls -1 "$vendor/$s/pkg/ocicni/"*.go
  done
}
cache_begin "$@"
go_env 1.25

# The temporary layout the go.mod files' replace directives point into: work/oracle beside work/ocicni-*.
work="$(mktemp -d "${TMPDIR:-/tmp}/meshgate-ocicni-oracle.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/oracle"
cp "$mod"/main.go "$mod"/go.*mod "$mod"/go.*sum "$work/oracle/"
for s in "${snapshots[@]}"; do
  cp -R "$vendor/$s" "$work/$s"
  chmod -R u+w "$work/$s"
  cp "$mod/export.go.in" "$work/$s/pkg/ocicni/zz_meshgate_oracle_export.go"
done

# oracle_build <name> <snapshot> <go build args...>, for step: stamps the snapshot's commit into the binary.
oracle_build() {
  local name="$1" snapshot="$2" commit; shift 2
  commit="$(sed -n 's/^commit: *//p' "$vendor/$snapshot/SOURCE")"
  log "$name: $snapshot ($commit)"
  go_build "$work/oracle" "$name" -ldflags "-X main.ocicniSource=$snapshot@$commit" "$@" .
}
log "building into $dir (about a minute cold)"
steps_total=3
step ocicni-oracle-latest oracle_build ocicni-oracle-latest ocicni-latest
step ocicni-oracle-libcni12 oracle_build ocicni-oracle-libcni12 ocicni-libcni-1.1 -modfile=go.libcni12.mod
step ocicni-oracle-libcni11 oracle_build ocicni-oracle-libcni11 ocicni-libcni-1.1 -modfile=go.libcni11.mod

# The build runs on copies: a go.mod/go.sum go tidied there must be copied back and committed, or the key misses it.
for f in go.mod go.sum go.libcni12.mod go.libcni12.sum go.libcni11.mod go.libcni11.sum; do
  if ! cmp -s "$work/oracle/$f" "$mod/$f"; then
    log "WARNING: the build changed $f (copy $work/oracle/$f over test/cni/ocicni-oracle/$f and commit it; set MESHGATE_KEEP_SUMS=1 to do that)"
    [ "${MESHGATE_KEEP_SUMS:-}" != 1 ] || cp "$work/oracle/$f" "$mod/$f"
  fi
done
cache_finish 3
