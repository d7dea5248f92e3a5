#!/usr/bin/env bash
# Load benchmark: the stateless-mcp reference server against a bare axum JSON-RPC baseline.
#
#   bash benches/load/run.sh [--duration SECS] [--rounds N] [--connections N] [--threads N]
#                            [--warmup SECS] [--server-cpu CPU] [--load-cpu CPU] [--no-build]
#
# Run from anywhere in the repository. Builds in release, then for each case starts a fresh
# pair of servers (ours and the baseline) pinned to --server-cpu, checks each answer once,
# warms both up, and loads them alternately (the order flips every round) with wrk pinned
# to --load-cpu. Prints a table and writes it to target/load/results.md. Loopback only;
# every process it starts is stopped on exit. See benches/load/README.md.
set -euo pipefail

usage() {
    sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-0}"
}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=benches/load/common.sh
. "$HERE/common.sh"

while [[ $# -gt 0 ]]; do
    load_option "$1" "${2-}"
    if (( TAKEN > 0 )); then shift "$TAKEN"; continue; fi
    case "$1" in
        -h|--help) usage 0 ;;
        *) echo "run.sh: unknown argument '$1'" >&2; usage 2 ;;
    esac
done
check_load_limits

ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"
OUT=$ROOT/target/load
WORK=$OUT/work
mkdir -p "$WORK"

# ---------------------------------------------------------------- tools and machine
ensure_wrk
for t in taskset curl getconf awk; do
    need "$t" || { echo "run.sh: $t is missing (taskset: util-linux; curl: curl)" >&2; exit 1; }
done
check_machine

# ---------------------------------------------------------------- build
build_binaries
for b in "$OURS_BIN" "$LIST_BIN" "$BASE_BIN"; do
    [[ -x "$b" ]] || { echo "run.sh: $b is missing (drop --no-build)" >&2; exit 1; }
done

# ---------------------------------------------------------------- processes
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    PIDS=()
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_server LOG CMD... : starts CMD pinned to the server CPU on 127.0.0.1:0; sets
# SERVER_PID and SERVER_ADDR from the "listening on" (baseline, load_server) or
# "address=" (stateless-mcp log) line of its stderr.
start_server() {
    local log=$1
    shift
    taskset -c "$SERVER_CPU" "$@" --listen 127.0.0.1:0 >"$log" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    SERVER_ADDR=
    for _ in $(seq 1 100); do
        SERVER_ADDR=$(logged_addr "$log")
        [[ -n "$SERVER_ADDR" ]] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "run.sh: $* did not start; its output:" >&2
    cat "$log" >&2
    exit 1
}

stop_server() {
    local pid=$1 keep=() p
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    for p in "${PIDS[@]}"; do [[ "$p" == "$pid" ]] || keep+=("$p"); done
    PIDS=("${keep[@]+"${keep[@]}"}")
}

# Peak resident set of a process so far, in KiB.
peak_rss_kib() {
    awk '/^VmHWM:/ {print $2}' "/proc/$1/status"
}

# ---------------------------------------------------------------- request bodies
write_bodies

# load CASE WHO PID ADDR SECS: one wrk run; prints "rps p50_us p99_us cpu_us_per_req
# requests errors".
load() {
    local id=$1 who=$2 pid=$3 addr=$4 secs=$5 body method name t0 t1 line
    IFS='|' read -r _ _ body method name <<<"$(printf '%s\n' "${CASES[@]}" | grep "^$id|")"
    t0=$(cpu_ticks "$pid")
    LOAD_BODY=$WORK/$body LOAD_METHOD=$method LOAD_NAME=$name \
        taskset -c "$LOAD_CPU" wrk -t"$THREADS" -c"$CONNECTIONS" -d"${secs}s" --timeout 10s \
        -s "$HERE/mcp.lua" "http://$addr/mcp" >"$WORK/wrk.$id.$who.log" 2>&1 || {
        echo "run.sh: wrk failed against $who ($id):" >&2
        cat "$WORK/wrk.$id.$who.log" >&2
        exit 1
    }
    t1=$(cpu_ticks "$pid")
    line=$(grep '^LOAD_RESULT ' "$WORK/wrk.$id.$who.log") || {
        echo "run.sh: no LOAD_RESULT line from wrk:" >&2
        cat "$WORK/wrk.$id.$who.log" >&2
        exit 1
    }
    awk -v line="$line" -v ticks=$((t1 - t0)) -v hz="$CLK_TCK" 'BEGIN {
        n = split(line, kv, " ")
        for (i = 2; i <= n; i++) { split(kv[i], p, "="); v[p[1]] = p[2] }
        cpu = v["requests"] > 0 ? ticks * 1e6 / hz / v["requests"] : 0
        printf "%.1f %d %d %.1f %d %d\n", v["rps"], v["p50_us"], v["p99_us"], cpu, v["requests"], v["non2xx"] + v["socket_errors"]
    }'
}

