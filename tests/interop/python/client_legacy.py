#!/usr/bin/env python3
"""Interop client for a legacy (2025-11-25) session: the official MCP Python SDK in its
handshake mode, as most Python hosts in use still run it.

Usage:
    python client_legacy.py URL RECORD_FILE

Requires the official MCP Python SDK, pinned in requirements.txt beside this file
(`mcp==2.3.0`), and a server with the conformance fixtures (`stateless-mcp --fixtures
conformance`). RECORD_FILE receives every JSON-RPC message the server sent to the SDK (one
JSON object a line: {"answers": method or null, "via": "POST"|"GET", "message": ...}) for
the caller to validate against the 2025-11-25 schema.

    initialize           Client(mode="legacy"): initialize without MCP-Protocol-Version,
                         the negotiated version is 2025-11-25, serverInfo and the tools /
                         resources.subscribe / logging capabilities; an Mcp-Session-Id was
                         issued (visible ASCII) and every later request carries it;
                         notifications/initialized answered 202
    ping                 ping answers exactly {}
    list_tools           tools/list, every page (the cursors of one replica continued on
                         others), contains the conformance tools, each with an inputSchema
    call_tool            tools/call test_simple_text returns its text
    elicitation          tools/call test_input_required_result_elicitation: the server sends
                         elicitation/create on the call's SSE stream, the SDK's
                         elicitation_callback answers in a separate POST (202), the call
                         completes with "Hello, <name>!" (one tools/call on the wire: the
                         server resumed the handler itself)
    sampling             the same with sampling/createMessage through sampling_callback
    roots                the same with roots/list through list_roots_callback
    logging              set_logging_level("debug") answers exactly {}; test_logging_tool's
                         info log reaches logging_callback; after set_logging_level("error")
                         it does not
    subscribe            resources/subscribe and resources/unsubscribe of
                         test://watched-resource succeed
    tools_list_changed   after tools/call test_trigger_tool_change, a
                         notifications/tools/list_changed reaches message_handler, having
                         arrived on the SDK's GET stream (opened with the session id, 200)
    terminate            leaving the Client sends DELETE with the session id, answered 2xx;
                         a request with the old session id then answers 404
    no_sdk_errors        no exception reached message_handler and the SDK logged nothing at
                         WARNING or above

One line per step (`ok <step>` / `FAIL <step>: reason`), then `N passed, M failed`.
Exit status 0 only if every step passed. Every network call has a 10 s timeout.

SDK notes (mcp 2.3.0):
- `Client(url, mode="legacy")` runs the initialize handshake (byte-identical pre-2026
  behaviour); "auto" would probe server/discover first and take the modern path.
- With a callback given, the SDK declares the matching client capability in initialize.
- Leaving `streamable_http_client` sends DELETE (terminate_on_close=True by default).
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2  # the SDK's own HTTP client (a dependency of mcp 2.3.0)
import mcp_types as types
from mcp import Client

import interop_common
from interop_common import (
    ROOTS,
    SAMPLING_MODEL,
    TIMEOUT_S,
    USER_NAME,
    ClientRun,
    all_tools,
    check,
    check_capital_question,
    net,
    only_text,
    run_in_session,
)
from mcp.client.streamable_http import streamable_http_client

PROTOCOL_VERSION = "2025-11-25"
OVERALL_TIMEOUT_S = 120.0
WATCHED_RESOURCE = "test://watched-resource"
SESSION_HEADER = "mcp-session-id"


def sse_payloads(text: str) -> list[str]:
    """The `data:` payloads of complete SSE events (events without data skipped)."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")]
        if data and "\n".join(data) != "":
            out.append("\n".join(data))
    return out


class Exchange:
    """One HTTP request the SDK sent: method, headers, parsed body, response status."""

    def __init__(self, request: httpx2.Request) -> None:
        self.method = request.method
        self.headers = request.headers
        self.body: Any = None
        if request.method == "POST":
            try:
                self.body = json.loads(request.content)
            except (ValueError, httpx2.RequestNotRead) as e:
                self.body = {"unreadable": repr(e)}
        self.status: int | None = None
        self.response_headers: httpx2.Headers | None = None


