# shellcheck shell=bash disable=SC2034
# Shared by the scripts of benches/load (sourced; build_binaries and write_bodies need ROOT
# and WORK set): the binaries, the request bodies and cases, reading a server's address from
# its log, wrk, a process's CPU time, checking an answer, and the options and machine checks
# run.sh and replicas.sh share.

# build_binaries: the release binaries the scripts load (unless BUILD=0), and their paths;
# with BIN_DIR set (--bin-dir), the three binaries kept in that folder from another build
# (for before/after comparisons) instead.
build_binaries() {
    if (( BUILD )); then
        echo "== cargo build --release --features reference-server --bin stateless-mcp --example bare_axum_baseline --example load_server" >&2
        cargo build --release --features reference-server --bin stateless-mcp --example bare_axum_baseline --example load_server
    fi
    OURS_BIN=$ROOT/target/release/stateless-mcp
    LIST_BIN=$ROOT/target/release/examples/load_server
    BASE_BIN=$ROOT/target/release/examples/bare_axum_baseline
    if [[ -n "${BIN_DIR:-}" ]]; then
        OURS_BIN=$BIN_DIR/stateless-mcp LIST_BIN=$BIN_DIR/load_server BASE_BIN=$BIN_DIR/bare_axum_baseline
    fi
}

# stop_server_on_exit: on exit, stops the one server process in $PID, if any.
stop_server_on_exit() {
    PID=
    trap 'if [[ -n "$PID" ]]; then kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi' EXIT
}

# write_bodies: the request bodies (full 2026-07-28 _meta) into $WORK, and for the echo
# cases the text the answer must contain (*.expect).
write_bodies() {
    local meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"load-bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}'
    local echo_text="hello from the load benchmark" big_text
    big_text=$(head -c 102400 /dev/zero | tr '\0' 'x')
    printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"},%s}}' \
        "$echo_text" "$meta" >"$WORK/echo.json"
    printf '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{%s}}' "$meta" >"$WORK/list.json"
    printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"},%s}}' \
        "$big_text" "$meta" >"$WORK/echo100k.json"
    printf '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{%s}}' "$meta" >"$WORK/discover.json"
    printf '"text":"%s"' "$echo_text" >"$WORK/echo.expect"
    printf '"text":"%s"' "$big_text" >"$WORK/echo100k.expect"
}

# case id | title | body | Mcp-Method | Mcp-Name
CASES=(
    "echo|tools/call echo|echo.json|tools/call|echo"
    "list|tools/list, 100 tools|list.json|tools/list|"
    "echo100k|tools/call echo, 100 KB text|echo100k.json|tools/call|echo"
    "discover|server/discover|discover.json|server/discover|"
)

# logged_addr LOG: the 127.0.0.1:PORT a server logged ("listening on" from the baseline and
# load_server, "address=" from stateless-mcp), or nothing yet.
logged_addr() {
    sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -oE '(listening on |address=)127\.0\.0\.1:[0-9]+' |
        head -n1 | grep -oE '127\.0\.0\.1:[0-9]+' || true
}

# started_addr LOG WHAT: the 127.0.0.1:PORT the server process $PID logged in LOG, waited
# for up to a minute; if it exits first or logs none, says that WHAT did not start (with its
# log) and fails.
started_addr() {
    local log=$1 what=$2 addr=
    for _ in $(seq 1 300); do
        addr=$(logged_addr "$log")
        [[ -n "$addr" ]] && break
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.2
    done
    [[ -n "$addr" ]] || { echo "$PROG: $what did not start:" >&2; cat "$log" >&2; exit 1; }
    echo "$addr"
}

# The name error messages start with (the sourcing script's file name).
PROG=${PROG:-$(basename "$0")}

# need TOOL: whether TOOL is on the PATH.
need() { command -v "$1" >/dev/null 2>&1; }

# ensure_wrk: wrk on the PATH; installed with apt-get when missing and running as root,
# otherwise stops with an install hint.
ensure_wrk() {
    if ! need wrk; then
        if [[ $(id -u) -eq 0 ]] && need apt-get; then
            echo "== installing wrk (apt-get install -y wrk)" >&2
            DEBIAN_FRONTEND=noninteractive apt-get install -y wrk >/dev/null ||
                { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y wrk >/dev/null; } ||
                { echo "$PROG: could not install wrk" >&2; exit 1; }
        else
            echo "$PROG: wrk is missing; install it (Debian/Ubuntu: sudo apt-get install -y wrk)" >&2
            exit 1
        fi
    fi
}

# utime + stime of a process (all its threads), in clock ticks.
cpu_ticks() {
    sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}

