#!/usr/bin/env bash
# Load benchmark: the reference server straight, behind nginx, and as N replicas behind nginx.
#
#   bash benches/load/replicas.sh [--duration SECS] [--rounds N] [--connections N] [--threads N]
#                                 [--warmup SECS] [--replicas N] [--cases "echo discover"]
#                                 [--server-cpu CPU] [--load-cpu CPU] [--no-build]
#
# Run from anywhere in the repository. Builds in release (as run.sh), then for each case
# starts N replicas of target/release/stateless-mcp (defaults) and two nginx instances with
# the shipped deploy/nginx/nginx.conf (one in front of replica 1, one in front of all N),
# all pinned to --server-cpu; checks each answer once through each configuration, warms
# them up, and loads direct-1, nginx-1 and nginx-N alternately (order rotated every round)
# with wrk pinned to --load-cpu. Prints a table and writes target/load/replicas.md (per
# round: target/load/replicas.tsv). Loopback only; every process it starts is stopped on
# exit, also on failure or Ctrl-C. See "Replicas behind nginx" in benches/load/README.md.
set -euo pipefail

REPLICAS=3
CASE_IDS="echo discover"
NGINX=/usr/sbin/nginx

usage() {
    sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-0}"
}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG=replicas.sh
# shellcheck source=benches/load/common.sh
. "$HERE/common.sh"

while [[ $# -gt 0 ]]; do
    load_option "$1" "${2-}"
    if (( TAKEN > 0 )); then shift "$TAKEN"; continue; fi
    case "$1" in
        --replicas) [[ "${2-}" =~ ^[1-9][0-9]*$ ]] || { echo "replicas.sh: --replicas needs a positive integer, got '${2-}'" >&2; exit 2; }
            REPLICAS=$2; shift 2 ;;
        --cases) [[ -n "${2-}" ]] || { echo "replicas.sh: --cases needs a list, e.g. \"echo discover\"" >&2; exit 2; }
            CASE_IDS=$2; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "replicas.sh: unknown argument '$1'" >&2; usage 2 ;;
    esac
done
check_load_limits
(( REPLICAS <= 8 )) || { echo "replicas.sh: --replicas is 1 to 8" >&2; exit 2; }

ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"
OUT=$ROOT/target/load
WORK=$OUT/work/replicas
mkdir -p "$WORK"

# The cases asked for, checked against common.sh's CASES ("list" needs load_server's 100
# tools and is left to run.sh: the replicas here are the reference binary with its defaults).
SELECTED=()
for id in $CASE_IDS; do
    spec=$(printf '%s\n' "${CASES[@]}" | grep "^$id|" || true)
    if [[ -z "$spec" || "$id" == list ]]; then
        echo "replicas.sh: unknown case '$id' (echo, echo100k, discover)" >&2
        exit 2
    fi
    SELECTED+=("$spec")
done

# ---------------------------------------------------------------- tools and machine
ensure_wrk
for t in taskset curl getconf awk pgrep; do
    need "$t" || { echo "replicas.sh: $t is missing (taskset: util-linux; pgrep: procps; curl: curl)" >&2; exit 1; }
done
[[ -x "$NGINX" ]] || { echo "replicas.sh: $NGINX is missing; install it (Debian/Ubuntu: sudo apt-get install -y nginx)" >&2; exit 1; }
check_machine

# ---------------------------------------------------------------- build
build_binaries
[[ -x "$OURS_BIN" ]] || { echo "replicas.sh: $OURS_BIN is missing (drop --no-build)" >&2; exit 1; }

