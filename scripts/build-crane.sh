#!/usr/bin/env bash
# Builds go-containerregistry's crane (github.com/google/go-containerregistry/cmd/crane, pinned by
# test/release/crane/go.mod and go.sum) into a cache outside the repo. The release tests and the real-node tier use
# it as users' tools would: `crane registry serve` is a real OCI registry (the distribution API, in memory or on
# disk) that they run inside their own network namespace, `crane push` uploads the release's OCI image layout to it,
# `crane manifest`/`crane digest`/`crane validate` read it back. Cold, on 2 busy cores: about a minute (printed at the
# end); warm: hashing three files.
#
# Cache dir ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/crane-<key>/bin, keyed by go.mod + go.sum + this script (+ the
# preamble scripts/lib/build-common.sh); test/release/crane.ts finds it with the same key.
part=crane
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"

mod="$root/test/release/crane"
key_inputs() { printf '%s\n' "$mod/go.mod" "$mod/go.sum" "$root/scripts/build-crane.sh"; }
cache_begin "$@"
go_env 1.25

steps_total=1
version="$(cd "$mod" && go list -m -f '{{.Version}}' github.com/google/go-containerregistry)"
log "building crane $version into $dir"
step crane go_build "$mod" crane -ldflags "-s -w -X github.com/google/go-containerregistry/cmd/crane/cmd.Version=$version" \
  github.com/google/go-containerregistry/cmd/crane

cache_finish 3
