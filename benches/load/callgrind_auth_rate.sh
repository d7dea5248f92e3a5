#!/usr/bin/env bash
# What DPoP and the shared rate limiter add per request (issue 31): callgrind instructions
# per tools/call echo of the reference binary, and p50/p99 latency of a short bounded
# loopback run (sequential requests on one keep-alive connection, release build), for:
#
#   plain        no auth, no rate limit (the reference)
#   rate_memory  --rate-limit (in-process governor budgets)
#   rate_redis   --rate-limit --rate-limit-store redis://… (one Lua GCRA script per request)
#   bearer       --auth-issuer … with a bearer JWT (verified once, then cached)
#   dpop         --auth-dpop accept with a DPoP-bound JWT and a fresh proof per request
#
# and what the other opt-in features of the hot path add (issue 34):
#
#   cors         --allowed-origins http://app.bench, each request with that Origin (the
#                check, and the CORS layer's Access-Control-* headers on the answer)
#   increment    tools/call of `increment` without an Idempotency-Key (the reference for
#                the next two: the tool honours keys, but none is sent)
#   idem_first   the same with a new Idempotency-Key on every request (claimed, run, its
#                result kept: the in-process idempotency store)
#   idem_retry   the same with one key on every request (after the first, each is a retry
#                answered from the kept result, the tool not run)
#
#   bash benches/load/callgrind_auth_rate.sh [--requests N] [--latency-requests N]
#                                            [--cases "plain cors …"] [--no-build] [--bin PATH]
#
# --bin measures another build of the binary (e.g. target/debug/stateless-mcp, only to
# check the script: debug instruction counts say nothing about release ones).
#
# Needs valgrind, curl, redis-server and the test venv's Python (PyJWT; the issuer is
# tests/it/support/dpop_issuer.py). Instructions are the server's (all threads), not
# Redis's nor the issuer's. Writes target/load/callgrind_auth_rate.md.
set -euo pipefail

REQUESTS=500
LATENCY=2000
WARMUP=50
BUILD=1
BIN=
ALL_CASES="plain rate_memory rate_redis bearer dpop cors increment idem_first idem_retry"
CASES_WANTED=$ALL_CASES
while [[ $# -gt 0 ]]; do
    case "$1" in
        --requests) REQUESTS=$2; shift 2 ;;
        --cases) CASES_WANTED=${2-}; shift 2 ;;
        --latency-requests) LATENCY=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin) BIN=$2; BUILD=0; shift 2 ;;
        *) echo "callgrind_auth_rate.sh: unknown argument '$1'" >&2; exit 2 ;;
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
PY=${MCP_TEST_PYTHON:-$ROOT/target/test-tools/pyvenv/bin/python}
for t in valgrind callgrind_control curl redis-server "$PY"; do
    command -v "$t" >/dev/null 2>&1 || { echo "callgrind_auth_rate.sh: $t is missing (scripts/provision.sh)" >&2; exit 1; }
done
if (( BUILD )); then
    cargo build --release --features reference-server --bin stateless-mcp
fi
BIN=${BIN:-$ROOT/target/release/stateless-mcp}
write_bodies

PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT

REDIS_PORT=$((20000 + RANDOM % 20000))
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
"$PY" tests/it/support/dpop_issuer.py >"$WORK/issuer.out" 2>"$WORK/issuer.log" &
PIDS+=($!)
for _ in $(seq 1 50); do [[ -s "$WORK/issuer.out" ]] && break; sleep 0.1; done
ISSUER=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["issuer"])' "$WORK/issuer.out")
RESOURCE=http://mcp.bench/mcp
AUTH=(--auth-issuer "$ISSUER" --resource "$RESOURCE" --auth-scopes mcp)
ORIGIN=http://app.bench
printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"increment","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"load-bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}' \
    >"$WORK/increment.json"

args_of() {
    case "$1" in
        plain) ;;
        rate_memory) echo "--rate-limit 1000000" ;;
        rate_redis) echo "--rate-limit 1000000 --rate-limit-store redis://127.0.0.1:$REDIS_PORT" ;;
        bearer) echo "${AUTH[*]}" ;;
        dpop) echo "${AUTH[*]} --auth-dpop accept" ;;
        cors) echo "--allowed-origins $ORIGIN" ;;
        increment | idem_first | idem_retry) ;;
    esac
}

# requests ADDR CASE N FILE: a curl config of N echo requests for CASE at ADDR.
requests() {
    local addr=$1 id=$2 n=$3 file=$4 url="http://$1/mcp"
    case "$id" in
        bearer) "$PY" "$HERE/dpop_requests.py" "$ISSUER" "$url" "$RESOURCE" "$WORK/echo.json" "$n" "$file" --bearer ;;
        dpop) "$PY" "$HERE/dpop_requests.py" "$ISSUER" "$url" "$RESOURCE" "$WORK/echo.json" "$n" "$file" ;;
        *)
            local tool=echo extra=()
            case "$id" in
                cors) extra=("Origin: $ORIGIN") ;;
                increment | idem_first | idem_retry) tool=increment ;;
            esac
            : >"$file"
            for ((i = 0; i < n; i++)); do
                ((i > 0)) && printf 'next\n'
                printf 'url = "%s?r=%d"\nrequest = "POST"\noutput = "/dev/null"\nwrite-out = "%%{http_code} %%{time_total}\\n"\n' "$url" "$i"
                printf 'header = "%s"\n' "Content-Type: application/json" "Accept: application/json, text/event-stream" \
                    "MCP-Protocol-Version: 2026-07-28" "Mcp-Method: tools/call" "Mcp-Name: $tool" \
                    ${extra[@]+"${extra[@]}"}
                case "$id" in
                    idem_first) printf 'header = "Idempotency-Key: %s-%d"\n' "${file##*/}" "$i" ;;
                    idem_retry) printf 'header = "Idempotency-Key: one-key"\n' ;;
                esac
                printf 'data-binary = "@%s"\n' "$WORK/$tool.json"
            done >"$file" ;;
    esac
}

