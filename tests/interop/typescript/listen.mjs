#!/usr/bin/env node
// Interop client for `subscriptions/listen` and multi-round-trip requests (MCP 2026-07-28),
// driven by the official TypeScript SDK v2 client (`@modelcontextprotocol/client`, pinned
// in tests/tools/package.json). Plain ESM, no build step; needs Node >= 22.
//
// Usage:
//     node listen.mjs URL [CLIENT_PACKAGE_DIR]
//
// URL is the MCP endpoint of a server with the conformance fixtures (`stateless-mcp
// --fixtures conformance`). CLIENT_PACKAGE_DIR is the installed @modelcontextprotocol/client
// package (default: target/test-tools/node/node_modules/@modelcontextprotocol/client, where
// scripts/provision.sh installs it); the script lives outside that node_modules tree, so it loads
// the package's ESM entry point from there.
//
// Steps:
//     connect                    Client.connect over StreamableHTTPClientTransport with
//                                versionNegotiation pinned to 2026-07-28: the server/discover
//                                probe succeeds and the era is "modern"
//     listen_ack                 client.listen({toolsListChanged: true}) resolves on the
//                                server's acknowledgement, honouring toolsListChanged
//     listen_tools_list_changed  a second client calls test_trigger_prompt_change, then
//                                test_trigger_tool_change; the listening client's
//                                notifications/tools/list_changed handler fires with
//                                _meta.subscriptionId = the listen request id, and no
//                                prompts/list_changed arrived for it (not asked for)
//     listen_close               subscription.close() settles `closed` as "local"; the SDK
//                                also POSTs notifications/cancelled naming the listen id,
//                                which the server answers with 202 Accepted
//     mrtr_elicitation           callTool test_input_required_result_elicitation completes
//                                with "Hello, <name>!" through the registered
//                                elicitation/create handler; the SDK retried with
//                                inputResponses.user_name on a new request id
//     mrtr_multiple_inputs       test_input_required_result_multiple_inputs: elicitation,
//                                sampling and roots handlers each run once; the retry
//                                answers all three keys and echoes requestState
//     mrtr_multi_round           test_input_required_result_multi_round: two elicitation
//                                rounds, each retry echoing the requestState it was given;
//                                completes with "<name> likes <color>"
//     no_sdk_errors              no client reported an error through Client.onerror (where the
//                                SDK reports messages it could not parse or validate)
//
// One line per step (`ok <step>` / `FAIL <step>: reason`), then `N passed, M failed`.
// Exit status 0 only if every step passed. Every network call has a 10 s timeout, the whole
// run 120 s.
//
// SDK notes (@modelcontextprotocol/client 2.4.0):
// - The default negotiation is 'legacy' (initialize handshake); `versionNegotiation: {mode:
//   {pin: '2026-07-28'}}` probes server/discover and fails unless that version is offered.
// - On a modern connection an `input_required` result is fulfilled automatically through the
//   handlers registered with setRequestHandler('elicitation/create' | 'sampling/createMessage'
//   | 'roots/list'); each needs the matching declared capability.
// - client.listen() resolves on notifications/subscriptions/acknowledged; events on the
//   stream go to the setNotificationHandler registrations. McpSubscription.close() aborts the
//   listen POST's stream and also POSTs notifications/cancelled for the listen id.
// - A custom `fetch` on the transport records the SDK's own requests and response statuses.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
    CheckFailed,
    FAVORITE_COLOR,
    ROOTS,
    StepRun,
    TIMEOUT_MS,
    USER_NAME,
    check,
    describe,
    inputHandlers,
    loadClientPackage,
    net,
    onlyText,
    parsedBody,
    runWithin,
    sleep,
    until
} from './common.mjs';

const PROTOCOL_VERSION = '2026-07-28';
const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';
const OVERALL_TIMEOUT_MS = 120_000;

class Run extends StepRun {
    constructor(url, sdk) {
        super();
        this.url = url;
        this.sdk = sdk;
        this.wire = []; // {body, status} of every POST the listening/MRTR client sent
        this.notifications = []; // notifications the listening client's handlers received
        this.clients = [];
        this.sdkErrors = []; // what the SDK reported through Client.onerror
    }

