#!/usr/bin/env bash
# Builds the monitoring tools the chart's alerts, dashboard and metrics are tested with, from Go modules, into a
# cache outside the repo (test/monitoring/tools, pinned by its go.mod/go.sum):
#   promtool          Prometheus' own (github.com/prometheus/prometheus/cmd/promtool): check rules, test rules,
#                     check metrics
#   monitoring-check  test/monitoring/tools/main.go: the reference text-format parser (prometheus/common/expfmt)
#                     and a strict decode into the Prometheus Operator's Go types (ServiceMonitor, PodMonitor,
#                     PrometheusRule)
# Lean on purpose: -tags remove_all_sd leaves out Prometheus' service-discovery plugins (AWS, Azure, GCE, Consul,
# Nomad, ... : most of its dependency tree), which promtool's rule and metric commands never use. Cold, on 2 busy
# cores: about 4 minutes (printed at the end); warm: hashing four files.
#
# The cache dir is keyed by the first 12 hex digits of sha256(go.mod + go.sum + main.go + this script);
# test/monitoring/tools.ts recomputes the same key, keep the two in sync.
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/promtool-<key>/
#   bin/<name>   built to bin/.<name>.tmp and renamed, so a killed build never leaves half a file
#   .complete    written last; its presence is the "cache is usable" signal
set -euo pipefail

# Prometheus v3.16.0 is Go module version v0.316.0 (go.mod pins it); stamped into `promtool --version`.
PROMETHEUS_VERSION=3.16.0

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/monitoring/tools"
script="$root/scripts/build-promtool.sh"
log() { printf '[promtool] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

inputs=("$mod/go.mod" "$mod/go.sum" "$mod/main.go" "$script")
key="$(cat "${inputs[@]}" | sha256sum | cut -c1-12)"
cache="${MESHGATE_CACHE:-$HOME/.cache/meshgate}"
dir="$cache/promtool-$key"
bin="$dir/bin"

if [ -f "$dir/.complete" ]; then
  log "up to date: $bin"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH. Install Go >= 1.26.7 (Prometheus' go.mod requires it)."
mkdir -p "$bin"
# One builder per cache dir: a second `npm test` started meanwhile waits here, then finds .complete.
exec 9>"$dir/.lock"
if ! flock -n 9; then
  log "another build of $dir is running; waiting for it"
  flock 9
fi
if [ -f "$dir/.complete" ]; then log "up to date: $bin"; exit 0; fi

# Same Go environment as scripts/build-controlplane.sh: no toolchain download, static binaries, go.mod/go.sum
# decide (sum.golang.org is not reachable here; the committed go.sum still verifies every module).
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOSUMDB=off
export GOPROXY="${GOPROXY:-$(go env GOPROXY)}"
[ -n "$GOPROXY" ] || export GOPROXY="https://proxy.golang.org,direct"

start=$SECONDS
build() { # build <name> <step> <go build args...>
  local name="$1" step="$2"; shift 2
  log "building $name ($step/2)… (elapsed $((SECONDS - start))s)"
  local t0=$SECONDS
  (cd "$mod" && nice go build -trimpath -o "$bin/.$name.tmp" "$@") || die "building $name failed (see above)"
  mv -f "$bin/.$name.tmp" "$bin/$name"
  log "built $name in $((SECONDS - t0))s"
}
log "building promtool (Prometheus $PROMETHEUS_VERSION, no service discovery) and monitoring-check into $dir"
log "a cold build takes a few minutes on 2 cores; later runs reuse the cache"
stamp="-X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION -X github.com/prometheus/common/version.Branch=release"
build promtool 1 -tags remove_all_sd -ldflags "-s -w $stamp" github.com/prometheus/prometheus/cmd/promtool
build monitoring-check 2 -ldflags "-s -w" .

new_key="$(cat "${inputs[@]}" | sha256sum | cut -c1-12)"
[ "$new_key" = "$key" ] || log "WARNING: test/monitoring/tools/go.mod or go.sum changed during the build (commit them)"
touch "$dir/.complete"
# Keep the 3 newest finished builds (other worktrees may use older keys), delete the rest.
ls -1dt "$cache"/promtool-*/.complete 2>/dev/null | tail -n +4 | while read -r stamp_file; do
  log "removing old build $(dirname "$stamp_file")"
  rm -rf "$(dirname "$stamp_file")"
done
log "done in $((SECONDS - start))s: $bin"
