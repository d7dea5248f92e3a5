#!/usr/bin/env python3
"""Interop client for an MCP 2026-07-28 ("stateless") Streamable HTTP server.

Usage:
    python client_2026.py URL        e.g. python client_2026.py http://127.0.0.1:8080/mcp

Requires the official MCP Python SDK, pinned in requirements.txt beside this file
(`mcp==2.3.0`). Against a server whose demo toolset has an `echo` tool, at least one
resource and at least one prompt, it checks:

    discover              server/discover answers; supportedVersions contains 2026-07-28
    list_tools            tools/list contains `echo`
    call_echo             tools/call echo {"text": "hello from python"} returns that text
                          as one text content block
    list_resources        resources/list returns at least one resource
    read_resource         resources/read of the first resource returns contents
    list_prompts          prompts/list returns at least one prompt
    get_prompt            prompts/get of the first prompt (every required argument = "x")
                          returns messages
    unsupported_version_sdk   server/discover sent by the SDK at "1900-01-01" is rejected
                          with JSON-RPC -32022, data.supported and data.requested
    unsupported_version_http  the same request sent raw over HTTP: status 400, JSON body,
                          -32022, data.supported, data.requested, id echoed (the SDK hides
                          the HTTP status, so this step checks it directly)

One line per step (`ok <step>` / `FAIL <step>: reason`), then `N passed, M failed`.
Exit status 0 only if every step passed. Every network call has a 10 s timeout.

SDK notes (mcp 2.3.0):
- `Client(url, mode="2026-07-28")` pins the modern protocol without any wire traffic at
  connect (it installs a synthesized DiscoverResult). So `client.session.discover()`
  would return that synthesized result without asking the server; this script calls
  `client.session.send_discover(version)` instead, which always goes on the wire.
- `send_discover` is the only public SDK call that sends an arbitrary protocol version
  (the per-request stamp overwrites any `_meta` protocolVersion a caller supplies, and
  `mode=` accepts only versions the SDK knows).
- JSON-RPC errors come up as `mcp.MCPError` (`.code`, `.message`, `.data`), also for
  non-2xx HTTP responses whose body is a JSON-RPC error with Content-Type application/json.
- An MCPError that escapes the `async with Client(...)` block arrives wrapped in
  (nested) ExceptionGroups, so each step catches its errors inside the block.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx2  # the SDK's own HTTP client (a dependency of mcp 2.3.0)
import mcp_types as types
from mcp import Client, MCPError

import interop_common
from interop_common import TIMEOUT_S, CheckFailed, StepRun, all_tools, check, net, run_in_session

PROTOCOL_VERSION = "2026-07-28"
UNSUPPORTED_VERSION = "1900-01-01"
UNSUPPORTED_PROTOCOL_VERSION_CODE = -32022
ECHO_TEXT = "hello from python"
OVERALL_TIMEOUT_S = 180.0

T = TypeVar("T")


class Run(StepRun):
    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        # Data passed between steps.
        self.tools: list[types.Tool] = []
        self.resources: list[types.Resource] = []
        self.prompts: list[types.Prompt] = []

    # ---- steps over the SDK -------------------------------------------------

    async def step_discover(self, client: Client) -> None:
        raw = await net(client.session.send_discover(PROTOCOL_VERSION))
        check(isinstance(raw, dict), f"result is not an object: {raw!r}")
        result = types.DiscoverResult.model_validate(raw)  # ValidationError -> FAIL with the reason
        check(
            PROTOCOL_VERSION in result.supported_versions,
            f"supportedVersions {result.supported_versions!r} lacks {PROTOCOL_VERSION!r}",
        )
        # Install the real result in place of the synthesized one (no wire traffic).
        client.session.adopt(result)

    async def step_list_tools(self, client: Client) -> None:
        tools = await all_tools(client)
        self.tools = tools
        names = [t.name for t in tools]
        check("echo" in names, f"`echo` not in tools/list: {names!r}")

    async def step_call_echo(self, client: Client) -> None:
        result = await net(client.call_tool("echo", {"text": ECHO_TEXT}))
        check(not result.is_error, f"echo returned isError=true: {result.content!r}")
        check(len(result.content) == 1, f"expected 1 content block, got {len(result.content)}: {result.content!r}")
        block = result.content[0]
        check(isinstance(block, types.TextContent), f"content block is not text: {block!r}")
        assert isinstance(block, types.TextContent)
        check(block.text == ECHO_TEXT, f"echo returned {block.text!r}, expected {ECHO_TEXT!r}")

    async def step_list_resources(self, client: Client) -> None:
        page = await net(client.list_resources())
        self.resources = list(page.resources)
        check(len(self.resources) > 0, "resources/list returned no resources")

    async def step_read_resource(self, client: Client) -> None:
        check(len(self.resources) > 0, "no resource to read (resources/list gave none)")
        uri = str(self.resources[0].uri)
        result = await net(client.read_resource(uri))
        check(len(result.contents) > 0, f"resources/read {uri!r} returned no contents")
        for item in result.contents:
            if isinstance(item, types.TextResourceContents):
                check(item.text is not None, f"text contents of {uri!r} without text")
            elif isinstance(item, types.BlobResourceContents):
                check(item.blob is not None, f"blob contents of {uri!r} without blob")

    async def step_list_prompts(self, client: Client) -> None:
        page = await net(client.list_prompts())
        self.prompts = list(page.prompts)
        check(len(self.prompts) > 0, "prompts/list returned no prompts")

    async def step_get_prompt(self, client: Client) -> None:
        check(len(self.prompts) > 0, "no prompt to get (prompts/list gave none)")
        prompt = self.prompts[0]
        args = {a.name: "x" for a in (prompt.arguments or []) if a.required}
        result = await net(client.get_prompt(prompt.name, args))
        check(len(result.messages) > 0, f"prompts/get {prompt.name!r} returned no messages")

    async def step_unsupported_version_sdk(self, client: Client) -> None:
        try:
            raw = await net(client.session.send_discover(UNSUPPORTED_VERSION))
        except MCPError as e:
            check(
                e.code == UNSUPPORTED_PROTOCOL_VERSION_CODE,
                f"expected error code {UNSUPPORTED_PROTOCOL_VERSION_CODE}, got {e.code} ({e.message!r})",
            )
            check_unsupported_data(e.data)
            return
        raise CheckFailed(f"server accepted protocol version {UNSUPPORTED_VERSION!r}: {raw!r}")

    # ---- step over raw HTTP ------------------------------------------------

    async def step_unsupported_version_http(self) -> None:
        request_id = 4242
        body = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": UNSUPPORTED_VERSION,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "interop-client-2026-raw", "version": "0.1.0"},
                }
            },
        }
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": UNSUPPORTED_VERSION,
            "Mcp-Method": "server/discover",
        }
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(TIMEOUT_S)) as http:
            response = await net(http.post(self.url, json=body, headers=headers))
        check(response.status_code == 400, f"expected HTTP 400, got {response.status_code}: {response.text[:200]!r}")
        ctype = response.headers.get("content-type", "")
        check(
            ctype.lower().startswith("application/json"),
            f"expected Content-Type application/json, got {ctype!r}",
        )
        try:
            payload = response.json()
        except ValueError as e:
            raise CheckFailed(f"body is not JSON ({e}): {response.text[:200]!r}") from None
        check(isinstance(payload, dict), f"body is not a JSON object: {payload!r}")
        check(payload.get("jsonrpc") == "2.0", f"body lacks jsonrpc 2.0: {payload!r}")
        check("result" not in payload, f"body has a result: {payload!r}")
        # The id was readable, so it must be echoed; the SDK also drops bodies without an `id` member.
        check(payload.get("id") == request_id, f"expected id {request_id}, got {payload.get('id', '<missing>')!r}")
        error = payload.get("error")
        check(isinstance(error, dict), f"body has no error object: {payload!r}")
        assert isinstance(error, dict)
        check(
            error.get("code") == UNSUPPORTED_PROTOCOL_VERSION_CODE,
            f"expected error code {UNSUPPORTED_PROTOCOL_VERSION_CODE}, got {error.get('code')!r}",
        )
        check(isinstance(error.get("message"), str), f"error.message is not a string: {error!r}")
        check_unsupported_data(error.get("data"))

    # ---- driver ------------------------------------------------------------

    async def run(self) -> None:
        sdk_steps: list[tuple[str, Callable[[Client], Awaitable[None]]]] = [
            ("discover", self.step_discover),
            ("list_tools", self.step_list_tools),
            ("call_echo", self.step_call_echo),
            ("list_resources", self.step_list_resources),
            ("read_resource", self.step_read_resource),
            ("list_prompts", self.step_list_prompts),
            ("get_prompt", self.step_get_prompt),
            ("unsupported_version_sdk", self.step_unsupported_version_sdk),
        ]
        self.order = [name for name, _ in sdk_steps] + ["unsupported_version_http"]

        # cache=None: every call goes to the server (no ttlMs-driven client cache).
        session = Client(
            self.url,
            mode=PROTOCOL_VERSION,
            read_timeout_seconds=TIMEOUT_S,
            cache=None,
            client_info=types.Implementation(name="interop-client-2026", version="0.1.0"),
        )
        await run_in_session(self, session, sdk_steps)

        await self.record_step("unsupported_version_http", self.step_unsupported_version_http())


def check_unsupported_data(data: Any) -> None:
    check(isinstance(data, dict), f"error.data is not an object: {data!r}")
    supported = data.get("supported")
    check(
        isinstance(supported, list) and len(supported) > 0 and all(isinstance(v, str) for v in supported),
        f"error.data.supported is not a non-empty list of strings: {supported!r}",
    )
    check(PROTOCOL_VERSION in supported, f"error.data.supported {supported!r} lacks {PROTOCOL_VERSION!r}")
    check(
        data.get("requested") == UNSUPPORTED_VERSION,
        f"error.data.requested is {data.get('requested', '<missing>')!r}, expected {UNSUPPORTED_VERSION!r}",
    )


if __name__ == "__main__":
    sys.exit(interop_common.main(sys.argv, Run, OVERALL_TIMEOUT_S))