class RecordingStream(httpx2.AsyncByteStream):
    """A response body passed through to the SDK while its JSON-RPC messages are recorded."""

    def __init__(self, inner: httpx2.AsyncByteStream, run: Run, exchange: Exchange, content_type: str) -> None:
        self.inner = inner
        self.run = run
        self.exchange = exchange
        self.sse = content_type.startswith("text/event-stream")
        self.json = content_type.startswith("application/json")
        self.text = ""

    def push(self, payload: str) -> None:
        message = json.loads(payload)
        body = self.exchange.body if isinstance(self.exchange.body, dict) else {}
        answers = body.get("method") if "method" not in message and "id" in body else None
        self.run.received.append({"answers": answers, "via": self.exchange.method, "message": message})

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.text += chunk.decode("utf-8", errors="replace")
            if self.sse and "\n\n" in self.text.replace("\r\n", "\n"):
                text = self.text.replace("\r\n", "\n")
                cut = text.rindex("\n\n")
                for payload in sse_payloads(text[:cut]):
                    self.push(payload)
                self.text = text[cut + 2 :]
            yield chunk

    async def aclose(self) -> None:
        if self.sse:
            for payload in sse_payloads(self.text):
                self.push(payload)
        elif self.json and self.text.strip():
            self.push(self.text)
        self.text = ""
        await self.inner.aclose()


class RecordingTransport(httpx2.AsyncBaseTransport):
    """The SDK's HTTP transport, recording every request, status and server message."""

    def __init__(self, run: Run) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.run = run

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        exchange = Exchange(request)
        self.run.wire.append(exchange)
        response = await self.inner.handle_async_request(request)
        exchange.status = response.status_code
        exchange.response_headers = response.headers
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=RecordingStream(stream, self.run, exchange, response.headers.get("content-type", "")),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


# The SDK warns that setLevel and subscribe are gone in 2026-07-28; this client uses them on
# purpose, as legacy hosts do.
warnings.filterwarnings("ignore", message=r".*(deprecated|removed) as of 2026-07-28")