    /** A fetch that records the SDK's POST bodies and the HTTP status of each. */
    recordingFetch() {
        return async (input, init) => {
            const entry = { body: undefined, status: undefined };
            if (init?.method === 'POST' && typeof init.body === 'string') {
                entry.body = parsedBody(init.body);
                this.wire.push(entry);
            }
            const response = await fetch(input, init);
            entry.status = response.status;
            return response;
        };
    }

    async newClient(name, { record = false, capabilities = {} } = {}) {
        const { Client, StreamableHTTPClientTransport } = this.sdk;
        const client = new Client(
            { name, version: '0.1.0' },
            { capabilities, versionNegotiation: { mode: { pin: PROTOCOL_VERSION } } }
        );
        const transport = new StreamableHTTPClientTransport(
            new URL(this.url),
            record ? { fetch: this.recordingFetch() } : {}
        );
        this.clients.push(client);
        client.onerror = err => {
            this.sdkErrors.push(`${name}: ${describe(err)}`);
        };
        await net(client.connect(transport, { timeout: TIMEOUT_MS }), 'connect');
        return client;
    }

    /**
     * The SDK's own tools/call requests for one MRTR call: a first request, then one retry per
     * round; `rounds[i]` = [keys the server asked for, whether it sent requestState].
     */
    checkRoundTrips(wireStart, name, rounds) {
        const sent = this.wire
            .slice(wireStart)
            .map(w => w.body)
            .filter(m => m?.method === 'tools/call' && m.params?.name === name);
        check(
            sent.length === rounds.length + 1,
            `expected ${rounds.length + 1} tools/call requests for ${name} (1 + ${rounds.length} retries), ` +
                `the SDK sent ${sent.length}: ${JSON.stringify(sent).slice(0, 600)}`
        );
        const first = sent[0].params;
        check(!('inputResponses' in first), `first request already carries inputResponses: ${JSON.stringify(first)}`);
        check(!('requestState' in first), `first request already carries requestState: ${JSON.stringify(first)}`);
        const ids = sent.map(m => JSON.stringify(m.id));
        check(new Set(ids).size === ids.length, `a retry reused a JSON-RPC id: ${ids.join(', ')}`);
        rounds.forEach(([keys, hasState], i) => {
            const params = sent[i + 1].params;
            check(
                JSON.stringify(params.arguments) === JSON.stringify(first.arguments),
                `retry ${i + 1} changed the arguments: ${JSON.stringify(params.arguments)}`
            );
            const answered = Object.keys(params.inputResponses ?? {}).sort();
            check(
                JSON.stringify(answered) === JSON.stringify([...keys].sort()),
                `retry ${i + 1} answers ${JSON.stringify(answered)}, the server asked ${JSON.stringify([...keys].sort())}`
            );
            if (hasState) {
                check(
                    typeof params.requestState === 'string' && params.requestState !== '',
                    `retry ${i + 1} did not echo requestState: ${JSON.stringify(params)}`
                );
            } else {
                check(
                    params.requestState === undefined,
                    `retry ${i + 1} invented a requestState the server never sent`
                );
            }
        });
    }

    stamped(method, subscriptionId) {
        return this.notifications.filter(
            n => n.method === method && n.params?._meta?.[SUBSCRIPTION_ID_KEY] === subscriptionId
        );
    }

    // ---- steps -------------------------------------------------------------

    async stepConnect() {
        this.listener = await this.newClient('interop-ts-listen', { record: true });
        for (const method of [
            'notifications/tools/list_changed',
            'notifications/prompts/list_changed',
            'notifications/resources/list_changed'
        ]) {
            this.listener.setNotificationHandler(method, n => {
                this.notifications.push(n);
            });
        }
        this.trigger = await this.newClient('interop-ts-trigger');
        for (const client of [this.listener, this.trigger]) {
            check(client.getProtocolEra() === 'modern', `protocol era is ${client.getProtocolEra()}, expected modern`);
            const version = client.getNegotiatedProtocolVersion();
            check(version === PROTOCOL_VERSION, `negotiated ${version}, expected ${PROTOCOL_VERSION}`);
        }
    }

