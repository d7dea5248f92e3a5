#!/usr/bin/env bash
# What a request costs the CPU beyond its instructions, under concurrent load: callgrind's
# cache and branch simulation of the reference server and the bare axum baseline.
#
#   bash benches/load/cachesim.sh [--cases "echo discover list echo100k"] [--seconds N]
#                                 [--no-build] [--bin-dir DIR]
#
# run.sh's req/s can fall further behind the baseline than callgrind.sh's instruction ratio:
# a request that touches more code and data than fits the L1 caches pays for the misses. This
# counts them per request, simulated (valgrind's model of this machine's caches and branch
# predictor), so the figures repeat like instruction counts whatever else the machine does.
# For each case and server: starts the release binary under
# `valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes`, loads it with
# `wrk -t1 -c64` (the run.sh load, mcp.lua) for 3 s, zeroes the counters, loads it --seconds
# more (default 8), dumps, and divides each count by the requests wrk completed in that
# second run (the few in flight at either end are noise). Prints a table and writes it to
# target/load/cachesim.md; the profiles stay in target/load/cachesim/.
set -euo pipefail

CASES_WANTED="echo discover"
SECONDS_LOADED=8
BUILD=1
BIN_DIR=

while [[ $# -gt 0 ]]; do
    case "$1" in
        --cases) CASES_WANTED=${2-}; shift 2 ;;
        --seconds) [[ "${2-}" =~ ^[1-9][0-9]*$ ]] || { echo "cachesim.sh: --seconds needs a positive integer" >&2; exit 2; }
            SECONDS_LOADED=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin-dir) BIN_DIR=${2-}; BUILD=0; shift 2 ;;
        -h|--help) sed -n '5,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "cachesim.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"
OUT=$ROOT/target/load
PROFILES=$OUT/cachesim
WORK=$OUT/work
mkdir -p "$PROFILES" "$WORK"
# shellcheck source=benches/load/common.sh
. "$HERE/common.sh"

for t in valgrind callgrind_control; do
    need "$t" || { echo "cachesim.sh: $t is missing (Debian: apt-get install -y valgrind)" >&2; exit 1; }
done
ensure_wrk
build_binaries
stop_server_on_exit
write_bodies

# wrk_load ADDR CASE SECS: the requests wrk completed.
wrk_load() {
    local addr=$1 id=$2 secs=$3 body method name
    IFS='|' read -r _ _ body method name <<<"$(printf '%s\n' "${CASES[@]}" | grep "^$id|")"
    LOAD_BODY=$WORK/$body LOAD_METHOD=$method LOAD_NAME=$name \
        wrk -t1 -c64 -d"${secs}s" --timeout 30s -s "$HERE/mcp.lua" "http://$addr/mcp" >"$WORK/cachesim.wrk.log" 2>&1 || {
        echo "cachesim.sh: wrk failed:" >&2; cat "$WORK/cachesim.wrk.log" >&2; exit 1
    }
    grep -oE 'requests=[0-9]+' "$WORK/cachesim.wrk.log" | cut -d= -f2
}

# measure WHO CASE BIN: prints "instructions I1-misses D1-misses LL-misses mispredicted".
measure() {
    local who=$1 id=$2 bin=$3 log=$WORK/cachesim.$id.$1.log out=$PROFILES/$2.$1.out addr= requests
    rm -f "$out" "$out".*
    valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --callgrind-out-file="$out" \
        "$bin" --listen 127.0.0.1:0 >"$log" 2>&1 &
    PID=$!
    addr=$(started_addr "$log" "$bin")
    wrk_load "$addr" "$id" 3 >/dev/null
    callgrind_control -z "$PID" >/dev/null
    requests=$(wrk_load "$addr" "$id" "$SECONDS_LOADED")
    callgrind_control -d "$PID" >/dev/null
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=
    [[ "$requests" -gt 0 ]] || { echo "cachesim.sh: no request completed ($who, $id)" >&2; exit 1; }
    # events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim
    awk -v n="$requests" '
        /^events:/ { for (i = 2; i <= NF; i++) col[$i] = i }
        /^summary:/ { for (i = 2; i <= NF; i++) s[i] += $i }
        END {
            printf "%.0f %.0f %.0f %.1f %.0f\n", s[col["Ir"]] / n, s[col["I1mr"]] / n,
                (s[col["D1mr"]] + s[col["D1mw"]]) / n,
                (s[col["ILmr"]] + s[col["DLmr"]] + s[col["DLmw"]]) / n,
                (s[col["Bcm"]] + s[col["Bim"]]) / n
        }' "$out".1
}

REPORT=$OUT/cachesim.md
{
    echo "# Cache and branch misses per request under load (callgrind simulation), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo
    echo "wrk -t1 -c64 for ${SECONDS_LOADED}s after 3s of warm-up; all server threads; counts divided by the requests completed."
    echo
    echo "| case | server | instructions | L1 instruction misses | L1 data misses | last-level misses | mispredicted branches |"
    echo "|---|---|---|---|---|---|---|"
} >"$REPORT"
for id in $CASES_WANTED; do
    spec=$(printf '%s\n' "${CASES[@]}" | grep "^$id|") || { echo "cachesim.sh: unknown case $id" >&2; exit 2; }
    IFS='|' read -r _ title _ _ _ <<<"$spec"
    ours_bin=$OURS_BIN
    [[ "$id" == list ]] && ours_bin=$LIST_BIN
    read -r a b c d e <<<"$(measure ours "$id" "$ours_bin")"
    read -r f g h i j <<<"$(measure baseline "$id" "$BASE_BIN")"
    {
        echo "| $title | ours | $a | $b | $c | $d | $e |"
        echo "|  | baseline | $f | $g | $h | $i | $j |"
        awk -v a="$a" -v b="$b" -v c="$c" -v e="$e" -v f="$f" -v g="$g" -v h="$h" -v j="$j" \
            'BEGIN { printf "|  | ratio | %.2f | %.2f | %.2f | | %.2f |\n", a / f, b / g, c / h, e / j }'
    } >>"$REPORT"
done
cat "$REPORT"
