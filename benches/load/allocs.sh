#!/usr/bin/env bash
# Heap allocations per request (valgrind dhat): the reference server and the bare axum baseline.
#
#   bash benches/load/allocs.sh [--requests N] [--cases "echo discover"] [--no-build] [--bin-dir DIR]
#
# For each case and server: two runs under `valgrind --tool=dhat`, each sending 50 warm-up
# requests on one keep-alive connection (curl) and then 0 or N more (default 300) on a second
# one; dhat's totals at exit (blocks and bytes allocated) of the two runs differ by what the N
# requests allocated. Same request bodies and headers as callgrind.sh and run.sh. Prints a
# table and writes it to target/load/allocs.md.
set -euo pipefail

REQUESTS=300
WARMUP=50
BUILD=1
CASES_WANTED="echo discover"
BIN_DIR=

while [[ $# -gt 0 ]]; do
    case "$1" in
        --requests) [[ "${2-}" =~ ^[1-9][0-9]*$ ]] || { echo "allocs.sh: --requests needs a positive integer" >&2; exit 2; }
            REQUESTS=$2; shift 2 ;;
        --cases) CASES_WANTED=${2-}; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin-dir) BIN_DIR=${2-}; BUILD=0; shift 2 ;;
        -h|--help) sed -n '4,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "allocs.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"
OUT=$ROOT/target/load
WORK=$OUT/work
mkdir -p "$WORK"
# shellcheck source=benches/load/common.sh
. "$HERE/common.sh"

for t in valgrind curl; do
    command -v "$t" >/dev/null 2>&1 || { echo "allocs.sh: $t is missing (Debian: apt-get install -y valgrind curl)" >&2; exit 1; }
done

build_binaries
stop_server_on_exit

write_bodies

# send ADDR CASE N: N requests on one keep-alive connection.
send() {
    local addr=$1 id=$2 n=$3 body method name
    IFS='|' read -r _ _ body method name <<<"$(printf '%s\n' "${CASES[@]}" | grep "^$id|")"
    local args=(-sS -o /dev/null -X POST -H 'Content-Type: application/json'
        -H 'Accept: application/json, text/event-stream' --data-binary "@$WORK/$body"
        -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $method")
    [[ -n "$name" ]] && args+=(-H "Mcp-Name: $name")
    curl "${args[@]}" -w '%{http_code}\n' "http://$addr/mcp?r=[1-$n]" | sort | uniq -c |
        awk -v n="$n" '$2 != 200 || $1 != n { print "allocs.sh: unexpected answers: " $0 > "/dev/stderr"; bad = 1 } END { exit bad }'
}

# run BIN CASE N: "blocks bytes" dhat counted for the whole run (warm-up, then N requests).
run() {
    local bin=$1 id=$2 n=$3 log=$WORK/dhat.log out=$WORK/dhat.out addr=
    rm -f "$out"
    valgrind --tool=dhat --dhat-out-file="$out" "$bin" --listen 127.0.0.1:0 >"$log" 2>&1 &
    PID=$!
    addr=$(started_addr "$log" "$bin")
    send "$addr" "$id" "$WARMUP"
    if ((n > 0)); then send "$addr" "$id" "$n"; fi
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=
    # "==123== Total:     1,234 bytes in 56 blocks"
    sed -n 's/.*Total: *\([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\2 \1/p' "$log" | tr -d ',' | head -n1
}

# per_request BIN CASE: "blocks bytes" per request.
per_request() {
    local base full
    base=$(run "$1" "$2" 0)
    full=$(run "$1" "$2" "$REQUESTS")
    awk -v b="$base" -v f="$full" -v n="$REQUESTS" 'BEGIN {
        split(b, x, " "); split(f, y, " "); printf "%.1f %.0f\n", (y[1] - x[1]) / n, (y[2] - x[2]) / n }'
}

COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
{
    echo "# Heap allocations per request (dhat), commit $COMMIT"
    echo
    echo "$REQUESTS requests on one keep-alive connection after $WARMUP warm-up requests (the difference of two runs)."
    echo
    echo "| case | ours allocations/req | ours bytes/req | baseline allocations/req | baseline bytes/req |"
    echo "|---|---|---|---|---|"
} >"$OUT/allocs.md"
for spec in "${CASES[@]}"; do
    IFS='|' read -r id title _ _ _ <<<"$spec"
    [[ " $CASES_WANTED " == *" $id "* ]] || continue
    if [[ "$id" == list ]]; then ours=$LIST_BIN; else ours=$OURS_BIN; fi
    read -r ob oy <<<"$(per_request "$ours" "$id")"
    read -r bb by <<<"$(per_request "$BASE_BIN" "$id")"
    echo "-- $title: ours $ob allocations ($oy bytes), baseline $bb ($by bytes)" >&2
    echo "| $title | $ob | $oy | $bb | $by |" >>"$OUT/allocs.md"
done
echo >&2
cat "$OUT/allocs.md"
