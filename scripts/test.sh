#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine with Rust.
#
# Runs scripts/provision.sh (installs what is missing: Node/npm, Python venv, nginx,
# redis-server, nats-server, docker-compose, the pinned npm and PyPI test tools, the MCP
# schemas, cargo-fuzz, cargo-hack), then: cargo fmt --check, the file-level import-cycle
# check of src/ (scripts/import_cycles.py, after its own tests), clippy -D warnings (all
# features, and each feature on its own), every unit/integration/doc test with both test
# layers (the self-contained one and, by `--all-features`, `external-tests`: the official
# conformance suite, the SDK interop tests, the bus contract suite on real brokers, the
# multi-replica tests behind nginx and the deploy file validators), a bounded run of every
# fuzz target, rustdoc with warnings denied and the public-API listing check.
# Each phase's log line shows the seconds since the start, so a CI log shows where the time
# goes.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

log() { printf '\n== [%4d s] %s\n' "$SECONDS" "$*"; }

log "provision (scripts/provision.sh)"
bash scripts/provision.sh
# shellcheck source=/dev/null
source target/test-tools/env.sh

log "cargo fmt --check"
cargo fmt --all -- --check

log "no file-level import cycle in src/ (scripts/import_cycles.py)"
python3 scripts/import_cycles.py --self-test
python3 scripts/import_cycles.py

log "cargo clippy"
cargo clippy --all-targets --all-features -- -D warnings
# The self-contained test layer alone (default features, no external-tests) compiles clean.
cargo clippy --all-targets -- -D warnings

log "each feature on its own (features only add)"
# No features, then each feature alone (cargo-hack reads them from Cargo.toml, so a new one is
# checked too). Not `default` (the clippy runs above cover it) nor `external-tests` (it only
# adds integration tests).
cargo hack clippy --quiet --each-feature --exclude-features default,external-tests \
  --lib --bins -- -D warnings

log "cargo test, both layers (unit, integration, conformance, interop, doc tests)"
cargo test --all-features

log "fuzz targets (a bounded run of each, from the committed seed corpus)"
# cargo-fuzz from crates.io; with --sanitizer none the targets build with the stable toolchain
# (libFuzzer's coverage instrumentation needs no -Z flag; provision.sh installs it). New
# inputs go to a scratch copy, never to fuzz/corpus.
FUZZ_SECONDS=${FUZZ_SECONDS:-8}
FUZZ_SCRATCH="$ROOT/target/fuzz-ci"
rm -rf "$FUZZ_SCRATCH"
for target in $(cd fuzz && cargo fuzz list); do
  mkdir -p "$FUZZ_SCRATCH/$target"
  (cd fuzz && CARGO_TARGET_DIR="$ROOT/target/fuzz" \
    cargo fuzz run "$target" --sanitizer none -O "$FUZZ_SCRATCH/$target" "corpus/$target" -- \
      -max_total_time="$FUZZ_SECONDS" -artifact_prefix="$FUZZ_SCRATCH/$target-")
done

log "cargo doc"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features --quiet

log "public API (docs/public-api.txt)"
scripts/public-api.sh --check

log "all green"