    async stepListenAck() {
        check(this.listener, 'not connected');
        const wireStart = this.wire.length;
        this.subscription = await net(this.listener.listen({ toolsListChanged: true }, { timeout: TIMEOUT_MS }), 'listen');
        const honored = this.subscription.honoredFilter;
        check(honored?.toolsListChanged === true, `ack did not honour toolsListChanged: ${JSON.stringify(honored)}`);
        const request = this.wire.slice(wireStart).find(w => w.body?.method === 'subscriptions/listen')?.body;
        check(request !== undefined, 'no subscriptions/listen request on the wire');
        check(
            JSON.stringify(request.params?.notifications) === JSON.stringify({ toolsListChanged: true }),
            `listen filter sent: ${JSON.stringify(request.params?.notifications)}`
        );
        this.listenId = request.id;
    }

    async stepListenToolsListChanged() {
        check(this.subscription, 'no open subscription (listen_ack failed)');
        // Not asked for: the server must not send it on this stream (§12.1).
        onlyText(
            await net(this.trigger.callTool({ name: 'test_trigger_prompt_change', arguments: {} }, { timeout: TIMEOUT_MS })),
            'test_trigger_prompt_change'
        );
        onlyText(
            await net(this.trigger.callTool({ name: 'test_trigger_tool_change', arguments: {} }, { timeout: TIMEOUT_MS })),
            'test_trigger_tool_change'
        );
        try {
            await until(() => this.stamped('notifications/tools/list_changed', this.listenId).length > 0);
        } catch {
            const got = JSON.stringify(this.notifications).slice(0, 400);
            throw new CheckFailed(
                `no notifications/tools/list_changed stamped ${JSON.stringify(this.listenId)} within ${TIMEOUT_MS / 1000}s; got ${got}`
            );
        }
        // A prompts/list_changed sent before it would have been dispatched first.
        await sleep(100);
        const stray = this.stamped('notifications/prompts/list_changed', this.listenId);
        check(stray.length === 0, `server sent prompts/list_changed on a tools-only subscription: ${JSON.stringify(stray)}`);
    }

    async stepListenClose() {
        check(this.subscription, 'no open subscription (listen_ack failed)');
        const wireStart = this.wire.length;
        await net(this.subscription.close(), 'close');
        const how = await net(this.subscription.closed, 'closed');
        check(how === 'local', `subscription closed as ${JSON.stringify(how)}, expected "local"`);
        const cancel = this.wire.slice(wireStart).find(w => w.body?.method === 'notifications/cancelled');
        check(cancel !== undefined, 'the SDK sent no notifications/cancelled for the listen request');
        check(
            JSON.stringify(cancel.body.params?.requestId) === JSON.stringify(this.listenId),
            `notifications/cancelled names ${JSON.stringify(cancel.body.params?.requestId)}, not the listen id`
        );
        await until(() => cancel.status !== undefined, 'the notifications/cancelled POST');
        check(cancel.status === 202, `notifications/cancelled POST answered HTTP ${cancel.status}, expected 202`);
    }

