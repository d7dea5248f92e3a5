#!/usr/bin/env python3
"""Interop client for multi-round-trip requests and `subscriptions/listen` (MCP 2026-07-28).

Usage:
    python mrtr_listen_2026.py URL     e.g. python mrtr_listen_2026.py http://127.0.0.1:8080/mcp

Requires the official MCP Python SDK, pinned in requirements.txt beside this file
(`mcp==2.3.0`), and a server with the conformance fixtures (`stateless-mcp --fixtures
conformance`). The SDK itself drives every flow: its `Client` answers `input_required`
results through the `elicitation_callback`, `sampling_callback` and `list_roots_callback`
given to its constructor and retries the request, and `Client.listen()` opens the
subscription. The script only supplies the callbacks' answers and checks the outcome.

    mrtr_elicitation       tools/call test_input_required_result_elicitation completes with
                           "Hello, <name>!" after one form elicitation ("What is your name?")
    mrtr_sampling          tools/call test_input_required_result_sampling completes after one
                           sampling/createMessage ("What is the capital of France?"); the
                           result names the model the callback answered with
    mrtr_list_roots        tools/call test_input_required_result_list_roots completes after one
                           roots/list; the result counts the callback's roots
    mrtr_multiple_inputs   tools/call test_input_required_result_multiple_inputs: elicitation,
                           sampling and roots asked at once (with requestState), answered in
                           one retry
    mrtr_multi_round       tools/call test_input_required_result_multi_round: two elicitation
                           rounds (step1 name, step2 color), the second remembered through the
                           sealed requestState; completes with "<name> likes <color>"
    mrtr_prompt            prompts/get test_input_required_result_prompt completes with
                           "Context: <context>" after one elicitation
    listen_tools_list_changed   Client.listen(tools_list_changed=True) is acknowledged with
                           toolsListChanged honoured; a second client calls
                           test_trigger_prompt_change then test_trigger_tool_change; the
                           subscription yields ToolsListChanged, stamped with the listen id,
                           and no prompts/list_changed arrived (it was not asked for)
    listen_prompts_list_changed   the same for prompts (test_trigger_prompt_change)
    listen_resource_updated       Client.listen(resource_subscriptions=[test://watched-resource])
                           yields ResourceUpdated for that URI after test_trigger_resource_update
    no_sdk_errors          no client's message_handler received an exception (the SDK hands it
                           transport faults) and the SDK logged nothing at WARNING or above (it
                           logs and drops a server notification that fails validation)

Each MRTR step also checks the HTTP requests the SDK sent (recorded by an httpx2 request
hook on the SDK's own HTTP client): the first request carries no inputResponses, every
retry is a new JSON-RPC id with the same name and arguments plus `inputResponses` under
exactly the keys the server asked for, and `requestState` where the server sent one.

One line per step (`ok <step>` / `FAIL <step>: reason`), then `N passed, M failed`.
Exit status 0 only if every step passed. Every network call has a 10 s timeout.

SDK notes (mcp 2.3.0):
- With a callback given, the SDK declares the matching client capability in every
  request's `_meta` (`elicitation: {form: {}, url: {}}`, `sampling: {}`, `roots: {}`).
- `Client.call_tool` / `get_prompt` run the SEP-2322 driver (`mcp.client._input_required`):
  up to 10 rounds, each dispatching every input request to the callbacks concurrently.
- `Client.listen()` returns once `notifications/subscriptions/acknowledged` arrives; the
  session routes the ack and the events to the subscription by
  `_meta["io.modelcontextprotocol/subscriptionId"]`, so an event without the right id
  never reaches the subscription. Events are also passed to `message_handler`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import httpx2  # the SDK's own HTTP client (a dependency of mcp 2.3.0)
import mcp_types as types
from mcp import Client

import interop_common
from interop_common import (
    FAVORITE_COLOR,
    PROMPT_CONTEXT,
    ROOTS,
    SAMPLING_MODEL,
    TIMEOUT_S,
    USER_NAME,
    CheckFailed,
    ClientRun,
    check,
    check_capital_question,
    net,
    only_text,
    run_in_session,
)
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import PromptsListChanged, ResourceUpdated, ToolsListChanged

PROTOCOL_VERSION = "2026-07-28"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
OVERALL_TIMEOUT_S = 180.0
WATCHED_RESOURCE = "test://watched-resource"

T = TypeVar("T")


class Run(ClientRun):
    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        # Every JSON-RPC message the MRTR client POSTed (parsed request bodies).
        self.wire: list[Any] = []

    # ---- the SDK callbacks (the input requests' in ClientRun) ---------------

    async def on_request(self, request: httpx2.Request) -> None:
        if request.method != "POST":
            return
        try:
            self.wire.append(json.loads(request.content))
        except (ValueError, httpx2.RequestNotRead) as e:  # a body we cannot read is a failed check later
            self.wire.append({"unreadable": repr(e)})

    # ---- shared checks -----------------------------------------------------

    def check_round_trips(
        self,
        wire_start: int,
        method: str,
        name: str,
        rounds: list[tuple[set[str], bool]],
    ) -> None:
        """The SDK's own requests for one MRTR call: a first request, then one retry per round.

        `rounds[i]` is (keys the server asked for, whether it sent requestState) for round i;
        retry i must carry exactly those inputResponses keys and a requestState if one was sent.
        """
        key = "name" if method in ("tools/call", "prompts/get") else "uri"
        sent = [
            m
            for m in self.wire[wire_start:]
            if isinstance(m, dict) and m.get("method") == method and (m.get("params") or {}).get(key) == name
        ]
        check(
            len(sent) == len(rounds) + 1,
            f"expected {len(rounds) + 1} {method} requests for {name!r} (1 + {len(rounds)} retries), "
            f"the SDK sent {len(sent)}: {json.dumps(sent)[:600]}",
        )
        first = sent[0]["params"]
        check("inputResponses" not in first, f"first request already carries inputResponses: {first!r}")
        check("requestState" not in first, f"first request already carries requestState: {first!r}")
        ids = [m.get("id") for m in sent]
        check(len(set(map(json.dumps, ids))) == len(ids), f"a retry reused a JSON-RPC id: {ids!r}")
        for i, (keys, has_state) in enumerate(rounds, start=1):
            params = sent[i]["params"]
            check(
                params.get("arguments") == first.get("arguments"),
                f"retry {i} changed the arguments: {params.get('arguments')!r} vs {first.get('arguments')!r}",
            )
            responses = params.get("inputResponses")
            check(isinstance(responses, dict), f"retry {i} has no inputResponses object: {params!r}")
            assert isinstance(responses, dict)
            check(set(responses) == keys, f"retry {i} answers {sorted(responses)!r}, the server asked {sorted(keys)!r}")
            state = params.get("requestState")
            if has_state:
                check(isinstance(state, str) and state != "", f"retry {i} did not echo requestState: {params!r}")
            else:
                check(state is None, f"retry {i} invented a requestState {state!r} the server never sent")

    # ---- MRTR steps --------------------------------------------------------

    async def step_mrtr_elicitation(self, client: Client) -> None:
        start = len(self.wire)
        result = await net(client.call_tool("test_input_required_result_elicitation", {}))
        check(not result.is_error, f"isError=true: {result.content!r}")
        text = only_text(result.content, "result")
        check(text == f"Hello, {USER_NAME}!", f"result text {text!r}, expected {f'Hello, {USER_NAME}!'!r}")
        asked = self.take_asked()
        check([k for k, _ in asked] == ["elicitation"], f"callbacks asked: {[k for k, _ in asked]!r}")
        params = asked[0][1]
        check(isinstance(params, types.ElicitRequestFormParams), f"not a form elicitation: {params!r}")
        check(params.message == "What is your name?", f"elicitation message {params.message!r}")
        props = (params.requested_schema or {}).get("properties", {})
        check("name" in props, f"requestedSchema lacks `name`: {params.requested_schema!r}")
        self.check_round_trips(start, "tools/call", "test_input_required_result_elicitation", [({"user_name"}, False)])

    async def step_mrtr_sampling(self, client: Client) -> None:
        start = len(self.wire)
        result = await net(client.call_tool("test_input_required_result_sampling", {}))
        check(not result.is_error, f"isError=true: {result.content!r}")
        text = only_text(result.content, "result")
        check(SAMPLING_MODEL in text, f"result text {text!r} does not name the model {SAMPLING_MODEL!r}")
        check_capital_question(self.take_asked())
        self.check_round_trips(
            start, "tools/call", "test_input_required_result_sampling", [({"capital_question"}, False)]
        )

    async def step_mrtr_list_roots(self, client: Client) -> None:
        start = len(self.wire)
        result = await net(client.call_tool("test_input_required_result_list_roots", {}))
        check(not result.is_error, f"isError=true: {result.content!r}")
        text = only_text(result.content, "result")
        check(f"{len(ROOTS)} root(s)" in text, f"result text {text!r} does not count {len(ROOTS)} roots")
        asked = self.take_asked()
        check([k for k, _ in asked] == ["roots"], f"callbacks asked: {[k for k, _ in asked]!r}")
        self.check_round_trips(
            start, "tools/call", "test_input_required_result_list_roots", [({"client_roots"}, False)]
        )

    async def step_mrtr_multiple_inputs(self, client: Client) -> None:
        start = len(self.wire)
        result = await net(client.call_tool("test_input_required_result_multiple_inputs", {}))
        check(not result.is_error, f"isError=true: {result.content!r}")
        text = only_text(result.content, "result")
        expected = f"{USER_NAME}: greeting received, {len(ROOTS)} root(s)"
        check(text == expected, f"result text {text!r}, expected {expected!r}")
        asked = sorted(k for k, _ in self.take_asked())
        check(asked == ["elicitation", "roots", "sampling"], f"callbacks asked: {asked!r}")
        self.check_round_trips(
            start,
            "tools/call",
            "test_input_required_result_multiple_inputs",
            [({"user_name", "greeting", "client_roots"}, True)],
        )

    async def step_mrtr_multi_round(self, client: Client) -> None:
        start = len(self.wire)
        result = await net(client.call_tool("test_input_required_result_multi_round", {}))
        check(not result.is_error, f"isError=true: {result.content!r}")
        text = only_text(result.content, "result")
        expected = f"{USER_NAME} likes {FAVORITE_COLOR}"
        check(text == expected, f"result text {text!r}, expected {expected!r}")
        asked = self.take_asked()
        messages = [getattr(p, "message", None) for _, p in asked]
        check(
            [k for k, _ in asked] == ["elicitation", "elicitation"],
            f"callbacks asked: {[k for k, _ in asked]!r} ({messages!r})",
        )
        check(
            messages == ["Step 1: What is your name?", "Step 2: What is your favorite color?"],
            f"elicitation messages {messages!r}",
        )
        self.check_round_trips(
            start,
            "tools/call",
            "test_input_required_result_multi_round",
            [({"step1"}, True), ({"step2"}, True)],
        )

    async def step_mrtr_prompt(self, client: Client) -> None:
        start = len(self.wire)
        result = await net(client.get_prompt("test_input_required_result_prompt", {}))
        check(len(result.messages) == 1, f"expected 1 message, got {result.messages!r}")
        content = result.messages[0].content
        check(isinstance(content, types.TextContent), f"message content is not text: {content!r}")
        assert isinstance(content, types.TextContent)
        expected = f"Context: {PROMPT_CONTEXT}"
        check(content.text == expected, f"prompt text {content.text!r}, expected {expected!r}")
        asked = self.take_asked()
        check([k for k, _ in asked] == ["elicitation"], f"callbacks asked: {[k for k, _ in asked]!r}")
        self.check_round_trips(
            start, "prompts/get", "test_input_required_result_prompt", [({"user_context"}, False)]
        )

    # ---- listen steps ------------------------------------------------------

    def stamped(self, method: str, subscription_id: Any) -> list[Any]:
        """Notifications of `method` the message_handler saw stamped with `subscription_id`."""
        out = []
        for n in self.notifications:
            if getattr(n, "method", None) != method:
                continue
            meta = getattr(getattr(n, "params", None), "meta", None) or {}
            if meta.get(SUBSCRIPTION_ID_KEY) == subscription_id:
                out.append(n)
        return out

    async def wait_stamped(self, method: str, subscription_id: Any) -> None:
        while not self.stamped(method, subscription_id):
            await anyio.sleep(0.01)

    async def step_listen_tools_list_changed(self, client: Client, trigger: Client) -> None:
        async with client.listen(tools_list_changed=True) as sub:
            check(sub.honored.tools_list_changed is True, f"ack did not honour toolsListChanged: {sub.honored!r}")
            # Not asked for: the server must not send it on this stream (§12.1).
            await net(trigger.call_tool("test_trigger_prompt_change", {}))
            result = await net(trigger.call_tool("test_trigger_tool_change", {}))
            check(not result.is_error, f"test_trigger_tool_change isError=true: {result.content!r}")
            event = await net(sub.__anext__())
            check(isinstance(event, ToolsListChanged), f"first event is {event!r}, expected ToolsListChanged")
            # message_handler runs in its own task, a little after the subscription saw the event.
            try:
                await net(self.wait_stamped("notifications/tools/list_changed", sub.subscription_id))
            except TimeoutError:
                raise CheckFailed(
                    f"message_handler saw no tools/list_changed stamped {sub.subscription_id!r}"
                ) from None
            # A prompts/list_changed sent before it would have been handed over first.
            await anyio.sleep(0.1)
            stray = self.stamped("notifications/prompts/list_changed", sub.subscription_id)
            check(not stray, f"server sent prompts/list_changed on a tools-only subscription: {stray!r}")

    async def step_listen_prompts_list_changed(self, client: Client, trigger: Client) -> None:
        async with client.listen(prompts_list_changed=True) as sub:
            check(
                sub.honored.prompts_list_changed is True, f"ack did not honour promptsListChanged: {sub.honored!r}"
            )
            result = await net(trigger.call_tool("test_trigger_prompt_change", {}))
            check(not result.is_error, f"test_trigger_prompt_change isError=true: {result.content!r}")
            event = await net(sub.__anext__())
            check(isinstance(event, PromptsListChanged), f"first event is {event!r}, expected PromptsListChanged")

    async def step_listen_resource_updated(self, client: Client, trigger: Client) -> None:
        async with client.listen(resource_subscriptions=[WATCHED_RESOURCE]) as sub:
            honored = sub.honored.resource_subscriptions or []
            check(WATCHED_RESOURCE in honored, f"ack did not honour {WATCHED_RESOURCE!r}: {sub.honored!r}")
            result = await net(trigger.call_tool("test_trigger_resource_update", {}))
            check(not result.is_error, f"test_trigger_resource_update isError=true: {result.content!r}")
            event = await net(sub.__anext__())
            check(
                event == ResourceUpdated(uri=WATCHED_RESOURCE),
                f"first event is {event!r}, expected ResourceUpdated({WATCHED_RESOURCE!r})",
            )

    # ---- driver ------------------------------------------------------------

    async def run(self) -> None:
        mrtr_steps: list[tuple[str, Callable[[Client], Awaitable[None]]]] = [
            ("mrtr_elicitation", self.step_mrtr_elicitation),
            ("mrtr_sampling", self.step_mrtr_sampling),
            ("mrtr_list_roots", self.step_mrtr_list_roots),
            ("mrtr_multiple_inputs", self.step_mrtr_multiple_inputs),
            ("mrtr_multi_round", self.step_mrtr_multi_round),
            ("mrtr_prompt", self.step_mrtr_prompt),
        ]
        listen_steps: list[tuple[str, Callable[[Client, Client], Awaitable[None]]]] = [
            ("listen_tools_list_changed", self.step_listen_tools_list_changed),
            ("listen_prompts_list_changed", self.step_listen_prompts_list_changed),
            ("listen_resource_updated", self.step_listen_resource_updated),
        ]
        self.order = [name for name, _ in mrtr_steps] + [name for name, _ in listen_steps] + ["no_sdk_errors"]

        def client(transport: Any = None, **kwargs: Any) -> Client:
            # cache=None: every call goes to the server (no ttlMs-driven client cache).
            return Client(
                transport if transport is not None else self.url,
                mode=PROTOCOL_VERSION,
                read_timeout_seconds=TIMEOUT_S,
                cache=None,
                **kwargs,
            )

        @asynccontextmanager
        async def mrtr_session() -> AsyncIterator[Client]:
            async with httpx2.AsyncClient(
                timeout=httpx2.Timeout(TIMEOUT_S), event_hooks={"request": [self.on_request]}
            ) as http:
                async with client(
                    streamable_http_client(self.url, http_client=http),
                    client_info=types.Implementation(name="interop-mrtr-2026", version="0.1.0"),
                    elicitation_callback=self.on_elicit,
                    sampling_callback=self.on_sample,
                    list_roots_callback=self.on_roots,
                    message_handler=self.on_message,
                ) as mrtr:
                    yield mrtr

        @asynccontextmanager
        async def listen_session() -> AsyncIterator[tuple[Client, Client]]:
            async with (
                client(
                    client_info=types.Implementation(name="interop-listen-2026", version="0.1.0"),
                    message_handler=self.on_message,
                ) as listener,
                client(
                    client_info=types.Implementation(name="interop-trigger-2026", version="0.1.0"),
                    message_handler=self.on_message,
                ) as trigger,
            ):
                yield listener, trigger

        await run_in_session(self, mrtr_session(), mrtr_steps, before_each=self.take_asked)
        await run_in_session(self, listen_session(), listen_steps)

        self.record_sdk_errors()


if __name__ == "__main__":
    sys.exit(interop_common.main(sys.argv, Run, OVERALL_TIMEOUT_S))