# check_response CASE ADDR WHO: one request with curl; status 200, JSON, the expected
# shape. Prints the response size in bytes.
check_response() {
    local id=$1 addr=$2 who=$3 body method name resp status ctype
    IFS='|' read -r _ _ body method name <<<"$(printf '%s\n' "${CASES[@]}" | grep "^$id|")"
    resp=$WORK/$id.$who.response
    local args=(-sS -o "$resp" -w '%{http_code} %{content_type}' -X POST
        -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'
        -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $method"
        --data-binary "@$WORK/$body")
    [[ -n "$name" ]] && args+=(-H "Mcp-Name: $name")
    read -r status ctype <<<"$(curl "${args[@]}" "http://$addr/mcp")"
    fail() {
        echo "$PROG: $who's answer to $id is wrong: $1 (HTTP $status, $ctype); body starts:" >&2
        head -c 600 "$resp" >&2
        echo >&2
        exit 1
    }
    [[ "$status" == 200 ]] || fail "status is not 200"
    [[ "$ctype" == application/json* ]] || fail "Content-Type is not application/json"
    grep -q '"error"' "$resp" && fail "it is a JSON-RPC error"
    grep -q '"id":1[,}]' "$resp" || fail "no \"id\":1"
    case "$id" in
        echo|echo100k)
            grep -qF -f "$WORK/$id.expect" "$resp" || fail "the echoed text is missing"
            grep -q '"content":\[' "$resp" || fail "no content" ;;
        list)
            local n
            n=$(grep -oE '"name":"(echo|add|count|sleep|increment|tool_[0-9]{3})"' "$resp" | sort -u | wc -l)
            [[ "$n" == 100 ]] || fail "$n of the 100 tools listed"
            grep -q '"nextCursor"' "$resp" && fail "the list is paged" ;;
        discover)
            grep -q '"supportedVersions":\[[^]]*"2026-07-28"' "$resp" || fail "no supportedVersions with 2026-07-28"
            grep -q '"capabilities"' "$resp" || fail "no capabilities"
            grep -q 'serverInfo"' "$resp" || fail "no serverInfo" ;;
    esac
    wc -c <"$resp" | tr -d ' '
}

# The shared options' defaults, for what a script did not set before sourcing this file.
: "${DURATION:=10}" "${ROUNDS:=3}" "${CONNECTIONS:=64}" "${THREADS:=1}" "${WARMUP:=2}"
: "${SERVER_CPU:=0}" "${LOAD_CPU:=1}" "${BUILD:=1}"

# load_option OPTION VALUE: one of the options run.sh and replicas.sh share (--duration,
# --rounds, --connections, --threads, --warmup, --server-cpu, --load-cpu, --no-build): sets
# its variable and TAKEN (the words it used, 1 or 2); TAKEN=0 when OPTION is not one of them.
# Exits 2 on a bad value.
load_option() {
    local opt=$1 val=${2-}
    positive() { [[ "$val" =~ ^[1-9][0-9]*$ ]] || { echo "$PROG: $opt needs a positive integer, got '$val'" >&2; exit 2; }; }
    natural() { [[ "$val" =~ ^[0-9]+$ ]] || { echo "$PROG: $opt needs an integer >= 0, got '$val'" >&2; exit 2; }; }
    TAKEN=2
    case "$opt" in
        --duration) positive; DURATION=$val ;;
        --rounds) positive; ROUNDS=$val ;;
        --connections) positive; CONNECTIONS=$val ;;
        --threads) positive; THREADS=$val ;;
        --warmup) natural; WARMUP=$val ;;
        --server-cpu) natural; SERVER_CPU=$val ;;
        --load-cpu) natural; LOAD_CPU=$val ;;
        --no-build) BUILD=0; TAKEN=1 ;;
        *) TAKEN=0 ;;
    esac
}

# check_load_limits: the bounds of the shared options (exits 2 past one).
check_load_limits() {
    (( DURATION <= 600 )) || { echo "$PROG: --duration is at most 600" >&2; exit 2; }
    (( ROUNDS <= 20 )) || { echo "$PROG: --rounds is at most 20" >&2; exit 2; }
    (( CONNECTIONS <= 1000 )) || { echo "$PROG: --connections is at most 1000" >&2; exit 2; }
}

# check_machine: --server-cpu and --load-cpu exist (exits 1 if not; warns when they are the
# same); sets CPUS, CLK_TCK and LOAD_AT_START.
check_machine() {
    CPUS=$(nproc)
    if (( SERVER_CPU >= CPUS || LOAD_CPU >= CPUS )); then
        echo "$PROG: this machine has $CPUS CPU(s); --server-cpu $SERVER_CPU / --load-cpu $LOAD_CPU do not exist" >&2
        exit 1
    fi
    if (( SERVER_CPU == LOAD_CPU )); then
        echo "$PROG: warning: servers and load generator share CPU $SERVER_CPU" >&2
    fi
    CLK_TCK=$(getconf CLK_TCK)
    LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
}
