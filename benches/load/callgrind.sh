#!/usr/bin/env bash
# Instructions per request (callgrind): the reference server and the bare axum baseline.
#
#   bash benches/load/callgrind.sh [--requests N]
#                                  [--cases "echo list list_scoped discover echo100k legacy stdio
#                                            mounted_runner mounted_service mounted_router"]
#                                  [--no-build] [--bin-dir DIR]
#
# Unlike req/s, instruction counts repeat within about 1-2% between runs, so they compare
# builds on a noisy machine. For each case and server: starts the release binary under
# `valgrind --tool=callgrind`, sends 50 warm-up requests on one keep-alive connection
# (curl), zeroes the counters, sends N more (default 500) on one connection, dumps, and
# divides the server's instruction count (every thread) by N.
# The `legacy` case is the echo call of a 2025-11-25 client: `initialize` first (not
# counted), then the calls carry its `Mcp-Session-Id` and `MCP-Protocol-Version: 2025-11-25`
# and no `_meta`; it has no baseline (the baseline keeps no sessions): the targets table
# gives its ratio to the 2026 echo when both ran.
# The `list_scoped` case is `tools/list` of the same 100 tools with half of them declaring a
# scope (`load_server` with LOAD_SERVER_SCOPED=1) and a caller granted it (a principal put in
# the request by a layer, in place of an authorization layer's token check, which
# benches/auth.rs measures): the caller sees all 100, so the answer is the same size; the
# targets table gives its ratio to the unscoped list when both ran (no baseline: it has no
# scopes).
# The `mounted_*` cases are the same 2026 echo call, to `load_server` (the reference
# server's settings and tools, plus 95 more) served three ways: by the runner
# (`mounted_runner`, the reference path), and mounted in an axum app of the user's own served
# by `axum::serve` with nodelay, through `StreamableHttp::into_service` + `route_service`
# (`mounted_service`, LOAD_SERVER_MOUNTED=service) or `into_router` + `merge`
# (`mounted_router`). No baseline: the targets table gives each mounted path's ratio to the
# runner's.
# The `stdio` case is the same 2026 echo call (with `_meta`, no initialize) sent to the
# reference binary with `--transport stdio`: one line on stdin, one answer read from stdout,
# one request at a time (as on the HTTP connection); every answer is checked. It has no
# baseline of its own: the targets table gives its ratio to the HTTP echo.
# Prints two tables (instructions per case; the issue 19 targets: each ratio, its target
# and whether this run met it) and writes them to target/load/callgrind.md; the profiles stay in
# target/load/callgrind/ for callgrind_annotate. Same request bodies and headers as run.sh.
# --bin-dir DIR measures stateless-mcp, load_server and bare_axum_baseline copied into DIR
# (for example from an earlier commit) instead of building.
set -euo pipefail

REQUESTS=500
WARMUP=50
BUILD=1
CASES_WANTED="echo list list_scoped discover echo100k legacy stdio mounted_runner mounted_service mounted_router"
BIN_DIR=

while [[ $# -gt 0 ]]; do
    case "$1" in
        --requests) [[ "${2-}" =~ ^[1-9][0-9]*$ ]] || { echo "callgrind.sh: --requests needs a positive integer" >&2; exit 2; }
            REQUESTS=$2; shift 2 ;;
        --cases) CASES_WANTED=${2-}; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin-dir) BIN_DIR=${2-}; BUILD=0; shift 2 ;;
        -h|--help) sed -n '4,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "callgrind.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"
OUT=$ROOT/target/load
PROFILES=$OUT/callgrind
WORK=$OUT/work
mkdir -p "$PROFILES" "$WORK"
# shellcheck source=benches/load/common.sh
. "$HERE/common.sh"

for t in valgrind callgrind_control curl; do
    command -v "$t" >/dev/null 2>&1 || { echo "callgrind.sh: $t is missing (Debian: apt-get install -y valgrind curl)" >&2; exit 1; }
done

build_binaries
stop_server_on_exit

write_bodies
# The legacy case: not in CASES (run.sh's wrk script has no session to send).
printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello from the load benchmark"}}}' \
    >"$WORK/legacy.json"
LEGACY_SPEC="legacy|tools/call echo, legacy session (2025-11-25)|legacy.json||"
SCOPED_SPEC="list_scoped|tools/list, 100 tools, 50 scoped|list.json|tools/list|"
# The echo call to load_server, by the runner and mounted in a user's app (see above).
MOUNTED_SPECS=(
    "mounted_runner|tools/call echo, load_server, Runner|echo.json|tools/call|echo"
    "mounted_service|tools/call echo, load_server, route_service in the user's axum::serve|echo.json|tools/call|echo"
    "mounted_router|tools/call echo, load_server, into_router in the user's axum::serve|echo.json|tools/call|echo"
)
SESSION=

