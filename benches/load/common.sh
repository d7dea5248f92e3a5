# Shared by run.sh and callgrind.sh (sourced, after ROOT, WORK and BUILD are set): the
# binaries, the request bodies and cases, and reading a server's address from its log.

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
