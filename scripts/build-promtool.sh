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
# Cache dir ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/promtool-<key>/bin, keyed by go.mod + go.sum + main.go + this
# script (+ the preamble scripts/lib/build-common.sh: layout, lock, key); test/monitoring/tools.ts finds it with the
# same key.
part=promtool
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"

# Prometheus v3.16.0 is Go module version v0.316.0 (go.mod pins it); stamped into `promtool --version`.
PROMETHEUS_VERSION=3.16.0

mod="$root/test/monitoring/tools"
key_inputs() { printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$mod/main.go" "$root/scripts/build-promtool.sh"; }
cache_begin "$@"
go_env 1.26.7

steps_total=2
log "building promtool (Prometheus $PROMETHEUS_VERSION, no service discovery) and monitoring-check into $dir"
log "a cold build takes a few minutes on 2 cores; later runs reuse the cache"
stamp="-X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION -X github.com/prometheus/common/version.Branch=release"
step promtool go_build "$mod" promtool -tags remove_all_sd -ldflags "-s -w $stamp" github.com/prometheus/prometheus/cmd/promtool
step monitoring-check go_build "$mod" monitoring-check -ldflags "-s -w" .

cache_finish 3