# start_session ADDR: a legacy session on the server at ADDR, in $SESSION (the baseline
# answers initialize with no session; it ignores the header anyway).
start_session() {
    SESSION=$(curl -sS -D - -o /dev/null -X POST -H 'Content-Type: application/json' \
        -H 'Accept: application/json, text/event-stream' \
        --data '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load-bench","version":"1.0.0"}}}' \
        "http://$1/mcp" | tr -d '\r' | awk -F': ' 'tolower($1) == "mcp-session-id" { print $2 }')
}

# send ADDR CASE N: N requests on one keep-alive connection (curl reuses it across URLs).
send() {
    local addr=$1 id=$2 n=$3 body method name
    IFS='|' read -r _ _ body method name <<<"$(printf '%s\n' "${CASES[@]}" "$LEGACY_SPEC" "$SCOPED_SPEC" "${MOUNTED_SPECS[@]}" | grep "^$id|")"
    local args=(-sS -o /dev/null -X POST -H 'Content-Type: application/json'
        -H 'Accept: application/json, text/event-stream' --data-binary "@$WORK/$body")
    if [[ "$id" == legacy ]]; then
        args+=(-H 'MCP-Protocol-Version: 2025-11-25')
        [[ -n "$SESSION" ]] && args+=(-H "Mcp-Session-Id: $SESSION")
    else
        args+=(-H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $method")
    fi
    [[ -n "$name" ]] && args+=(-H "Mcp-Name: $name")
    # A query string makes each URL distinct; the route ignores it.
    curl "${args[@]}" -w '%{http_code}\n' "http://$addr/mcp?r=[1-$n]" | sort | uniq -c |
        awk -v n="$n" '$2 != 200 || $1 != n { print "callgrind.sh: unexpected answers: " $0 > "/dev/stderr"; bad = 1 } END { exit bad }'
}

# measure WHO CASE BIN: prints instructions per request.
measure() {
    local who=$1 id=$2 bin=$3 log out addr=
    log=$WORK/callgrind.$id.$who.log
    out=$PROFILES/$id.$who.out
    rm -f "$out" "$out".*
    local envs=()
    [[ "$id" == list_scoped ]] && envs=(LOAD_SERVER_SCOPED=1)
    [[ "$id" == mounted_service ]] && envs=(LOAD_SERVER_MOUNTED=service)
    [[ "$id" == mounted_router ]] && envs=(LOAD_SERVER_MOUNTED=router)
    env "${envs[@]}" valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$bin" --listen 127.0.0.1:0 >"$log" 2>&1 &
    PID=$!
    addr=$(started_addr "$log" "$bin")
    SESSION=
    if [[ "$id" == legacy && "$who" == ours ]]; then
        start_session "$addr"
        [[ -n "$SESSION" ]] || { echo "callgrind.sh: initialize returned no Mcp-Session-Id" >&2; exit 1; }
    fi
    send "$addr" "$id" "$WARMUP"
    callgrind_control -z "$PID" >/dev/null
    send "$addr" "$id" "$REQUESTS"
    callgrind_control -d "$PID" >/dev/null
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=
    # The dump taken right after the measured requests (not the one at exit).
    local total
    total=$(cat "$out".1 | awk '/^summary:/ { s += $2 } END { print s + 0 }')
    awk -v t="$total" -v n="$REQUESTS" 'BEGIN { printf "%.0f\n", t / n }'
}

# measure_stdio: instructions per echo request of the reference binary over stdio.
measure_stdio() {
    local log=$WORK/callgrind.stdio.log out=$PROFILES/stdio.ours.out in_fifo=$WORK/stdio.in
    local out_fifo=$WORK/stdio.out line i n body expect
    rm -f "$out" "$out".* "$in_fifo" "$out_fifo"
    mkfifo "$in_fifo" "$out_fifo"
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$OURS_BIN" --transport stdio <"$in_fifo" >"$out_fifo" 2>"$log" &
    PID=$!
    exec 7>"$in_fifo" 8<"$out_fifo"
    body=$(cat "$WORK/echo.json")
    expect=$(cat "$WORK/echo.expect")
    # one_call ID: writes the echo call with this id, reads and checks its answer.
    one_call() {
        printf '%s\n' "${body/\"id\":1,/\"id\":$1,}" >&7
        IFS= read -r -t 120 line <&8 || { echo "callgrind.sh: no stdio answer to request $1" >&2; cat "$log" >&2; exit 1; }
        [[ "$line" == *"\"id\":$1,"* && "$line" == *"$expect"* ]] ||
            { echo "callgrind.sh: unexpected stdio answer: $line" >&2; exit 1; }
    }
    for ((i = 1; i <= WARMUP; i++)); do one_call "$i"; done
    callgrind_control -z "$PID" >/dev/null
    n=$((WARMUP + REQUESTS))
    for ((i = WARMUP + 1; i <= n; i++)); do one_call "$i"; done
    callgrind_control -d "$PID" >/dev/null
    exec 7>&- 8<&-
    wait "$PID" 2>/dev/null || true
    PID=
    rm -f "$in_fifo" "$out_fifo"
    local total
    total=$(awk '/^summary:/ { s += $2 } END { print s + 0 }' "$out".1)
    awk -v t="$total" -v n="$REQUESTS" 'BEGIN { printf "%.0f\n", t / n }'
}

COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)
declare -A OURS_BY_CASE=() BASE_BY_CASE=() TITLE_BY_CASE=()
ORDER=()
for spec in "${CASES[@]}" "$SCOPED_SPEC" "$LEGACY_SPEC" "${MOUNTED_SPECS[@]}"; do
    IFS='|' read -r id title _ _ _ <<<"$spec"
    [[ " $CASES_WANTED " == *" $id "* ]] || continue
    if [[ "$id" == list* || "$id" == mounted_* ]]; then ours=$LIST_BIN; else ours=$OURS_BIN; fi
    o=$(measure ours "$id" "$ours")
    OURS_BY_CASE[$id]=$o TITLE_BY_CASE[$id]=$title
    ORDER+=("$id")
    # The scoped list and the legacy call have no baseline of their own (the baseline has
    # no scopes and no sessions): their figure of merit is a ratio to another of ours.
    if [[ "$id" == list_scoped || "$id" == legacy || "$id" == mounted_* ]]; then
        echo "-- $title: ours $o" >&2
        continue
    fi
    b=$(measure baseline "$id" "$BASE_BIN")
    BASE_BY_CASE[$id]=$b
    echo "-- $title: ours $o, baseline $b" >&2