class Run(ClientRun):
    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.wire: list[Exchange] = []  # every HTTP request the SDK sent
        self.received: list[dict[str, Any]] = []  # every server message the SDK got
        self.session_id: str | None = None

    # ---- the SDK callbacks (the input requests' in ClientRun) ---------------

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    # ---- checks ------------------------------------------------------------

    def sent(self, start: int, method: str) -> list[Exchange]:
        return [
            w for w in self.wire[start:] if isinstance(w.body, dict) and w.body.get("method") == method and "id" in w.body
        ]

    async def response_to(self, start: int, method: str) -> Any:
        """The recorded response to the SDK's `method` request sent after `start`."""
        sent = self.sent(start, method)
        check(len(sent) == 1, f"the SDK sent {len(sent)} {method} requests")
        rid = sent[0].body["id"]

        def find() -> Any:
            for r in self.received:
                if r["answers"] == method and r["message"].get("id") == rid:
                    return r["message"]
            return None

        with anyio.move_on_after(TIMEOUT_S):
            while find() is None:
                await anyio.sleep(0.01)
        check(find() is not None, f"no recorded response to {method}")
        return find()

    async def check_server_resumed(self, start: int, received: int, name: str, kinds: list[str]) -> None:
        """One tools/call of `name` on the wire (the server resumed the handler itself), each
        server request on its stream answered by a POST that got 202."""
        calls = [w for w in self.sent(start, "tools/call") if w.body["params"].get("name") == name]
        check(len(calls) == 1, f"the SDK sent {len(calls)} tools/call for {name}, expected 1")
        answers = [
            w for w in self.wire[start:] if isinstance(w.body, dict) and "method" not in w.body and "id" in w.body
        ]
        check(len(answers) == len(kinds), f"the SDK answered {len(answers)} server requests, expected {len(kinds)}")
        # The call's result may reach the SDK before the 202 of its last answer does.
        with anyio.move_on_after(TIMEOUT_S):
            while any(a.status is None for a in answers):
                await anyio.sleep(0.01)
        for a in answers:
            check(a.status == 202, f"an answer POST got HTTP {a.status}, expected 202")
            check(a.headers.get(SESSION_HEADER) == self.session_id, "an answer POST without the session id")
        ids = {json.dumps(a.body["id"]) for a in answers}
        requests = sorted(
            r["message"]["method"]
            for r in self.received[received:]
            if "method" in r["message"] and json.dumps(r["message"].get("id")) in ids
        )
        check(requests == sorted(kinds), f"server requests answered: {requests!r}, expected {sorted(kinds)!r}")

    # ---- steps -------------------------------------------------------------

    async def step_initialize(self, client: Client) -> None:
        check(client.protocol_version == PROTOCOL_VERSION, f"negotiated {client.protocol_version!r}")
        result = client.session.initialize_result
        check(result is not None, "no initialize result")
        assert result is not None
        check(bool(result.server_info.name), "no serverInfo.name")
        caps = result.capabilities
        check(caps.tools is not None and caps.tools.list_changed is True, f"tools.listChanged: {caps.tools!r}")
        check(caps.resources is not None and caps.resources.subscribe is True, f"resources: {caps.resources!r}")
        check(caps.logging is not None, "logging not advertised")
        init = self.sent(0, "initialize")
        check(len(init) == 1, f"{len(init)} initialize requests")
        check("mcp-protocol-version" not in init[0].headers, "initialize carried MCP-Protocol-Version")
        # The SDK sends notifications/initialized in the background; it carries the session id
        # the initialize response issued, as every later request does.
        def initialized() -> list[Exchange]:
            return [
                w
                for w in self.wire
                if isinstance(w.body, dict) and w.body.get("method") == "notifications/initialized"
            ]

        with anyio.move_on_after(TIMEOUT_S):
            while not initialized() or initialized()[0].status is None:
                await anyio.sleep(0.01)
        sent = initialized()
        check(len(sent) == 1, f"{len(sent)} notifications/initialized sent, expected 1")
        check(sent[0].status == 202, f"notifications/initialized answered HTTP {sent[0].status}")
        sid = sent[0].headers.get(SESSION_HEADER)
        check(sid is not None and all(0x21 <= ord(c) <= 0x7E for c in sid), f"session id {sid!r}")
        issued = init[0].response_headers.get(SESSION_HEADER) if init[0].response_headers else None
        check(sid == issued, f"the SDK sent session id {sid!r}, initialize issued {issued!r}")
        self.session_id = sid

    async def step_ping(self, client: Client) -> None:
        start = len(self.wire)
        await net(client.send_ping())
        response = await self.response_to(start, "ping")
        check(response.get("result") == {}, f"ping answered {response!r}, expected exactly {{}}")

    async def step_list_tools(self, client: Client) -> None:
        start = len(self.wire)
        tools = await all_tools(client)
        names = [t.name for t in tools]
        for name in ("test_simple_text", "test_input_required_result_elicitation", "test_logging_tool"):
            check(name in names, f"tools/list lacks {name}: {names!r}")
        for t in tools:
            check(t.input_schema.get("type") == "object", f"{t.name} has no object inputSchema")
        for w in self.sent(start, "tools/list"):
            check(w.headers.get(SESSION_HEADER) == self.session_id, "tools/list without the session id")
            check(w.headers.get("mcp-protocol-version") == PROTOCOL_VERSION, "tools/list without the version")

    async def step_call_tool(self, client: Client) -> None:
        result = await net(client.call_tool("test_simple_text", {}))
        text = only_text(result.content, "test_simple_text")
        check(text == "This is a simple text response for testing.", f"result text {text!r}")

    async def call_answered(self, client: Client, name: str, kinds: list[str]) -> str:
        start, received = len(self.wire), len(self.received)
        result = await net(client.call_tool(name, {}))
        check(not result.is_error, f"isError=true: {result.content!r}")
        text = only_text(result.content, name)
        await self.check_server_resumed(start, received, name, kinds)
        return text

    async def step_elicitation(self, client: Client) -> None:
        text = await self.call_answered(client, "test_input_required_result_elicitation", ["elicitation/create"])
        check(text == f"Hello, {USER_NAME}!", f"result text {text!r}")
        asked = self.take_asked()
        check([k for k, _ in asked] == ["elicitation"], f"callbacks asked: {[k for k, _ in asked]!r}")
        params = asked[0][1]
        check(isinstance(params, types.ElicitRequestFormParams), f"not a form elicitation: {params!r}")
        check(params.message == "What is your name?", f"elicitation message {params.message!r}")

    async def step_sampling(self, client: Client) -> None:
        text = await self.call_answered(client, "test_input_required_result_sampling", ["sampling/createMessage"])
        check(SAMPLING_MODEL in text, f"result text {text!r} does not name {SAMPLING_MODEL!r}")
        check_capital_question(self.take_asked())

    async def step_roots(self, client: Client) -> None:
        text = await self.call_answered(client, "test_input_required_result_list_roots", ["roots/list"])
        check(f"{len(ROOTS)} root(s)" in text, f"result text {text!r}")
        asked = self.take_asked()
        check([k for k, _ in asked] == ["roots"], f"callbacks asked: {[k for k, _ in asked]!r}")

    async def step_logging(self, client: Client) -> None:
        start = len(self.wire)
        await net(client.set_logging_level("debug"))
        response = await self.response_to(start, "logging/setLevel")
        check(response.get("result") == {}, f"logging/setLevel answered {response!r}, expected exactly {{}}")
        before = len(self.logs)
        result = await net(client.call_tool("test_logging_tool", {}))
        check(not result.is_error, f"isError=true: {result.content!r}")
        with anyio.move_on_after(TIMEOUT_S):
            while len(self.logs) == before:
                await anyio.sleep(0.01)
        check(len(self.logs) == before + 1, f"{len(self.logs) - before} logs after setLevel debug, expected 1")
        log = self.logs[before]
        check(log.level == "info", f"log level {log.level!r}")
        check(log.data == "logging tool called", f"log data {log.data!r}")
        await net(client.set_logging_level("error"))
        quiet = len(self.logs)
        result = await net(client.call_tool("test_logging_tool", {}))
        check(not result.is_error, f"isError=true: {result.content!r}")
        await anyio.sleep(0.2)
        check(len(self.logs) == quiet, f"an info log arrived after setLevel error: {self.logs[quiet:]!r}")

    async def step_subscribe(self, client: Client) -> None:
        await net(client.subscribe_resource(WATCHED_RESOURCE))
        await net(client.unsubscribe_resource(WATCHED_RESOURCE))

    async def step_tools_list_changed(self, client: Client) -> None:
        gets = [w for w in self.wire if w.method == "GET"]
        check(gets, "the SDK opened no GET stream")
        check(gets[0].status == 200, f"the GET stream answered HTTP {gets[0].status}")
        check(gets[0].headers.get(SESSION_HEADER) == self.session_id, "the GET carried no session id")

        def changed() -> list[Any]:
            return [n for n in self.notifications if getattr(n, "method", None) == "notifications/tools/list_changed"]

        before = len(changed())
        result = await net(client.call_tool("test_trigger_tool_change", {}))
        check(not result.is_error, f"isError=true: {result.content!r}")
        with anyio.move_on_after(TIMEOUT_S):
            while len(changed()) == before:
                await anyio.sleep(0.01)
        check(len(changed()) > before, "no notifications/tools/list_changed reached message_handler")
        on_get = [
            r for r in self.received if r["via"] == "GET" and r["message"].get("method") == "notifications/tools/list_changed"
        ]
        check(on_get, "the tools/list_changed notification did not arrive on the GET stream")

    async def step_terminate(self) -> None:
        deletes = [w for w in self.wire if w.method == "DELETE"]
        check(len(deletes) == 1, f"the SDK sent {len(deletes)} DELETE requests, expected 1")
        check(deletes[0].headers.get(SESSION_HEADER) == self.session_id, "DELETE without the session id")
        check(deletes[0].status is not None and 200 <= deletes[0].status < 300, f"DELETE answered HTTP {deletes[0].status}")
        check(self.session_id is not None, "no session id")
        assert self.session_id is not None
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(TIMEOUT_S)) as http:
            response = await http.post(
                self.url,
                headers={
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                    "mcp-protocol-version": PROTOCOL_VERSION,
                    SESSION_HEADER: self.session_id,
                },
                content=json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {}}),
            )
        check(response.status_code == 404, f"tools/list on the ended session answered HTTP {response.status_code}")

    # ---- driver ------------------------------------------------------------

    async def run(self) -> None:
        steps: list[tuple[str, Callable[[Client], Awaitable[None]]]] = [
            ("initialize", self.step_initialize),
            ("ping", self.step_ping),
            ("list_tools", self.step_list_tools),
            ("call_tool", self.step_call_tool),
            ("elicitation", self.step_elicitation),
            ("sampling", self.step_sampling),
            ("roots", self.step_roots),
            ("logging", self.step_logging),
            ("subscribe", self.step_subscribe),
            ("tools_list_changed", self.step_tools_list_changed),
        ]
        self.order = [name for name, _ in steps] + ["terminate", "no_sdk_errors"]

        @asynccontextmanager
        async def session() -> AsyncIterator[Client]:
            async with httpx2.AsyncClient(
                timeout=httpx2.Timeout(TIMEOUT_S, read=300.0), transport=RecordingTransport(self)
            ) as http:
                async with Client(
                    streamable_http_client(self.url, http_client=http),
                    mode="legacy",
                    read_timeout_seconds=TIMEOUT_S,
                    cache=None,
                    client_info=types.Implementation(name="interop-legacy", version="0.1.0"),
                    elicitation_callback=self.on_elicit,
                    sampling_callback=self.on_sample,
                    list_roots_callback=self.on_roots,
                    logging_callback=self.on_log,
                    message_handler=self.on_message,
                ) as client:
                    yield client

        await run_in_session(self, session(), steps, before_each=self.take_asked)
        await self.record_step("terminate", net(self.step_terminate()))
        self.record_sdk_errors()


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(f"usage: {argv[0]} URL RECORD_FILE", file=sys.stderr)
        return 2
    run = Run(argv[1])
    try:
        return anyio.run(interop_common.run_steps, run, OVERALL_TIMEOUT_S)
    finally:
        with open(argv[2], "w", encoding="utf-8") as f:
            for r in run.received:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
