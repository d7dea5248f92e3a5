#!/usr/bin/env python3
"""Interop client for a protected MCP 2026-07-28 server (OAuth 2.1 bearer tokens).

Usage:
    python client_auth.py URL TOKEN

The official Python SDK (`mcp==2.3.0`) sends the token through its own HTTP client: an
`httpx2.AsyncClient` with an `Authorization: Bearer` header, passed to
`streamable_http_client(url, http_client=...)`, whose transport `Client` uses as is.
Checks, one line each (`ok <step>` / `FAIL <step>: reason`), then `N passed, M failed`:

    no_token          a raw request without a token gets 401 and a Bearer challenge
                      naming resource_metadata
    list_tools        tools/list through the SDK with the token lists `whoami`, not
                      `write_file` (the token lacks files:write)
    call_whoami       tools/call whoami returns the token's subject
    insufficient      a raw tools/call of write_file with the token gets 403,
                      error="insufficient_scope" and scope="mcp files:write"
"""

from __future__ import annotations

import json
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

VERSION = "2026-07-28"
TIMEOUT_S = 10.0


def headers(method: str, name: str | None = None) -> dict[str, str]:
    h = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": method,
    }
    if name is not None:
        h["mcp-name"] = name
    return h


def body(method: str, params: dict) -> str:
    params = dict(params)
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


async def main(url: str, token: str) -> int:
    results: list[tuple[str, str | None]] = []

    def record(step: str, reason: str | None) -> None:
        results.append((step, reason))
        print(f"ok {step}" if reason is None else f"FAIL {step}: {reason}", flush=True)

    async with httpx2.AsyncClient(timeout=httpx2.Timeout(TIMEOUT_S)) as raw:
        r = await raw.post(url, headers=headers("tools/list"), content=body("tools/list", {}))
        challenge = r.headers.get("www-authenticate", "")
        record(
            "no_token",
            None
            if r.status_code == 401 and challenge.startswith("Bearer ") and "resource_metadata=" in challenge
            else f"status {r.status_code}, challenge {challenge!r}",
        )
        h = headers("tools/call", "write_file") | {"authorization": f"Bearer {token}"}
        r = await raw.post(url, headers=h, content=body("tools/call", {"name": "write_file", "arguments": {}}))
        challenge = r.headers.get("www-authenticate", "")
        ok = r.status_code == 403 and 'error="insufficient_scope"' in challenge and 'scope="mcp files:write"' in challenge
        record("insufficient", None if ok else f"status {r.status_code}, challenge {challenge!r}")

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(TIMEOUT_S)
    )
    async with http:
        try:
            async with Client(streamable_http_client(url, http_client=http), mode=VERSION) as client:
                try:
                    with anyio.fail_after(TIMEOUT_S):
                        page = await client.list_tools()
                    names = [t.name for t in page.tools]
                    record(
                        "list_tools",
                        None if "whoami" in names and "write_file" not in names else f"tools {names!r}",
                    )
                except Exception as e:  # noqa: BLE001
                    record("list_tools", f"{type(e).__name__}: {e}")
                try:
                    with anyio.fail_after(TIMEOUT_S):
                        result = await client.call_tool("whoami", {})
                    text = result.content[0].text  # type: ignore[union-attr]
                    subject = json.loads(text).get("subject")
                    record("call_whoami", None if subject == "user-42" else f"subject {subject!r}")
                except Exception as e:  # noqa: BLE001
                    record("call_whoami", f"{type(e).__name__}: {e}")
        except BaseException as e:  # noqa: BLE001
            record("connect", f"{type(e).__name__}: {e}")

    failed = sum(1 for _, r in results if r is not None)
    print(f"{len(results) - failed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1], sys.argv[2]))
