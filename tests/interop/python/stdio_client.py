#!/usr/bin/env python3
"""Interop client for an MCP server over stdio, spawned by the official Python SDK.

Usage:
    python stdio_client.py MODE COMMAND [ARGS...]
        e.g. python stdio_client.py 2026-07-28 stateless-mcp --transport stdio --fixtures conformance

MODE is the SDK's `Client(mode=...)`: `2026-07-28` (self-describing requests, no
handshake) or `legacy` (the 2025-11-25 initialize handshake; the session is the process).

Requires the official MCP Python SDK, pinned in requirements.txt beside this file
(`mcp==2.3.0`), and a server with the demo and conformance fixtures. The SDK starts the
server itself (`StdioServerParameters`, `stdio_client`) and talks newline-delimited JSON-RPC
over its stdin and stdout. Steps:

    discover (2026-07-28)  server/discover on the wire; supportedVersions has 2026-07-28
    initialize (legacy)    the handshake negotiated 2025-11-25 and named the server
    list_tools             tools/list (every page) contains `echo` and the MRTR fixture
    call_echo              tools/call echo returns its text
    progress               tools/call count {"steps": 3} reports progress 1, 2, 3 through
                           the SDK's progress_callback before its result
    concurrent_calls       a slow call (sleep 400 ms) and a fast echo issued together: the
                           echo completes first (answers are not serialized)
    elicitation            tools/call test_input_required_result_elicitation completes with
                           "Hello, <name>!" after one round answered by the SDK's
                           elicitation_callback: in 2026-07-28 an input_required result and a
                           retry; in legacy an elicitation/create request written on the
                           server's stdout, answered on its stdin, the call resumed by the
                           server (one tools/call)
    list_changed (2026)    Client.listen(tools_list_changed=True) is acknowledged and yields
                           ToolsListChanged after test_trigger_tool_change on the same
                           connection
    list_changed (legacy)  after tools/call test_trigger_tool_change, a
                           notifications/tools/list_changed reaches message_handler (the
                           session's notifications follow on stdout once initialize is
                           answered; no listen request)
    no_sdk_errors          no exception reached the message handler and the SDK logged
                           nothing at WARNING or above

One line per step (`ok <step>` / `FAIL <step>: reason`), then `N passed, M failed`.
Exit status 0 only if every step passed. Every call has a 10 s timeout.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import ToolsListChanged

import interop_common
from interop_common import USER_NAME, ClientRun, check, net

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
OVERALL_TIMEOUT_S = 120.0


class Run(ClientRun):
    def __init__(self, mode: str, command: list[str]) -> None:
        super().__init__()
        self.mode = mode
        self.command = command

    # ---- steps ---------------------------------------------------------------

    async def step_discover(self, client: Client) -> None:
        raw = await net(client.session.send_discover(MODERN))
        result = types.DiscoverResult.model_validate(raw)
        check(MODERN in result.supported_versions, f"supportedVersions {result.supported_versions!r}")
        client.session.adopt(result)

    async def step_initialize(self, client: Client) -> None:
        session = client.session
        check(session.protocol_version == LEGACY, f"negotiated {session.protocol_version!r}, expected {LEGACY!r}")
        info = session.initialize_result.server_info if session.initialize_result else None
        check(info is not None and info.name == "stateless-mcp", f"serverInfo {info!r}")

    async def step_list_tools(self, client: Client) -> None:
        names: list[str] = []
        cursor: str | None = None
        for _ in range(50):
            page = await net(client.list_tools(cursor=cursor))
            names.extend(t.name for t in page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        for wanted in ("echo", "test_input_required_result_elicitation"):
            check(wanted in names, f"{wanted!r} not in tools/list: {names!r}")

    async def step_call_echo(self, client: Client) -> None:
        result = await net(client.call_tool("echo", {"text": "over stdio"}))
        check(not result.is_error, f"isError: {result.content!r}")
        block = result.content[0]
        check(isinstance(block, types.TextContent) and block.text == "over stdio", f"echo returned {block!r}")

    async def step_progress(self, client: Client) -> None:
        seen: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        result = await net(client.call_tool("count", {"steps": 3}, progress_callback=on_progress))
        check(not result.is_error, f"isError: {result.content!r}")
        check(seen == [1.0, 2.0, 3.0], f"progress seen {seen!r}, expected [1.0, 2.0, 3.0]")

    async def step_concurrent_calls(self, client: Client) -> None:
        finished: list[str] = []

        async def call(name: str, args: dict[str, Any], label: str) -> None:
            result = await net(client.call_tool(name, args))
            check(not result.is_error, f"{label} isError: {result.content!r}")
            finished.append(label)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "sleep", {"ms": 400}, "slow")
            await anyio.sleep(0.05)
            tg.start_soon(call, "echo", {"text": "quick"}, "fast")
        check(finished == ["fast", "slow"], f"completion order {finished!r}, expected ['fast', 'slow']")

    async def step_elicitation(self, client: Client) -> None:
        result = await net(client.call_tool("test_input_required_result_elicitation", {}))
        check(not result.is_error, f"isError: {result.content!r}")
        block = result.content[0]
        expected = f"Hello, {USER_NAME}!"
        check(isinstance(block, types.TextContent) and block.text == expected, f"result {block!r}")
        check(len(self.asked) == 1, f"the elicitation callback ran {len(self.asked)} times")
        message = getattr(self.asked[0][1], "message", None)
        check(message == "What is your name?", f"elicitation message {message!r}")

    async def step_list_changed_modern(self, client: Client) -> None:
        async with client.listen(tools_list_changed=True) as sub:
            check(sub.honored.tools_list_changed is True, f"ack did not honour toolsListChanged: {sub.honored!r}")
            result = await net(client.call_tool("test_trigger_tool_change", {}))
            check(not result.is_error, f"trigger isError: {result.content!r}")
            event = await net(sub.__anext__())
            check(isinstance(event, ToolsListChanged), f"event {event!r}, expected ToolsListChanged")

    async def step_list_changed_legacy(self, client: Client) -> None:
        def changed() -> list[Any]:
            return [n for n in self.notifications if getattr(n, "method", None) == "notifications/tools/list_changed"]

        before = len(changed())
        result = await net(client.call_tool("test_trigger_tool_change", {}))
        check(not result.is_error, f"trigger isError: {result.content!r}")
        with anyio.move_on_after(interop_common.TIMEOUT_S):
            while len(changed()) == before:
                await anyio.sleep(0.01)
        check(len(changed()) > before, "no notifications/tools/list_changed reached message_handler")

    # ---- driver --------------------------------------------------------------

    async def run(self) -> None:
        legacy = self.mode == "legacy"
        steps: list[tuple[str, Callable[[Client], Awaitable[None]]]] = [
            ("initialize", self.step_initialize) if legacy else ("discover", self.step_discover),
            ("list_tools", self.step_list_tools),
            ("call_echo", self.step_call_echo),
            ("progress", self.step_progress),
            ("concurrent_calls", self.step_concurrent_calls),
            ("elicitation", self.step_elicitation),
            ("list_changed", self.step_list_changed_legacy if legacy else self.step_list_changed_modern),
        ]
        self.order = [name for name, _ in steps] + ["no_sdk_errors"]
        params = StdioServerParameters(command=self.command[0], args=self.command[1:])
        client = Client(
            params,
            mode=self.mode,
            elicitation_callback=self.on_elicit,
            message_handler=self.on_message,
        )
        await interop_common.run_in_session(self, client, steps)
        self.record_sdk_errors()


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] not in (MODERN, "legacy"):
        print(f"usage: {argv[0]} {MODERN}|legacy COMMAND [ARGS...]", file=sys.stderr)
        return 2
    return anyio.run(interop_common.run_steps, Run(argv[1], argv[2:]), OVERALL_TIMEOUT_S)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
