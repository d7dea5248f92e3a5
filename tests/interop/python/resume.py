#!/usr/bin/env python3
"""Interop client for resumable 2025-11-25 streams: the official MCP Python SDK
(`mcp==2.3.0`, pinned in requirements.txt beside this file) in its handshake mode calls
`test_reconnection`, whose POST stream the server closes before the result; the SDK
reconnects by itself with GET + `Last-Event-ID` and gets the result there.

Usage:
    python resume.py URL

Prints which replica (`x-mcp-replica`) answered the call and the resuming GETs, then
`ok resume` or `FAIL resume: reason`, then `N passed, M failed`. Exit status 0 only if it
passed. The whole run has a 30 s timeout.
"""

from __future__ import annotations

import sys

import anyio
import httpx2  # the SDK's own HTTP client (a dependency of mcp 2.3.0)
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


class Recording(httpx2.AsyncBaseTransport):
    """Records each request's method, Last-Event-ID, whether it is the call, and replica."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.seen: list[dict] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.content if request.method == "POST" else b""
        entry = {
            "method": request.method,
            "last": request.headers.get("last-event-id"),
            "call": b'"tools/call"' in body,
        }
        self.seen.append(entry)
        response = await self.inner.handle_async_request(request)
        entry["replica"] = response.headers.get("x-mcp-replica")
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def run(url: str) -> str | None:
    recording = Recording()
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(10.0, read=30.0), transport=recording) as http:
        async with Client(
            streamable_http_client(url, http_client=http),
            mode="legacy",
            read_timeout_seconds=20,
            cache=None,
            client_info=types.Implementation(name="interop-resume", version="0.1.0"),
        ) as client:
            result = await client.call_tool("test_reconnection", {})
    text = result.content[0].text if result.content else ""
    resumed = [s for s in recording.seen if s["method"] == "GET" and s["last"]]
    call = next((s for s in recording.seen if s["call"]), {})
    print(f"replicas: call {call.get('replica')} resumed {','.join(str(s['replica']) for s in resumed)}")
    if result.is_error:
        return f"isError: {result}"
    if not text.startswith("Reconnection test completed successfully"):
        return f"result {result}"
    if not resumed:
        return "the SDK never sent GET with Last-Event-ID"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {argv[0]} URL", file=sys.stderr)
        return 2
    failed: str | None
    try:
        failed = anyio.run(lambda: _bounded(argv[1]))
    except Exception as e:  # noqa: BLE001 - any failure is the test's
        failed = repr(e)
    print(f"FAIL resume: {failed}" if failed else "ok resume")
    print("0 passed, 1 failed" if failed else "1 passed, 0 failed")
    return 1 if failed else 0


async def _bounded(url: str) -> str | None:
    with anyio.fail_after(30):
        return await run(url)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
