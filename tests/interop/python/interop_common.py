"""Helpers shared by the interop clients: step checks, the per-call timeout, and one-line
failure reasons."""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp import Client, MCPError

TIMEOUT_S = 10.0
MAX_PAGES = 50

T = TypeVar("T")


class CheckFailed(Exception):
    """A step's check did not hold."""


def check(cond: bool, reason: str) -> None:
    if not cond:
        raise CheckFailed(reason)


async def net(awaitable: Awaitable[T]) -> T:
    """Run one network call under the 10 s timeout."""
    with anyio.fail_after(TIMEOUT_S):
        return await awaitable


def describe(exc: BaseException) -> str:
    """A one-line reason for a failed step, unwrapping exception groups."""
    while isinstance(getattr(exc, "exceptions", None), (list, tuple)) and len(exc.exceptions) == 1:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    subs = getattr(exc, "exceptions", None)
    if isinstance(subs, (list, tuple)) and subs:
        return "; ".join(describe(e) for e in subs)
    if isinstance(exc, CheckFailed):
        return str(exc)
    if isinstance(exc, MCPError):
        data = f" data={exc.data!r}" if exc.data is not None else ""
        return f"MCPError code={exc.code} message={exc.message!r}{data}"
    if isinstance(exc, TimeoutError):
        return f"timed out after {TIMEOUT_S:g}s"
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:300] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def only_text(blocks: list[Any], what: str) -> str:
    """The text of a single text content block."""
    check(len(blocks) == 1, f"{what}: expected 1 content block, got {len(blocks)}: {blocks!r}")
    block = blocks[0]
    check(isinstance(block, types.TextContent), f"{what}: content block is not text: {block!r}")
    assert isinstance(block, types.TextContent)
    return block.text


async def all_tools(client: Client) -> list[types.Tool]:
    """Every page of tools/list (at most MAX_PAGES), each call under the timeout."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await net(client.list_tools(cursor=cursor))
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools
    raise CheckFailed(f"tools/list still paginating after {MAX_PAGES} pages")


class SdkWarnings(logging.Handler):
    """Collects what the SDK logs at WARNING or above, e.g. a notification that failed validation."""

    def __init__(self, sink: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f" ({describe(record.exc_info[1])})"
        self.sink.append(f"{record.name}: {text}")


def collect_sdk_warnings(sink: list[str]) -> None:
    """Sends what the SDK (logger `mcp`) logs at WARNING or above into `sink` instead of stderr."""
    sdk_logger = logging.getLogger("mcp")
    sdk_logger.addHandler(SdkWarnings(sink))
    sdk_logger.propagate = False


async def run_in_session(
    run: Any,
    session: AbstractAsyncContextManager[Any],
    steps: list[tuple[str, Callable[..., Awaitable[None]]]],
    before_each: Callable[[], Any] | None = None,
) -> None:
    """Runs `steps` (name, step) inside `session`, each step awaited with what the session
    yields (a tuple is spread into arguments), recording every outcome with `run.record`. If
    the session itself fails (e.g. the connection is refused), every step not recorded yet
    fails with that reason."""
    try:
        async with session as opened:
            args = opened if isinstance(opened, tuple) else (opened,)
            for name, step in steps:
                if before_each is not None:
                    before_each()
                try:
                    await step(*args)
                except Exception as e:  # noqa: BLE001 - every failure becomes a FAIL line
                    run.record(name, describe(e))
                else:
                    run.record(name, None)
    except Exception as e:  # noqa: BLE001 - the connection itself broke (e.g. refused)
        reason = f"client connection failed: {describe(e)}"
        for name, _ in steps:
            if name not in run.results:
                run.record(name, reason)


async def run_steps(run: Any, overall_timeout_s: float) -> int:
    """Runs `run.run()` under the overall timeout; steps it never reached fail with the
    reason; prints `N passed, M failed` and returns the exit status (0 only if all passed).
    `run` has `run()`, `order` (step names), `results` (name -> None or reason), `record()`."""
    try:
        with anyio.fail_after(overall_timeout_s):
            await run.run()
    except Exception as e:  # noqa: BLE001 - includes the overall timeout
        if isinstance(e, TimeoutError):
            reason = f"run aborted: whole run exceeded {overall_timeout_s:g}s"
        else:
            reason = f"run aborted: {describe(e)}"
        for name in run.order or ["run"]:
            if name not in run.results:
                run.record(name, reason)
    passed = sum(1 for r in run.results.values() if r is None)
    failed = len(run.results) - passed
    print(f"{passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 and passed > 0 else 1


def main(argv: list[str], make_run: Callable[[str], Any], overall_timeout_s: float) -> int:
    """`SCRIPT URL`: builds the run for URL and runs it (see `run_steps`)."""
    if len(argv) != 2:
        print(f"usage: {argv[0]} URL", file=sys.stderr)
        return 2
    try:
        return anyio.run(run_steps, make_run(argv[1]), overall_timeout_s)
    except Exception:  # pragma: no cover - last resort, still print the summary shape
        traceback.print_exc()
        print("0 passed, 1 failed", flush=True)
        return 1
