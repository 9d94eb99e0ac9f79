#!/usr/bin/env bash
# Builds ztunnel (Istio ambient's node proxy, Rust) from the snapshot ../shared/vendor/ztunnel (SOURCE names the
# commit) and crates.io, with `--features testing` so that it runs without istiod: FAKE_CA=true and
# LOCAL_XDS_PATH=<file> (docs/mesh-binaries.md: running it standalone and in-pod).
# The snapshot cannot be built as it is here, so a build copy (in the cache dir) differs from it in two ways:
#  - Cargo.toml without the boring-rustls-provider, boring and boring-sys dependencies and with the optional
#    tls-boring feature that enables them emptied: boring-rustls-provider is a git dependency, not fetchable here
#    (the default TLS provider, aws-lc, needs none of them); Cargo.lock then drops their entries, every other crate
#    stays as locked;
#  - common/scripts/report_build_info.sh prints the SOURCE commit (the copy is no git checkout), so
#    `ztunnel version` names it, with BuildStatus "Modified" for the Cargo.toml edit.
# Built with the installed stable toolchain (the snapshot pins one rustup cannot download; cargo_env) and
# protoc (apt-get install protobuf-compiler: the XDS/ZDS protos are compiled at build time).
#
# Cache dir ${MESHGATE_CACHE:-$HOME/.cache/meshgate}/ztunnel-<key>/, keyed by the snapshot's SOURCE, Cargo.toml and
# Cargo.lock, this script (+ the preamble scripts/lib/build-common.sh); test/meshbin/binaries.ts finds it with the
# same key.
#   bin/ztunnel
#   src/            the build copy
#   target/         cargo's target dir (kept: the next key's dir starts from it, see cargo_seed)
#   manifest.json   commit, versions, build seconds
part=ztunnel
source "$(dirname "${BASH_SOURCE[0]}")/lib/build-common.sh"
vendor="$root/../shared/vendor/ztunnel"
key_inputs() { printf '%s\n' "$vendor/SOURCE" "$vendor/Cargo.toml" "$vendor/Cargo.lock" "$root/scripts/build-ztunnel.sh"; }
cache_begin "$@"
cargo_env
need protoc "apt-get install protobuf-compiler: ztunnel's build compiles its XDS protos with it."
cargo_seed

commit="$(sed -n 's/^commit: *\([0-9a-f]\{40\}\)$/\1/p' "$vendor/SOURCE")"
[ -n "$commit" ] || die "no 'commit: <sha>' line in $vendor/SOURCE"

# The build copy, made whole or not at all.
if [ ! -d "$dir/src" ]; then
  rm -rf "$dir/src.tmp"
  cp -R "$vendor" "$dir/src.tmp"
  chmod -R u+w "$dir/src.tmp"
  # tls-boring stays, empty: the sources' #[cfg(feature = "tls-boring")] then compile without unknown-cfg warnings.
  sed -i -e 's/^tls-boring = .*/tls-boring = [] # emptied by scripts\/build-ztunnel.sh/' \
    -e '/^boring-rustls-provider = /d' -e '/^boring = /d' -e '/^boring-sys = /d' "$dir/src.tmp/Cargo.toml"
  if grep -Eq 'dep:boring|^[^#]*boring[a-z-]* *= *[{"]' "$dir/src.tmp/Cargo.toml"; then
    die "$vendor/Cargo.toml still depends on boring after the edit: update the sed above"
  fi
  cat > "$dir/src.tmp/common/scripts/report_build_info.sh" <<EOF
#!/bin/sh
# Written by scripts/build-ztunnel.sh: the build copy is no git checkout.
echo "istio.io/istio/pkg/version.buildVersion=$commit"
echo "istio.io/istio/pkg/version.buildGitRevision=$commit"
echo "istio.io/istio/pkg/version.buildStatus=Modified"
EOF
  chmod +x "$dir/src.tmp/common/scripts/report_build_info.sh"
  mv "$dir/src.tmp" "$dir/src"
fi

log "building ztunnel $commit (--features testing) with $(rustc --version) into $dir"
log "a cold build takes about 10 minutes on 2 cores; later runs reuse the cache"
cargo_build() {
  (cd "$dir/src" && nice cargo build --release --features testing --bin ztunnel) &&
    cp "$CARGO_TARGET_DIR/release/ztunnel" "$bin/.ztunnel.tmp"
}
step ztunnel cargo_build

cat > "$dir/manifest.json.tmp" <<EOF
{
  "ztunnelCommit": "$commit",
  "features": ["testing"],
  "rustVersion": "$(rustc --version)",
  "binDir": "$bin",
  "buildSeconds": $(build_seconds_json),
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
EOF
mv -f "$dir/manifest.json.tmp" "$dir/manifest.json"
cache_finish 2