# ---------------------------------------------------------------- run
RAW=$OUT/raw.tsv
printf 'case\tserver\tround\trps\tp50_us\tp99_us\tcpu_us_per_req\trequests\terrors\n' >"$RAW"
SIZES=$WORK/sizes.tsv
: >"$SIZES"
RSS=$WORK/rss.tsv
: >"$RSS"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
TOTAL=$(( ${#CASES[@]} * 2 * ROUNDS * DURATION + ${#CASES[@]} * 2 * WARMUP ))
echo "== ${#CASES[@]} cases x 2 servers x $ROUNDS rounds x ${DURATION}s, $CONNECTIONS connections," \
    "wrk -t$THREADS on CPU $LOAD_CPU, servers on CPU $SERVER_CPU (about ${TOTAL}s of load); load average $LOAD_BEFORE" >&2

for spec in "${CASES[@]}"; do
    IFS='|' read -r id title _ _ _ <<<"$spec"
    if [[ "$id" == list ]]; then ours_cmd=("$LIST_BIN"); else ours_cmd=("$OURS_BIN"); fi
    start_server "$WORK/ours.$id.log" "${ours_cmd[@]}"
    ours_pid=$SERVER_PID ours_addr=$SERVER_ADDR
    start_server "$WORK/baseline.$id.log" "$BASE_BIN"
    base_pid=$SERVER_PID base_addr=$SERVER_ADDR
    ours_size=$(check_response "$id" "$ours_addr" ours)
    base_size=$(check_response "$id" "$base_addr" baseline)
    printf '%s\t%s\t%s\n' "$id" "$ours_size" "$base_size" >>"$SIZES"
    echo "-- $title: ours $(basename "${ours_cmd[0]}") on $ours_addr (answer $ours_size B)," \
        "baseline on $base_addr (answer $base_size B)" >&2
    if (( WARMUP > 0 )); then
        load "$id" ours "$ours_pid" "$ours_addr" "$WARMUP" >/dev/null
        load "$id" baseline "$base_pid" "$base_addr" "$WARMUP" >/dev/null
    fi
    for round in $(seq 1 "$ROUNDS"); do
        if (( round % 2 )); then order=(ours baseline); else order=(baseline ours); fi
        for who in "${order[@]}"; do
            if [[ "$who" == ours ]]; then pid=$ours_pid addr=$ours_addr; else pid=$base_pid addr=$base_addr; fi
            result=$(load "$id" "$who" "$pid" "$addr" "$DURATION")
            read -r rps p50 p99 cpu n errs <<<"$result"
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$who" "$round" "$rps" "$p50" "$p99" "$cpu" "$n" "$errs" >>"$RAW"
            printf '   round %d %-8s %10.1f req/s  p50 %6d us  p99 %6d us  %7.1f CPU us/req%s\n' \
                "$round" "$who" "$rps" "$p50" "$p99" "$cpu" "$( (( errs > 0 )) && echo "  ERRORS $errs" || true)" >&2
        done
    done
    printf '%s\t%s\t%s\n' "$id" "$(peak_rss_kib "$ours_pid")" "$(peak_rss_kib "$base_pid")" >>"$RSS"
    stop_server "$ours_pid"
    stop_server "$base_pid"
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- report
CPU_MODEL=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)
{
    echo "# Load benchmark: stateless-mcp against a bare axum baseline"
    echo
    echo "$STARTED, commit $COMMIT$DIRTY; $CPUS CPUs ($CPU_MODEL); load average $LOAD_AT_START at start (before the build), $LOAD_BEFORE when the load began, $LOAD_AFTER at the end (this run's own load counts)."
    echo "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s on CPU $LOAD_CPU; each server on CPU $SERVER_CPU (a fresh pair per case);"
    echo "$ROUNDS rounds per case after a ${WARMUP}s warm-up, ours and baseline alternating (order flipped each round)."
    echo "Ours: \`target/release/stateless-mcp\` (defaults), except tools/list: \`examples/load_server.rs\` (the same wiring with 100 tools; no fixture set has 100)."
    echo
    echo "req/s: median (min-max) over rounds; p50, p99 and CPU: medians over rounds; CPU is the server's user+system time per request;"
    echo "server core busy: CPU µs/req × req/s (well under 100% means the load generator, not the server, was the limit);"
    echo "peak RSS: VmHWM of the server process over the whole case. Ratios: ours/baseline of the medians (req/s: higher is better, ≥ 1 beats the baseline; p99: lower is better)."
    echo
    echo "| case | server | req/s (min-max) | p50 ms | p99 ms | CPU µs/req | server core busy | peak RSS MiB | answer bytes | req/s ratio | p99 ratio |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for spec in "${CASES[@]}"; do
        IFS='|' read -r id title _ _ _ <<<"$spec"
        awk -F'\t' -v id="$id" -v title="$title" -v sizes="$SIZES" -v rss="$RSS" '
        function median(a, n,    i, j, t) {
            for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        BEGIN {
            while ((getline l < sizes) > 0) { split(l, f, "\t"); if (f[1] == id) { size["ours"] = f[2]; size["baseline"] = f[3] } }
            while ((getline l < rss) > 0) { split(l, f, "\t"); if (f[1] == id) { peak["ours"] = f[2]; peak["baseline"] = f[3] } }
        }
        NR > 1 && $1 == id {
            w = $2; k = ++n[w]
            rps[w, k] = $4; p50[w, k] = $5; p99[w, k] = $6; cpu[w, k] = $7; errs[w] += $9
        }
        END {
            split("ours baseline", who, " ")
            for (x = 1; x <= 2; x++) {
                w = who[x]; m = n[w]; lo = ""; hi = ""
                for (k = 1; k <= m; k++) {
                    a[k] = rps[w, k] + 0; b[k] = p50[w, k] + 0; c[k] = p99[w, k] + 0; d[k] = cpu[w, k] + 0
                    if (lo == "" || a[k] < lo) lo = a[k]; if (hi == "" || a[k] > hi) hi = a[k]
                }
                mr[w] = median(a, m)
                for (k = 1; k <= m; k++) a[k] = b[k]; mp50[w] = median(a, m)
                for (k = 1; k <= m; k++) a[k] = c[k]; mp99[w] = median(a, m)
                for (k = 1; k <= m; k++) a[k] = d[k]; mcpu[w] = median(a, m)
                rng[w] = sprintf("%.0f (%.0f-%.0f)", mr[w], lo, hi)
            }
            for (x = 1; x <= 2; x++) {
                w = who[x]
                note = errs[w] > 0 ? sprintf(" **%d errors**", errs[w]) : ""
                if (w == "ours")
                    ratios = sprintf("%.2f | %.2f", mr["ours"] / mr["baseline"], mp99["ours"] / mp99["baseline"])
                else
                    ratios = " | "
                printf "| %s | %s%s | %s | %.2f | %.2f | %.1f | %.0f%% | %.1f | %s | %s |\n", (w == "ours" ? title : ""), w, note, rng[w],
                    mp50[w] / 1000, mp99[w] / 1000, mcpu[w], mcpu[w] * mr[w] / 1e4, peak[w] / 1024, size[w], ratios
            }
        }' "$RAW"
    done
    echo
    echo "Per-round figures: \`target/load/raw.tsv\`; wrk and server logs: \`target/load/work/\`."
} >"$OUT/results.md"

echo >&2
cat "$OUT/results.md"
