# The one preamble of scripts/build-*.sh (sourced, not run): the cache dir keyed by the hash of the build's inputs,
# the lock, the Go and Cargo environments, the atomic build step and the pruning of old builds.
#
# A build script sets `part` (cache dir prefix and log tag), defines key_inputs (prints its input files, one a line,
# in a fixed order) and optionally on_complete (run whenever the dir is usable: found finished or just finished),
# then sources this file and calls, in order:
#   cache_begin            key → $key, $dir, $bin; exits 0 if $dir/.complete exists; otherwise creates and locks $dir
#   need go "why"          dies with the message unless the command is on PATH
#   go_env / cargo_env     the environment its builds run in
#   step <name> <cmd...>   the command writes $bin/.<name>.tmp; step renames it to $bin/<name> and times it
#   cache_finish <keep>    .complete, on_complete, then deletes all but the <keep> newest finished dirs of $part
#
# The key is the first 12 hex digits of sha256(key_inputs' files ‖ this file): editing the script, its module or this
# preamble gives a fresh dir, an unchanged tree reuses the finished one (a warm run only hashes a few files).
# test/support/build-cache.ts computes the same key for the tests; `bash scripts/build-<part>.sh --print-dir`
# prints the dir without building (test/meshbin/cache-keys.test.ts compares the two).
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/<part>-<key>/
#   bin/<name>   built to bin/.<name>.tmp and renamed, so a killed build never leaves half a file
#   .lock        flock'd by the one builder of the dir; a second run waits for it, then finds .complete
#   .complete    written last; its presence is the "cache is usable" signal
set -euo pipefail

preamble="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/build-common.sh"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${MESHGATE_CACHE:-$HOME/.cache/meshgate}"

log() { printf '[%s] %s\n' "$part" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 is not on PATH. $2"; }

# The key's files: the script's own inputs, then this preamble.
cache_key() {
  local files f
  files="$(key_inputs; printf '%s\n' "$preamble")"
  while IFS= read -r f; do [ -f "$f" ] || die "cache key input $f is missing"; done <<<"$files"
  printf '%s\n' "$files" | xargs -d '\n' cat | sha256sum | cut -c1-12
}

# Exits 0 when $dir is finished (after on_complete, if the script has one).
exit_if_complete() {
  [ -f "$dir/.complete" ] || return 0
  if declare -F on_complete >/dev/null; then on_complete; fi
  log "up to date: $bin"
  exit 0
}

cache_begin() {
  key="$(cache_key)"
  dir="$cache/$part-$key"
  bin="$dir/bin"
  if [ "${1:-}" = --print-dir ]; then printf '%s\n' "$dir"; exit 0; fi
  exit_if_complete
  mkdir -p "$bin"
  # One builder per cache dir: a second run started meanwhile (another worktree, a second `npm test`) waits here.
  exec 9>"$dir/.lock"
  if ! flock -n 9; then
    log "another build of $dir is running; waiting for it"
    flock 9
  fi
  exit_if_complete
  start=$SECONDS
  step_seconds=""
}

# The environment of every go command:
#  - GOTOOLCHAIN=local: never download another Go toolchain (not reachable here); use the installed go.
#  - CGO_ENABLED=0: static binaries, no C toolchain needed, like the official release builds.
#  - GOFLAGS=-mod=mod: resolve from go.mod/go.sum; -buildvcs=false: don't stamp the repo's git state.
#  - GOSUMDB=off: sum.golang.org is NOT reachable here. The committed go.sum files still verify every module; only
#    `go install pkg@version` downloads rely on the proxy alone.
#  - GOPROXY: respected if the caller set it, otherwise the go default. The module and build caches are the default
#    ones, shared by every script and worktree (Go keeps them safe for concurrent use).
go_env() {
  need go "Install Go >= ${1:-1.26} ($part is built from Go modules)."
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOSUMDB=off
  export GOPROXY="${GOPROXY:-$(go env GOPROXY)}"
  [ -n "$GOPROXY" ] || export GOPROXY="https://proxy.golang.org,direct"
}

# The environment of every cargo command: the installed stable toolchain (the sources pin toolchains rustup cannot
# download here), the target dir inside the cache dir (a killed build resumes; cache_finish keeps it so that the next
# key's dir can start from it, see cargo_seed), no incremental state (release builds).
cargo_env() {
  need cargo "Install Rust (rustup, stable toolchain) and cargo: $part is built from crates.io."
  export RUSTUP_TOOLCHAIN="${RUSTUP_TOOLCHAIN:-stable}" CARGO_TARGET_DIR="$dir/target" CARGO_INCREMENTAL=0
  export CARGO_TERM_COLOR=never CARGO_TERM_PROGRESS_WHEN=never
}

# A new dir of $part starts from the cargo target dir of the newest older one (moved, not copied: that dir's
# binaries stay usable): cargo then rebuilds only what changed instead of every crate.
cargo_seed() {
  [ -d "$dir/target" ] && return
  local stamp
  stamp="$(finished | head -n 1)"
  [ -n "$stamp" ] && [ -d "$(dirname "$stamp")/target" ] || return 0
  log "starting from the cargo target dir of $(dirname "$stamp")"
  mv "$(dirname "$stamp")/target" "$dir/target" 2>/dev/null || true # a parallel build of another key took it
}

# The .complete files of $part's finished dirs, newest first. Exactly 12 characters after "<part>-", so that one
# part's name being a prefix of another's (istio, istio-x) never mixes their dirs.
finished() { ls -1dt "$cache/$part"-????????????/.complete 2>/dev/null || true; }

# step <name> <command...>: the command writes $bin/.<name>.tmp; renamed into place once it succeeds. A binary
# already in place (an earlier, interrupted run of this same key) is kept.
# With steps_total set, progress reads "<name> (i/total)".
step() {
  local name="$1" label="$1" t0=$SECONDS; shift
  step_count=$((${step_count:-0} + 1))
  [ -z "${steps_total:-}" ] || label="$name ($step_count/$steps_total)"
  if [ -x "$bin/$name" ]; then log "$label already built"; step_seconds+="\"$name\": null, "; return; fi
  log "building $label… (elapsed $((SECONDS - start))s)"
  "$@" || die "building $name failed (see above)"
  [ -f "$bin/.$name.tmp" ] || die "building $name wrote no $bin/.$name.tmp"
  mv -f "$bin/.$name.tmp" "$bin/$name"
  log "built $name in $((SECONDS - t0))s"
  step_seconds+="\"$name\": $((SECONDS - t0)), "
}

# go_build <module dir> <name> <go build args...>: `go build` in the module dir, for step.
go_build() {
  local mod="$1" name="$2"; shift 2
  (cd "$mod" && nice go build -trimpath -o "$bin/.$name.tmp" "$@")
}

# Per-binary seconds of this run as a JSON object, for a manifest (null: already built by an interrupted run).
build_seconds_json() { printf '{ %s }' "${step_seconds%, }"; }

cache_finish() {
  local keep="$1" now
  now="$(cache_key)"
  [ "$now" = "$key" ] || log "WARNING: the inputs changed during the build (a go.mod/go.sum tidied by go? commit it)"
  touch "$dir/.complete"
  if declare -F on_complete >/dev/null; then on_complete; fi
  # Other worktrees may use older keys: keep the <keep> newest finished dirs, delete the rest.
  finished | tail -n +"$((keep + 1))" | while read -r stamp; do
    log "removing old build $(dirname "$stamp")"
    rm -rf "$(dirname "$stamp")"
  done
  log "done in $((SECONDS - start))s: $bin"
}