    async stepMrtrElicitation() {
        const client = this.mrtr;
        const wireStart = this.wire.length;
        const text = onlyText(
            await net(client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }, { timeout: TIMEOUT_MS })),
            'result'
        );
        check(text === `Hello, ${USER_NAME}!`, `result text ${JSON.stringify(text)}, expected "Hello, ${USER_NAME}!"`);
        const asked = this.takeAsked();
        check(asked.length === 1 && asked[0][0] === 'elicitation', `handlers asked: ${JSON.stringify(asked)}`);
        check(asked[0][1].message === 'What is your name?', `elicitation message ${JSON.stringify(asked[0][1].message)}`);
        this.checkRoundTrips(wireStart, 'test_input_required_result_elicitation', [[['user_name'], false]]);
    }

    async stepMrtrMultipleInputs() {
        const client = this.mrtr;
        const wireStart = this.wire.length;
        const text = onlyText(
            await net(
                client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} }, { timeout: TIMEOUT_MS })
            ),
            'result'
        );
        const expected = `${USER_NAME}: greeting received, ${ROOTS.length} root(s)`;
        check(text === expected, `result text ${JSON.stringify(text)}, expected ${JSON.stringify(expected)}`);
        const kinds = this.takeAsked().map(([k]) => k).sort();
        check(JSON.stringify(kinds) === JSON.stringify(['elicitation', 'roots', 'sampling']), `handlers asked: ${kinds}`);
        this.checkRoundTrips(wireStart, 'test_input_required_result_multiple_inputs', [
            [['user_name', 'greeting', 'client_roots'], true]
        ]);
    }

    async stepMrtrMultiRound() {
        const client = this.mrtr;
        const wireStart = this.wire.length;
        const text = onlyText(
            await net(client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} }, { timeout: TIMEOUT_MS })),
            'result'
        );
        const expected = `${USER_NAME} likes ${FAVORITE_COLOR}`;
        check(text === expected, `result text ${JSON.stringify(text)}, expected ${JSON.stringify(expected)}`);
        const messages = this.takeAsked().map(([k, p]) => `${k}: ${p?.message}`);
        check(
            JSON.stringify(messages) ===
                JSON.stringify(['elicitation: Step 1: What is your name?', 'elicitation: Step 2: What is your favorite color?']),
            `handlers asked: ${JSON.stringify(messages)}`
        );
        this.checkRoundTrips(wireStart, 'test_input_required_result_multi_round', [
            [['step1'], true],
            [['step2'], true]
        ]);
    }

    async connectMrtr() {
        const client = await this.newClient('interop-ts-mrtr', {
            record: true,
            capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} }
        });
        const answer = inputHandlers(this, 'Hello there!');
        client.setRequestHandler('elicitation/create', answer.elicitation);
        client.setRequestHandler('sampling/createMessage', answer.sampling);
        client.setRequestHandler('roots/list', answer.roots);
        return client;
    }

    async run() {
        const listenSteps = [
            ['connect', () => this.stepConnect()],
            ['listen_ack', () => this.stepListenAck()],
            ['listen_tools_list_changed', () => this.stepListenToolsListChanged()],
            ['listen_close', () => this.stepListenClose()]
        ];
        const mrtrSteps = [
            ['mrtr_elicitation', () => this.stepMrtrElicitation()],
            ['mrtr_multiple_inputs', () => this.stepMrtrMultipleInputs()],
            ['mrtr_multi_round', () => this.stepMrtrMultiRound()]
        ];
        this.order = [...listenSteps, ...mrtrSteps].map(([name]) => name).concat(['no_sdk_errors']);
        await this.runSteps(listenSteps);
        let connectError;
        try {
            this.mrtr = await this.connectMrtr();
        } catch (err) {
            connectError = `client connection failed: ${describe(err)}`;
        }
        await this.runSteps(mrtrSteps, () => connectError);
        this.recordSdkErrors(this.sdkErrors);
    }

    async closeAll() {
        await Promise.allSettled(this.clients.map(c => net(c.close(), 'client close')));
    }
}

async function main(argv) {
    if (argv.length < 1 || argv.length > 2) {
        console.error('usage: node listen.mjs URL [CLIENT_PACKAGE_DIR]');
        return 2;
    }
    const here = dirname(fileURLToPath(import.meta.url));
    const packageDir = resolve(
        argv[1] ?? join(here, '../../../target/test-tools/node/node_modules/@modelcontextprotocol/client')
    );
    let sdk;
    try {
        const loaded = await loadClientPackage(packageDir);
        sdk = loaded.mod;
        console.error(`@modelcontextprotocol/client ${loaded.version} from ${packageDir}, node ${process.version}`);
    } catch (err) {
        console.log(`FAIL load_sdk: ${describe(err)}`);
        console.log('0 passed, 1 failed');
        return 1;
    }
    return runWithin(new Run(argv[0], sdk), OVERALL_TIMEOUT_MS);
}

process.exitCode = await main(process.argv.slice(2));
// Open sockets or timers left behind by a misbehaving peer must not keep the process alive.
process.exit(process.exitCode);
