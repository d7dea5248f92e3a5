#!/usr/bin/env bash
# Resident memory of the reference server under a long load with nothing scraping /metrics.
#
#   bash benches/load/rss.sh [--duration SECS] [--every SECS] [--connections N] [--bin PATH]
#
# Starts the release binary (default target/release/stateless-mcp, built with
# `cargo build --release --features reference-server`; --bin picks another, e.g. an older
# build to compare) pinned to CPU 0, loads it with wrk on CPU 1 (tools/call echo, the body of
# run.sh, 64 connections, default 120 s), samples its VmRSS every --every seconds (default 10)
# and prints the samples and the peak (VmHWM). Loopback only; the server is stopped on exit.
set -euo pipefail

DURATION=120
EVERY=10
CONNECTIONS=64
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=$ROOT/target/release/stateless-mcp
while [[ $# -gt 0 ]]; do
    case "$1" in
        --duration) DURATION=$2; shift 2 ;;
        --every) EVERY=$2; shift 2 ;;
        --connections) CONNECTIONS=$2; shift 2 ;;
        --bin) BIN=$2; shift 2 ;;
        -h|--help) sed -n '4,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "rss.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
command -v wrk >/dev/null || { echo "rss.sh: wrk is missing (apt-get install -y wrk)" >&2; exit 1; }
[[ -x "$BIN" ]] || { echo "rss.sh: $BIN is missing (cargo build --release --features reference-server)" >&2; exit 1; }
WORK=$ROOT/target/load/work
mkdir -p "$WORK"
BUILD=0
# shellcheck source=benches/load/common.sh
. "$HERE/common.sh"
write_bodies

taskset -c 0 "$BIN" --listen 127.0.0.1:0 >"$WORK/rss.server.log" 2>&1 &
PID=$!
trap 'kill -TERM $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
ADDR=
for _ in $(seq 1 100); do
    ADDR=$(logged_addr "$WORK/rss.server.log")
    [[ -n "$ADDR" ]] && break
    sleep 0.1
done
[[ -n "$ADDR" ]] || { echo "rss.sh: the server did not start:" >&2; cat "$WORK/rss.server.log" >&2; exit 1; }
rss() { awk "/^$1:/ {print \$2}" "/proc/$PID/status"; }

echo "server: $BIN on $ADDR; wrk -t1 -c$CONNECTIONS -d${DURATION}s tools/call echo; no scrape"
echo "RSS before the load: $(rss VmRSS) KiB"
LOAD_BODY=$WORK/echo.json LOAD_METHOD=tools/call LOAD_NAME=echo \
    taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 10s \
    -s "$HERE/mcp.lua" "http://$ADDR/mcp" >"$WORK/rss.wrk.log" 2>&1 &
WRK=$!
START=$SECONDS
while kill -0 $WRK 2>/dev/null; do
    sleep "$EVERY"
    kill -0 $WRK 2>/dev/null || break
    echo "t=$((SECONDS - START))s  RSS $(rss VmRSS) KiB"
done
wait $WRK || { echo "rss.sh: wrk failed:" >&2; cat "$WORK/rss.wrk.log" >&2; exit 1; }
grep '^LOAD_RESULT ' "$WORK/rss.wrk.log" || true
echo "RSS after the load: $(rss VmRSS) KiB; peak (VmHWM): $(rss VmHWM) KiB"
