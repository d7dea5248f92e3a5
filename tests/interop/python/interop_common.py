"""Helpers shared by the interop clients: step checks, the per-call timeout, one-line
failure reasons, recording steps, and the answers to the conformance fixtures' input
requests."""

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
from mcp.client.session import ClientRequestContext

TIMEOUT_S = 10.0
MAX_PAGES = 50

# What the clients answer the fixtures' elicitation, sampling and roots requests.
USER_NAME = "Ada Lovelace"
FAVORITE_COLOR = "teal"
PROMPT_CONTEXT = "interop testing"
SAMPLING_MODEL = "interop-model"
ROOTS = [
    types.Root(uri="file:///work/project", name="project"),
    types.Root(uri="file:///work/notes"),
]

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


def check_capital_question(asked: list[tuple[str, Any]]) -> None:
    """What the sampling callback was asked for `test_input_required_result_sampling`: one
    request, maxTokens 100, the one question."""
    check([k for k, _ in asked] == ["sampling"], f"callbacks asked: {[k for k, _ in asked]!r}")
    params = asked[0][1]
    check(params.max_tokens == 100, f"maxTokens {params.max_tokens!r}, expected 100")
    texts = [getattr(m.content, "text", None) for m in params.messages]
    check(texts == ["What is the capital of France?"], f"sampling messages {texts!r}")


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


class StepRun:
    """One interop run: the outcome of each step (`results`: name -> None or the failure
    reason), printed as it is recorded; `order` names every step the run records."""

    def __init__(self) -> None:
        self.results: dict[str, str | None] = {}
        self.order: list[str] = []

    def record(self, step: str, reason: str | None) -> None:
        self.results[step] = reason
        print(f"ok {step}" if reason is None else f"FAIL {step}: {reason}", flush=True)

    async def record_step(self, step: str, awaitable: Awaitable[Any]) -> None:
        """Awaits one step outside a session and records how it went."""
        try:
            await awaitable
        except Exception as e:  # noqa: BLE001 - every failure becomes a FAIL line
            self.record(step, describe(e))
        else:
            self.record(step, None)


class ClientRun(StepRun):
    """A run whose SDK clients answer the fixtures' input requests (`on_elicit`, `on_sample`,
    `on_roots`, recorded in `asked` as (kind, params)) and hand what they receive to
    `on_message`: notifications to `notifications`, exceptions to `sdk_errors`, which also
    collects what the SDK logs at WARNING or above."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, Any]] = []
        self.notifications: list[Any] = []
        self.sdk_errors: list[str] = []
        collect_sdk_warnings(self.sdk_errors)

    async def on_elicit(self, _ctx: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(("elicitation", params))
        message = getattr(params, "message", "")
        if "color" in message:
            content: dict[str, Any] = {"color": FAVORITE_COLOR}
        elif "context" in message:
            content = {"context": PROMPT_CONTEXT}
        else:
            content = {"name": USER_NAME}
        return types.ElicitResult(action="accept", content=content)

    async def on_sample(
        self, _ctx: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append(("sampling", params))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris."),
            model=SAMPLING_MODEL,
            stop_reason="endTurn",
        )

    async def on_roots(self, _ctx: ClientRequestContext) -> types.ListRootsResult:
        self.asked.append(("roots", None))
        return types.ListRootsResult(roots=ROOTS)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.sdk_errors.append(describe(message))
        else:
            self.notifications.append(message)

    def take_asked(self) -> list[tuple[str, Any]]:
        asked, self.asked = self.asked, []
        return asked

    def record_sdk_errors(self) -> None:
        """The step `no_sdk_errors`."""
        errors = "; ".join(self.sdk_errors)
        self.record("no_sdk_errors", None if not errors else f"the SDK reported: {errors[:600]}")


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