# ---------------------------------------------------------------- processes
# Every process started (replicas, nginx masters and their workers, wrk), stopped on exit.
PIDS=()
WRK_PID=
# nginx prefixes live under one private directory, removed on exit.
PREFIX_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/stateless-mcp-replicas.XXXXXX")
chmod 755 "$PREFIX_ROOT"
# running PID: whether PID is alive (a child that exited is a zombie until waited for).
running() {
    kill -0 "$1" 2>/dev/null && [[ $(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) != Z ]]
}
stop_processes() {
    local pid alive
    if [[ -n "$WRK_PID" ]]; then
        kill -TERM "$WRK_PID" 2>/dev/null || true
        wait "$WRK_PID" 2>/dev/null || true
        WRK_PID=
    fi
    # SIGTERM first (an nginx master stops its workers, which outlive a SIGKILLed master),
    # then up to 3 s for all of them together, then SIGKILL for any left.
    for pid in "${PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for _ in $(seq 1 30); do
        alive=0
        for pid in "${PIDS[@]}"; do
            if running "$pid"; then
                alive=1
                break
            fi
        done
        (( alive )) || break
        sleep 0.1
    done
    for pid in "${PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    PIDS=()
}
cleanup() {
    stop_processes
    rm -rf "$PREFIX_ROOT"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_replica LOG: the reference binary (defaults, but for --drain-delay-secs 0: it stops
# at once instead of after 5 s of /readyz 503s, which only shutdown sees) pinned to the
# server CPU on 127.0.0.1:0; sets REPLICA_PID and REPLICA_ADDR from its log's "address=".
start_replica() {
    local log=$1
    taskset -c "$SERVER_CPU" "$OURS_BIN" --listen 127.0.0.1:0 --drain-delay-secs 0 >"$log" 2>&1 &
    REPLICA_PID=$!
    PIDS+=("$REPLICA_PID")
    REPLICA_ADDR=
    for _ in $(seq 1 100); do
        REPLICA_ADDR=$(logged_addr "$log")
        [[ -n "$REPLICA_ADDR" ]] && return 0
        running "$REPLICA_PID" || break
        sleep 0.1
    done
    echo "replicas.sh: $OURS_BIN did not start; its output:" >&2
    cat "$log" >&2
    exit 1
}

# start_nginx NAME ADDR...: nginx pinned to the server CPU with deploy/nginx/nginx.conf,
# copied unchanged into a private prefix beside an upstream.conf listing ADDR... (the
# shipped file's other lines, keepalive included, kept) and a listen.conf with a free
# loopback port, as tests/it/support/cluster.rs does. Runs in the foreground of its own
# process (daemon off); sets NGINX_PID, NGINX_ADDR and NGINX_PROCS (master and workers).
start_nginx() {
    local name=$1 prefix conf port log servers="" a attempt
    shift
    for a in "$@"; do servers+="    server $a;"$'\n'; done
    for attempt in 1 2 3 4 5; do
        prefix=$PREFIX_ROOT/$name.$attempt
        conf=$prefix/conf
        mkdir -p "$conf"
        chmod 755 "$prefix" "$conf"
        cp "$ROOT/deploy/nginx/nginx.conf" "$conf/nginx.conf"
        awk -v servers="$servers" '
            /^[[:space:]]*server[[:space:]]/ { if (!done) { printf "%s", servers; done = 1 } next }
            { print }
            END { if (!done) exit 1 }' "$ROOT/deploy/nginx/upstream.conf" >"$conf/upstream.conf" ||
            { echo "replicas.sh: deploy/nginx/upstream.conf has no server lines" >&2; exit 1; }
        # A port below the ephemeral range (32768-) that nothing listens on yet.
        port=$(( 20000 + RANDOM % 12000 ))
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
        printf 'listen 127.0.0.1:%d;\n' "$port" >"$conf/listen.conf"
        log=$WORK/nginx.$name.log
        taskset -c "$SERVER_CPU" "$NGINX" -e stderr -p "$prefix" -c "$conf/nginx.conf" -g 'daemon off;' >"$log" 2>&1 &
        NGINX_PID=$!
        PIDS+=("$NGINX_PID")
        for _ in $(seq 1 100); do
            running "$NGINX_PID" || break
            if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                NGINX_ADDR=127.0.0.1:$port
                # The workers: the master's children (no cache manager: no proxy_cache_path).
                # The listener accepts before they are all forked: wait until the set holds
                # still for 0.3 s.
                local workers="" seen="" same=0
                for _ in $(seq 1 50); do
                    workers=$(pgrep -P "$NGINX_PID" | tr '\n' ' ' || true)
                    if [[ -n "$workers" && "$workers" == "$seen" ]]; then
                        same=$(( same + 1 ))
                        (( same >= 3 )) && break
                    else
                        same=0 seen=$workers
                    fi
                    sleep 0.1
                done
                [[ -n "$workers" ]] || { echo "replicas.sh: nginx ($name) has no workers" >&2; cat "$log" >&2; exit 1; }
                NGINX_PROCS="$NGINX_PID ${workers% }"
                # Workers are stopped by their master; listed too in case it dies first.
                # shellcheck disable=SC2206
                PIDS+=($workers)
                return 0
            fi
            sleep 0.1
        done
        kill -TERM "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
        grep -q 'Address already in use' "$log" || break
    done
    echo "replicas.sh: nginx ($name) did not start; its output:" >&2
    cat "$log" >&2
    exit 1
}

# ticks_of PIDS...: utime + stime of each process (all its threads), in clock ticks.
ticks_of() {
    local pid
    for pid in "$@"; do cpu_ticks "$pid"; done | tr '\n' ' '
}

# ---------------------------------------------------------------- request bodies
write_bodies

# load CASE CONFIG ADDR SECS REPLICA_PIDS NGINX_PIDS: one wrk run against ADDR; sets RUN_RESULT to "rps
# p50_us p99_us cpu_us_per_req nginx_cpu_us_per_req requests errors split", CPU being that
# of the replicas and nginx processes (space-separated lists, NGINX_PIDS may be empty)
# together, and split each replica's share of the replicas' CPU in % ("a/b/c", "-" for one).
# wrk runs in the background of this shell (not of a $(...) subshell) so that SIGINT or
# SIGTERM reaches the trap at once instead of after the run.
load() {
    local id=$1 config=$2 addr=$3 secs=$4 rpids=$5 npids=$6 body method name line rc=0 log
    local r0 r1 n0 n1
    IFS='|' read -r _ _ body method name <<<"$(printf '%s\n' "${SELECTED[@]}" | grep "^$id|")"
    log=$WORK/wrk.$id.$config.log
    # shellcheck disable=SC2086
    { r0=$(ticks_of $rpids); n0=$(ticks_of $npids); }
    LOAD_BODY=$WORK/$body LOAD_METHOD=$method LOAD_NAME=$name \
        taskset -c "$LOAD_CPU" wrk -t"$THREADS" -c"$CONNECTIONS" -d"${secs}s" --timeout 10s \
        -s "$HERE/mcp.lua" "http://$addr/mcp" >"$log" 2>&1 &
    WRK_PID=$!
    wait "$WRK_PID" || rc=$?
    WRK_PID=
    local pid
    for pid in $rpids $npids; do
        running "$pid" || {
            echo "replicas.sh: server process $pid ($config) exited during the $id run; logs in $WORK" >&2
            exit 1
        }
    done
    # shellcheck disable=SC2086
    { r1=$(ticks_of $rpids); n1=$(ticks_of $npids); }
    if (( rc != 0 )); then
        echo "replicas.sh: wrk failed against $config ($id):" >&2
        cat "$log" >&2
        exit 1
    fi
    line=$(grep '^LOAD_RESULT ' "$log") || {
        echo "replicas.sh: no LOAD_RESULT line from wrk:" >&2
        cat "$log" >&2
        exit 1
    }
    RUN_RESULT=$(awk -v line="$line" -v r0="$r0" -v r1="$r1" -v n0="$n0" -v n1="$n1" -v hz="$CLK_TCK" 'BEGIN {
        n = split(line, kv, " ")
        for (i = 2; i <= n; i++) { split(kv[i], p, "="); v[p[1]] = p[2] }
        nr = split(r0, a, " "); split(r1, b, " ")
        rt = 0; for (i = 1; i <= nr; i++) { d[i] = b[i] - a[i]; rt += d[i] }
        nn = split(n0, a, " "); split(n1, b, " ")
        nt = 0; for (i = 1; i <= nn; i++) nt += b[i] - a[i]
        split_ = "-"
        if (nr > 1) {
            split_ = ""
            for (i = 1; i <= nr; i++) split_ = split_ (i > 1 ? "/" : "") sprintf("%.0f", rt > 0 ? d[i] * 100 / rt : 0)
        }
        q = v["requests"] > 0 ? 1e6 / hz / v["requests"] : 0
        printf "%.1f %d %d %.1f %.1f %d %d %s\n", v["rps"], v["p50_us"], v["p99_us"], (rt + nt) * q, nt * q,
            v["requests"], v["non2xx"] + v["socket_errors"], split_
    }')
}

# ---------------------------------------------------------------- run
CONFIGS=(direct-1 nginx-1)
if (( REPLICAS > 1 )); then CONFIGS+=("nginx-$REPLICAS"); fi
RAW=$OUT/replicas.tsv
printf 'case\tconfiguration\tround\trps\tp50_us\tp99_us\tcpu_us_per_req\tnginx_cpu_us_per_req\trequests\terrors\treplica_cpu_split_pct\n' >"$RAW"
PROCS=$WORK/processes.tsv
: >"$PROCS"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
TOTAL=$(( ${#SELECTED[@]} * ${#CONFIGS[@]} * (ROUNDS * DURATION + WARMUP) ))
echo "== ${#SELECTED[@]} case(s) x ${#CONFIGS[@]} configurations (${CONFIGS[*]}) x $ROUNDS rounds x ${DURATION}s," \
    "$CONNECTIONS connections, wrk -t$THREADS on CPU $LOAD_CPU, replicas and nginx on CPU $SERVER_CPU" \
    "(about ${TOTAL}s of load); load average $LOAD_BEFORE" >&2

for spec in "${SELECTED[@]}"; do
    IFS='|' read -r id title _ _ _ <<<"$spec"
    replica_pids=() replica_addrs=()
    for r in $(seq 1 "$REPLICAS"); do
        start_replica "$WORK/replica$r.$id.log"
        replica_pids+=("$REPLICA_PID") replica_addrs+=("$REPLICA_ADDR")
    done
    declare -A ADDR=() RPIDS=() NPIDS=()
    ADDR[direct-1]=${replica_addrs[0]} RPIDS[direct-1]=${replica_pids[0]} NPIDS[direct-1]=""
    start_nginx "$id.nginx-1" "${replica_addrs[0]}"
    ADDR[nginx-1]=$NGINX_ADDR RPIDS[nginx-1]=${replica_pids[0]} NPIDS[nginx-1]=$NGINX_PROCS
    nginx_workers=$(( $(wc -w <<<"$NGINX_PROCS") - 1 ))
    if (( REPLICAS > 1 )); then
        start_nginx "$id.nginx-$REPLICAS" "${replica_addrs[@]}"
        ADDR[nginx-$REPLICAS]=$NGINX_ADDR RPIDS[nginx-$REPLICAS]="${replica_pids[*]}" NPIDS[nginx-$REPLICAS]=$NGINX_PROCS
    fi
    for config in "${CONFIGS[@]}"; do
        size=$(check_response "$id" "${ADDR[$config]}" "$config")
        printf '%s\t%s\t%s\t%s\n' "$id" "$config" "${RPIDS[$config]}" "${NPIDS[$config]}" >>"$PROCS"
        echo "-- $title, $config on ${ADDR[$config]} (answer $size B; CPU of replica pids ${RPIDS[$config]}${NPIDS[$config]:+, nginx pids ${NPIDS[$config]}})" >&2
    done
    if (( WARMUP > 0 )); then
        for config in "${CONFIGS[@]}"; do
            load "$id" "$config" "${ADDR[$config]}" "$WARMUP" "${RPIDS[$config]}" "${NPIDS[$config]}"
        done
    fi
    for round in $(seq 1 "$ROUNDS"); do
        # Rotate the order: round 1 starts with the first configuration, round 2 with the second…
        order=()
        for k in $(seq 0 $(( ${#CONFIGS[@]} - 1 ))); do
            order+=("${CONFIGS[(k + round - 1) % ${#CONFIGS[@]}]}")
        done
        for config in "${order[@]}"; do
            load "$id" "$config" "${ADDR[$config]}" "$DURATION" "${RPIDS[$config]}" "${NPIDS[$config]}"
            read -r rps p50 p99 cpu ncpu n errs split <<<"$RUN_RESULT"
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$config" "$round" "$rps" "$p50" "$p99" "$cpu" "$ncpu" "$n" "$errs" "$split" >>"$RAW"
            note=""
            if (( errs > 0 )); then note="  ERRORS $errs"; fi
            if [[ "$split" != - ]]; then note="  replicas' CPU split $split %$note"; fi
            printf '   round %d %-9s %10.1f req/s  p50 %6d us  p99 %6d us  %7.1f CPU us/req (nginx %5.1f)%s\n' \
                "$round" "$config" "$rps" "$p50" "$p99" "$cpu" "$ncpu" "$note" >&2
        done
    done
    stop_processes
    rm -rf "${PREFIX_ROOT:?}"/*
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- report
CPU_MODEL=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=""
if git status --porcelain --untracked-files=no 2>/dev/null | grep -q .; then DIRTY=" (with uncommitted changes)"; fi
NGINX_VERSION=$("$NGINX" -v 2>&1 | sed 's/^nginx version: //')
N=$REPLICAS
{
    echo "# Load benchmark: $N replicas behind nginx, 1 replica behind nginx, 1 replica direct"
    echo
    echo "$STARTED, commit $COMMIT$DIRTY; $CPUS CPUs ($CPU_MODEL); load average $LOAD_AT_START at start (before the build), $LOAD_BEFORE when the load began, $LOAD_AFTER at the end (this run's own load counts)."
    echo "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s --timeout 10s on CPU $LOAD_CPU; $ROUNDS rounds per case after a ${WARMUP}s warm-up per configuration, configurations alternating (order rotated each round)."
    echo "Replicas: \`target/release/stateless-mcp\` (defaults: memory stores; \`--drain-delay-secs 0\` to stop at once), fresh for each case; nginx $NGINX_VERSION with the shipped \`deploy/nginx/nginx.conf\` (keep-alive to the replicas; $nginx_workers worker(s), \`worker_processes auto\`)."
    echo "CPU placement: every server-side process (all replicas, nginx master and workers) pinned to CPU $SERVER_CPU, wrk to CPU $LOAD_CPU."
    echo "So the servers share one core in every configuration: nginx-$N against nginx-1 shows what spreading one core's work over $N processes costs, not scaling (this machine cannot show scaling); nginx-1 against direct-1 shows what the proxy hop costs."
    echo
    echo "direct-1: wrk straight to replica 1; nginx-1: wrk to nginx, upstream replica 1; nginx-$N: wrk to nginx, upstream replicas 1-$N (round robin)."
    echo "req/s: median (min-max) over rounds; p50, p99 and CPU: medians over rounds; CPU µs/req: user+system time of the replicas in the configuration plus nginx's master and workers, per request (of which nginx: its master and workers alone);"
    echo "server core busy: CPU µs/req × req/s, near 100% when the shared server core was the limit (well under: the load generator was)."
    echo "Ratios: req/s median of the configuration over that of direct-1 and of nginx-1 (below 1: slower)."
    echo
    echo "| case | configuration | req/s (min-max) | p50 ms | p99 ms | CPU µs/req | of which nginx | server core busy | req/s / direct-1 | req/s / nginx-1 |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for spec in "${SELECTED[@]}"; do
        IFS='|' read -r id title _ _ _ <<<"$spec"
        awk -F'\t' -v id="$id" -v title="$title" -v configs="${CONFIGS[*]}" '
        function median(a, n,    i, j, t) {
            for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        NR > 1 && $1 == id {
            w = $2; k = ++n[w]
            rps[w, k] = $4; p50[w, k] = $5; p99[w, k] = $6; cpu[w, k] = $7; ncpu[w, k] = $8; errs[w] += $10
        }
        END {
            nc = split(configs, who, " ")
            for (x = 1; x <= nc; x++) {
                w = who[x]; m = n[w]; lo = ""; hi = ""
                for (k = 1; k <= m; k++) {
                    a[k] = rps[w, k] + 0; b[k] = p50[w, k] + 0; c[k] = p99[w, k] + 0; d[k] = cpu[w, k] + 0; e[k] = ncpu[w, k] + 0
                    if (lo == "" || a[k] < lo) lo = a[k]; if (hi == "" || a[k] > hi) hi = a[k]
                }
                mr[w] = median(a, m)
                for (k = 1; k <= m; k++) a[k] = b[k]; mp50[w] = median(a, m)
                for (k = 1; k <= m; k++) a[k] = c[k]; mp99[w] = median(a, m)
                for (k = 1; k <= m; k++) a[k] = d[k]; mcpu[w] = median(a, m)
                for (k = 1; k <= m; k++) a[k] = e[k]; mncpu[w] = median(a, m)
                rng[w] = sprintf("%.0f (%.0f-%.0f)", mr[w], lo, hi)
            }
            for (x = 1; x <= nc; x++) {
                w = who[x]
                note = errs[w] > 0 ? sprintf(" **%d errors**", errs[w]) : ""
                r1 = mr["direct-1"] > 0 ? sprintf("%.2f", mr[w] / mr["direct-1"]) : "-"
                r2 = mr["nginx-1"] > 0 ? sprintf("%.2f", mr[w] / mr["nginx-1"]) : "-"
                printf "| %s | %s%s | %s | %.2f | %.2f | %.1f | %.1f | %.0f%% | %s | %s |\n", (x == 1 ? title : ""), w, note, rng[w],
                    mp50[w] / 1000, mp99[w] / 1000, mcpu[w], mncpu[w], mcpu[w] * mr[w] / 1e4, r1, r2
            }
        }' "$RAW"
    done
    echo
    echo "Per-round figures: \`target/load/replicas.tsv\`; wrk, replica and nginx output: \`target/load/work/replicas/\`."
} >"$OUT/replicas.md"

echo >&2
cat "$OUT/replicas.md"
