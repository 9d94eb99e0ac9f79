#!/usr/bin/env bash
# Builds linkerd-network-validator (Rust, the init container Linkerd's CNI mode runs instead of linkerd-init: it
# proves the pod's outbound traffic is redirected to the proxy port) from the snapshot
# ../shared/vendor/linkerd2-proxy-init (SOURCE names the commit) and crates.io, as its release does:
# `cargo build --release -p linkerd-network-validator`, --locked to the snapshot's Cargo.lock. The snapshot pins a
# toolchain (rust-toolchain.toml) rustup cannot download here; the installed stable builds it (cargo_env).
# The snapshot is read-only and cargo writes nothing there: the target dir is in the cache dir.
#
# Cache dir ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/linkerd-validator-<key>/, keyed by the snapshot's SOURCE,
# Cargo.toml, Cargo.lock and validator/Cargo.toml, this script (+ the preamble scripts/lib/build-common.sh);
# test/meshbin/binaries.ts finds it with the same key.
#   bin/linkerd-network-validator
#   target/          cargo's target dir (kept: the next key's dir starts from it, see cargo_seed)
#   manifest.json    commit, versions, build seconds
part=linkerd-validator
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
src="$root/../shared/vendor/linkerd2-proxy-init"
key_inputs() {
  printf '%s\n' "$src/SOURCE" "$src/Cargo.toml" "$src/Cargo.lock" "$src/validator/Cargo.toml" \
    "$root/scripts/build-linkerd-validator.sh"
}
cache_begin "$@"
cargo_env
cargo_seed

commit="$(sed -n 's/^commit: *\([0-9a-f]\{40\}\)$/\1/p' "$src/SOURCE")"
version="$(sed -n '/^\[package\]/,/^\[/ s/^version = "\(.*\)"$/\1/p' "$src/validator/Cargo.toml")"
log "building linkerd-network-validator $version ($commit) with $(rustc --version) into $dir"
log "a cold build takes about 2 minutes on 2 cores (LTO); later runs reuse the cache"
cargo_build() {
  (cd "$src" && nice cargo build --release --locked -p linkerd-network-validator) &&
    cp "$CARGO_TARGET_DIR/release/linkerd-network-validator" "$bin/.linkerd-network-validator.tmp"
}
step linkerd-network-validator cargo_build

cat > "$dir/manifest.json.tmp" <<EOF
{
  "proxyInitCommit": "$commit",
  "validatorVersion": "$version",
  "rustVersion": "$(rustc --version)",
  "binDir": "$bin",
  "buildSeconds": $(build_seconds_json),
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
EOF
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
cache_finish 2
