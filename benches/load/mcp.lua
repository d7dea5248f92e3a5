-- wrk script of the load benchmark: one MCP request (2026-07-28), sent over and over.
--
-- Configured through the environment (run.sh sets it):
--   LOAD_BODY    file holding the JSON-RPC request body
--   LOAD_METHOD  value of the Mcp-Method header
--   LOAD_NAME    value of the Mcp-Name header (tools/call), empty for none
-- done() prints one line that run.sh parses:
--   LOAD_RESULT requests=N duration_us=D rps=R p50_us=P p99_us=Q non2xx=E socket_errors=S

local function read_file(path)
  local f = assert(io.open(path, "rb"), "cannot open " .. tostring(path))
  local s = f:read("*a")
  f:close()
  return s
end

local body_file = os.getenv("LOAD_BODY")
local method = os.getenv("LOAD_METHOD")
local name = os.getenv("LOAD_NAME") or ""
assert(body_file and body_file ~= "", "LOAD_BODY is not set")
assert(method and method ~= "", "LOAD_METHOD is not set")

wrk.method = "POST"
wrk.body = read_file(body_file)
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = method
if name ~= "" then
  wrk.headers["Mcp-Name"] = name
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "LOAD_RESULT requests=%d duration_us=%d rps=%.1f p50_us=%d p99_us=%d non2xx=%d socket_errors=%d\n",
    summary.requests,
    summary.duration,
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50),
    latency:percentile(99),
    e.status,
    e.connect + e.read + e.write + e.timeout))
end
