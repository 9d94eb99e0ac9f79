#!/usr/bin/env bash
# Builds the Multus oracle (test/cni/multus-oracle): a small Go program linking multus-cni v4.2.3's own packages
# (types.LoadNetConf, k8sclient.GetDefaultNetworks/TryLoadPodDelegates over a fake API, the thick daemon's
# config.NewManager/GenerateConfig), which test/cni/multus.test.ts runs to prove meshgate follows Multus as Multus
# does.
# Cache dir ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/multus-oracle-<key>/bin/multus-oracle, keyed by go.mod + go.sum +
# main.go + this script (+ the preamble scripts/lib/build-common.sh: layout, lock, key); test/cni/multus-oracle.ts
# finds it with the same key.
part=multus-oracle
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
mod="$root/test/cni/multus-oracle"
key_inputs() { printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$mod/main.go" "$root/scripts/build-multus-oracle.sh"; }
cache_begin "$@"
go_env 1.24

log "building into $dir (client-go and multus-cni: 2-7 minutes cold on 2 busy cores)"
step multus-oracle go_build "$mod" multus-oracle .
cache_finish 3