# run FILE: sends the requests, checks every answer is 200, prints the times (s).
run() {
    curl -sS --config "$1" | awk '$1 != 200 { print "callgrind_auth_rate.sh: status " $1 > "/dev/stderr"; bad = 1 } { print $2 } END { exit bad }'
}

# start CASE [valgrind OUT]: starts the binary for CASE; sets PID and ADDR.
start() {
    local id=$1 log=$WORK/auth_rate.$1.log
    # Emptied here, not by the child's redirection: the background child may truncate it only
    # after the loop below has read the previous run's address.
    : >"$log"
    # shellcheck disable=SC2046
    if [[ "${2-}" == valgrind ]]; then
        valgrind --tool=callgrind --callgrind-out-file="$3" "$BIN" --listen 127.0.0.1:0 --log warn,stateless_mcp::runner=info $(args_of "$id") >>"$log" 2>&1 &
    else
        "$BIN" --listen 127.0.0.1:0 --log warn,stateless_mcp::runner=info $(args_of "$id") >>"$log" 2>&1 &
    fi
    PID=$!
    PIDS+=("$PID")
    ADDR=
    for _ in $(seq 1 300); do
        ADDR=$(logged_addr "$log")
        [[ -n "$ADDR" ]] && break
        sleep 0.2
    done
    [[ -n "$ADDR" ]] || { echo "callgrind_auth_rate.sh: the server did not start:" >&2; cat "$log" >&2; exit 1; }
}

stop() {
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
}

percentile() { sort -n | awk -v p="$1" '{ a[NR] = $1 } END { i = int(NR * p); if (i < 1) i = 1; printf "%.0f", a[i] * 1e6 }'; }

declare -A INSTR P50 P99
for id in $CASES_WANTED; do
    [[ " $ALL_CASES " == *" $id "* ]] || { echo "callgrind_auth_rate.sh: unknown case '$id' (cases: $ALL_CASES)" >&2; exit 2; }
    out=$PROFILES/auth_rate.$id.out
    rm -f "$out" "$out".*
    start "$id" valgrind "$out"
    requests "$ADDR" "$id" "$WARMUP" "$WORK/warm.$id.cfg"
    requests "$ADDR" "$id" "$REQUESTS" "$WORK/measured.$id.cfg"
    run "$WORK/warm.$id.cfg" >/dev/null
    callgrind_control -z "$PID" >/dev/null
    run "$WORK/measured.$id.cfg" >/dev/null
    callgrind_control -d "$PID" >/dev/null
    stop
    total=$(awk '/^summary:/ { s += $2 } END { print s + 0 }' "$out".1)
    INSTR[$id]=$(awk -v t="$total" -v n="$REQUESTS" 'BEGIN { printf "%.0f", t / n }')
    # Latency, without valgrind: LATENCY sequential requests after the warm-up.
    start "$id"
    requests "$ADDR" "$id" "$WARMUP" "$WORK/warm.$id.cfg"
    requests "$ADDR" "$id" "$LATENCY" "$WORK/lat.$id.cfg"
    run "$WORK/warm.$id.cfg" >/dev/null
    run "$WORK/lat.$id.cfg" >"$WORK/lat.$id.txt"
    stop
    P50[$id]=$(percentile 0.50 <"$WORK/lat.$id.txt")
    P99[$id]=$(percentile 0.99 <"$WORK/lat.$id.txt")
    echo "-- $id: ${INSTR[$id]} instr/req, p50 ${P50[$id]} us, p99 ${P99[$id]} us" >&2
done

{
    echo "# DPoP, shared rate limits, CORS and idempotency keys: cost per tools/call (commit $(git rev-parse --short HEAD))"
    echo
    echo "Binary: $BIN. $REQUESTS requests (callgrind, all server threads) and $LATENCY requests (latency, curl time_total), one keep-alive connection, after $WARMUP warm-up requests."
    echo
    echo "| case | instr/req | added vs reference | p50 µs | p99 µs |"
    echo "|---|---|---|---|---|"
    row() { awk -v c="$1" -v i="${INSTR[$1]}" -v r="${INSTR[$2]}" -v p="${P50[$1]}" -v q="${P99[$1]}" -v rp="${P50[$2]}" -v rq="${P99[$2]}" -v ref="$2" \
        'BEGIN { printf "| %s | %d | %+d (vs %s) | %d (%+d) | %d (%+d) |\n", c, i, i - r, ref, p, p - rp, q, q - rq }'; }
    ran() { [[ -n "${INSTR[$1]-}" ]]; }
    ran plain && echo "| plain | ${INSTR[plain]} | | ${P50[plain]} | ${P99[plain]} |"
    ran increment && echo "| increment | ${INSTR[increment]} | | ${P50[increment]} | ${P99[increment]} |"
    for pair in rate_memory:plain rate_redis:plain bearer:plain dpop:bearer cors:plain idem_first:increment idem_retry:increment; do
        if ran "${pair%%:*}" && ran "${pair#*:}"; then row "${pair%%:*}" "${pair#*:}"; fi
    done
} >"$OUT/callgrind_auth_rate.md"
cat "$OUT/callgrind_auth_rate.md"
