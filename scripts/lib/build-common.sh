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
#   cache_finish <keep>    .complete, on_complete, then prunes $part's finished dirs (see prune_old)
#
# The key is the first 12 hex digits of sha256(key_inputs' files ‖ this file): editing the script, its module or this
# preamble gives a fresh dir, an unchanged tree reuses the finished one (a warm run only hashes a few files).
# test/support/build-cache.ts computes the same key for the tests; `bash scripts/build-<part>.sh --print-dir`
# prints the dir without building (test/meshbin/cache-keys.test.ts compares the two).
#
# Layout: ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/<part>-<key>/
#   bin/<name>   built to bin/.<name>.tmp and renamed, so a killed build never leaves half a file
#   .lock        flock'd by the one builder of the dir; a second run waits for it, then finds .complete
#   .complete    written last; its presence is the "cache is usable" signal. Its mtime is the dir's last use: every
#                run that finds the dir finished touches it, so pruning spares what any worktree still builds with.
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

# Records a use of $dir (the mtime of .complete; a read-only cache just is not marked).
mark_used() { touch "$dir/.complete" 2>/dev/null || true; }

# Exits 0 when $dir is finished (after on_complete, if the script has one).
exit_if_complete() {
  [ -f "$dir/.complete" ] || return 0
  mark_used
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

# A new dir of $part starts from the cargo target dir of the most recently used older one that still has one (moved,
# not copied: that dir's binaries stay usable): cargo then rebuilds only what changed instead of every crate.
cargo_seed() {
  [ -d "$dir/target" ] && return
  local stamp old
  while read -r stamp; do
    old="$(dirname "$stamp")"
    [ -d "$old/target" ] || continue
    log "starting from the cargo target dir of $old"
    mv "$old/target" "$dir/target" 2>/dev/null || true # a parallel build of another key took it
    return 0
  done < <(finished)
}

# The .complete files of $part's finished dirs, most recently used first. Exactly 12 characters after "<part>-", so
# that one part's name being a prefix of another's (istio, istio-x) never mixes their dirs.
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

# CPU seconds (user + system) of this script and its finished children, from /proc: with other builds on the same
# cores the wall time says little about a build's own cost; this sums every go/rustc/gcc process it waited for.
cpu_seconds() {
  local stat f
  stat="$(cat "/proc/$$/stat" 2>/dev/null)" || { printf '?'; return; }
  read -r -a f <<<"${stat##*) }" # the fields after "pid (comm) ": utime, stime, cutime, cstime are the 12th-15th
  printf '%s' "$(((f[11] + f[12] + f[13] + f[14]) / $(getconf CLK_TCK)))"
}

# Deletes $part's finished dirs that no worktree is likely to use again. Many worktrees build different keys of the
# same part at once; keeping only the N newest made them delete each other's dirs and rebuild in turn. So a dir is
# kept while it was used (.complete touched) within the last ${MESHGATE_CACHE_DAYS:-3} days, and always among the
# <keep> most recently used; ${MESHGATE_CACHE_MAX:-10} most recently used dirs bound the disk (a controlplane dir is
# ~460 MB) whatever their age.
prune_old() {
  local keep="$1" days="${MESHGATE_CACHE_DAYS:-3}" max="${MESHGATE_CACHE_MAX:-10}" n=0 stamp old
  while read -r stamp; do
    n=$((n + 1))
    [ "$n" -gt "$keep" ] || continue
    old="$(dirname "$stamp")"
    if [ "$n" -gt "$max" ]; then
      log "removing old build $old (more than $max builds of $part)"
    elif [ -n "$(find "$stamp" -maxdepth 0 -mmin +"$((days * 24 * 60))")" ]; then
      log "removing old build $old (unused for $days days)"
    else
      continue
    fi
    rm -rf "$old"
  done < <(finished)
}

cache_finish() {
  local keep="$1" now
  now="$(cache_key)"
  [ "$now" = "$key" ] || log "WARNING: the inputs changed during the build (a go.mod/go.sum tidied by go? commit it)"
  touch "$dir/.complete"
  if declare -F on_complete >/dev/null; then on_complete; fi
  prune_old "$keep"
  log "done in $((SECONDS - start))s (CPU $(cpu_seconds)s): $bin"
}