done
if [[ " $CASES_WANTED " == *" stdio "* ]]; then
    o=$(measure_stdio)
    OURS_BY_CASE[stdio]=$o TITLE_BY_CASE[stdio]="tools/call echo over stdio"
    ORDER+=(stdio)
    echo "-- tools/call echo over stdio: ours $o" >&2
fi

# target_row LABEL NUMERATOR DENOMINATOR TARGET: one line of the targets table (issue 19
# items 1 and 2), when both counts were measured in this run.
target_row() {
    [[ -n "$2" && -n "$3" ]] || return 0
    awk -v l="$1" -v n="$2" -v d="$3" -v t="$4" 'BEGIN {
        r = n / d; printf "| %s | %d / %d | %.2f | <= %.2f | %s |\n", l, n, d, r, t, (r <= t ? "met" : "not met") }'
}
{
    echo "# Instructions per request (callgrind), commit $COMMIT$DIRTY"
    echo
    echo "$REQUESTS requests on one keep-alive connection after $WARMUP warm-up requests; all server threads."
    echo
    echo "| case | ours instr/req | baseline instr/req | ratio |"
    echo "|---|---|---|---|"
    for id in "${ORDER[@]}"; do
        o=${OURS_BY_CASE[$id]} b=${BASE_BY_CASE[$id]-}
        if [[ -n "$b" ]]; then
            awk -v t="${TITLE_BY_CASE[$id]}" -v o="$o" -v b="$b" 'BEGIN { printf "| %s | %d | %d | %.2f |\n", t, o, b, o / b }'
        else
            awk -v t="${TITLE_BY_CASE[$id]}" -v o="$o" 'BEGIN { printf "| %s | %d | (none) | |\n", t, o }'
        fi
    done
    echo
    echo "Targets (issue 19, items 1 and 2): ratios of this run."
    echo
    echo "| ratio | instructions | value | target | |"
    echo "|---|---|---|---|---|"
    target_row "echo / baseline echo" "${OURS_BY_CASE[echo]-}" "${BASE_BY_CASE[echo]-}" 1.25
    target_row "discover / baseline discover" "${OURS_BY_CASE[discover]-}" "${BASE_BY_CASE[discover]-}" 1.2
    target_row "tools/list(100) / baseline list" "${OURS_BY_CASE[list]-}" "${BASE_BY_CASE[list]-}" 1.1
    target_row "echo 100 KB / baseline echo 100 KB" "${OURS_BY_CASE[echo100k]-}" "${BASE_BY_CASE[echo100k]-}" 1.0
    target_row "legacy echo / 2026 echo" "${OURS_BY_CASE[legacy]-}" "${OURS_BY_CASE[echo]-}" 1.2
    target_row "stdio echo / 2026 HTTP echo" "${OURS_BY_CASE[stdio]-}" "${OURS_BY_CASE[echo]-}" 1.2
    target_row "scoped list / unscoped list" "${OURS_BY_CASE[list_scoped]-}" "${OURS_BY_CASE[list]-}" 1.3
    target_row "mounted (route_service) echo / runner echo" "${OURS_BY_CASE[mounted_service]-}" "${OURS_BY_CASE[mounted_runner]-}" 1.1
    target_row "mounted (into_router) echo / runner echo" "${OURS_BY_CASE[mounted_router]-}" "${OURS_BY_CASE[mounted_runner]-}" 1.1
} >"$OUT/callgrind.md"
echo >&2
cat "$OUT/callgrind.md"
