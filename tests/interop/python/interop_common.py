"""Helpers shared by the interop clients: step checks, the per-call timeout, and one-line
failure reasons."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

import anyio
from mcp import MCPError

TIMEOUT_S = 10.0

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
