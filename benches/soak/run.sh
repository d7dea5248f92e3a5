#!/usr/bin/env bash
# Soak: N minutes of mixed MCP traffic against three release replicas sharing one real
# redis-server, behind a real nginx, with a replica restarted every few minutes.
#
#   bash benches/soak/run.sh [--minutes 30] [--rate 100] [--workers 8] [--listeners 6]
#                            [--restart-every 180] [--no-build] [--debug-driver]
#
# Builds target/release/stateless-mcp (unless --no-build), then runs the driver
# (benches/soak/main.rs, `cargo bench --bench soak`), which starts redis-server, the three
# replicas and nginx on free loopback ports, drives the traffic, samples RSS and open fds of
# every replica every 10 s, and writes target/soak/report.md (and samples.tsv). Every
# process it starts is stopped at the end. Not a CI test. See benches/soak/README.md.
set -euo pipefail

BUILD=1
PROFILE=bench
ARGS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --minutes|--seconds|--rate|--workers|--listeners|--restart-every)
            [[ "${2-}" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "run.sh: $1 needs a number, got '${2-}'" >&2; exit 2; }
            ARGS+=("$1" "$2"); shift 2 ;;
        --no-build) BUILD=0; shift ;;
        # The driver in the dev profile: reuses a debug test build (no release build of the
        # dev-dependencies); it then spends more CPU per request beside the replicas.
        --debug-driver) PROFILE=dev; shift ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
command -v redis-server >/dev/null || { echo "run.sh: redis-server is missing (Debian: apt-get install -y redis-server)" >&2; exit 1; }
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || { echo "run.sh: nginx is missing (Debian: apt-get install -y nginx-light)" >&2; exit 1; }

if (( BUILD )); then
    echo "== cargo build --release --features reference-server --bin stateless-mcp" >&2
    cargo build --release --features reference-server --bin stateless-mcp
fi
[[ -x target/release/stateless-mcp ]] || { echo "run.sh: target/release/stateless-mcp is missing (drop --no-build)" >&2; exit 1; }
echo "== cargo bench --profile $PROFILE --bench soak -- ${ARGS[*]-}" >&2
cargo bench --profile "$PROFILE" --features reference-server --bench soak -- "${ARGS[@]+"${ARGS[@]}"}"
