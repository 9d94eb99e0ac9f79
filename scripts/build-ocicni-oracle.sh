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
# The cache dir is keyed by the first 12 hex digits of sha256 over the inputs listed in `inputs` below (the oracle's
# files, this script, and each snapshot's SOURCE, go.mod, go.sum and pkg/ocicni/*.go); test/cni/oracle-binary.ts
# recomputes the same key, keep the two in sync.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/ocicni-oracle-<key>/
#   bin/<name>   built to bin/.<name>.tmp and renamed, so a killed build never leaves half a file
#   .complete    written last; its presence is the "cache is usable" signal
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/cni/ocicni-oracle"
script="$root/scripts/build-ocicni-oracle.sh"
vendor="${MESHGATE_VENDOR:-$root/../shared/vendor}"
log() { printf '[ocicni-oracle] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

snapshots=(ocicni-latest ocicni-libcni-1.1)
for s in "${snapshots[@]}"; do
  [ -f "$vendor/$s/SOURCE" ] || die "$vendor/$s/SOURCE is missing: the ocicni snapshots live in ../shared/vendor (set MESHGATE_VENDOR to move them)"
done
inputs=("$mod/go.mod" "$mod/go.sum" "$mod/go.libcni12.mod" "$mod/go.libcni12.sum" "$mod/go.libcni11.mod"
  "$mod/go.libcni11.sum" "$mod/main.go" "$mod/export.go.in" "$script")
for s in "${snapshots[@]}"; do
  inputs+=("$vendor/$s/SOURCE" "$vendor/$s/go.mod" "$vendor/$s/go.sum")
  while IFS= read -r f; do inputs+=("$f"); done < <(LC_ALL=C ls -1 "$vendor/$s/pkg/ocicni/"*.go)
done
key="$(cat "${inputs[@]}" | sha256sum | cut -c1-12)"
cache="${MESHGATE_CACHE:-$HOME/.cache/meshgate}"
dir="$cache/ocicni-oracle-$key"
bin="$dir/bin"

if [ -f "$dir/.complete" ]; then
  log "up to date: $bin"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH. Install Go >= 1.25 (the CRI-O oracle is built from Go modules)."
mkdir -p "$bin"
# One builder per cache dir: a second `npm test` started meanwhile waits here, then finds .complete.
exec 9>"$dir/.lock"
if ! flock -n 9; then
  log "another build of $dir is running; waiting for it"
  flock 9
fi
if [ -f "$dir/.complete" ]; then log "up to date: $bin"; exit 0; fi

# Same Go environment as scripts/build-cni-oracle.sh: no toolchain download, static binaries, go.mod/go.sum
# decide (sum.golang.org is not reachable here; the committed go.sum files still verify every module).
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOSUMDB=off
export GOPROXY="${GOPROXY:-$(go env GOPROXY)}"
[ -n "$GOPROXY" ] || export GOPROXY="https://proxy.golang.org,direct"

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

start=$SECONDS
build() { # build <name> <snapshot> <go build args...>
  local name="$1" snapshot="$2"; shift 2
  local source
  source="$(sed -n 's/^commit: *//p' "$vendor/$snapshot/SOURCE")"
  log "building $name from $snapshot ($source)… (elapsed $((SECONDS - start))s)"
  (cd "$work/oracle" && nice go build -trimpath -ldflags "-X main.ocicniSource=$snapshot@$source" \
    -o "$bin/.$name.tmp" "$@" .) || die "building $name failed (see above)"
  mv -f "$bin/.$name.tmp" "$bin/$name"
}
log "building into $dir (about a minute cold)"
build ocicni-oracle-latest ocicni-latest
build ocicni-oracle-libcni12 ocicni-libcni-1.1 -modfile=go.libcni12.mod
build ocicni-oracle-libcni11 ocicni-libcni-1.1 -modfile=go.libcni11.mod

for f in go.mod go.sum go.libcni12.mod go.libcni12.sum go.libcni11.mod go.libcni11.sum; do
  if ! cmp -s "$work/oracle/$f" "$mod/$f"; then
    log "WARNING: the build changed $f (copy $work/oracle/$f over test/cni/ocicni-oracle/$f and commit it; set MESHGATE_KEEP_SUMS=1 to do that)"
    [ "${MESHGATE_KEEP_SUMS:-}" = 1 ] && cp "$work/oracle/$f" "$mod/$f"
  fi
done
new_key="$(cat "${inputs[@]}" | sha256sum | cut -c1-12)"
if [ "$new_key" != "$key" ]; then
  log "the oracle's inputs changed during the build; not marking $dir complete (run the script again)"
  exit 1
fi
touch "$dir/.complete"
# Keep the 3 newest finished builds (other worktrees may use older keys), delete the rest.
ls -1dt "$cache"/ocicni-oracle-*/.complete 2>/dev/null | tail -n +4 | while read -r stamp; do
  log "removing old build $(dirname "$stamp")"
  rm -rf "$(dirname "$stamp")"
done
log "done in $((SECONDS - start))s: $bin"
