#!/usr/bin/env node
// Interop client for legacy (2025-11-25) sessions, driven by the official TypeScript SDK v1
// (`@modelcontextprotocol/sdk` 1.x, pinned in tests/tools/package.json): its `Client` and
// `StreamableHTTPClientTransport`, as most MCP hosts in use still run them. Plain ESM, no
// build step; needs Node >= 22.
//
// Usage:
//     node legacy.mjs URL RECORD_FILE [SDK_PACKAGE_DIR]
//
// URL is the MCP endpoint of a server with the conformance fixtures (`stateless-mcp
// --fixtures conformance`). RECORD_FILE receives every JSON-RPC message the server sent to
// the SDK (one JSON object a line: {"answers": method or null, "via": "POST"|"GET",
// "message": …}) for the caller to validate against the 2025-11-25 schema. SDK_PACKAGE_DIR
// is the installed @modelcontextprotocol/sdk package (default:
// target/test-tools/node/node_modules/@modelcontextprotocol/sdk, where scripts/provision.sh
// installs it).
//
// Steps:
//     connect              Client.connect: initialize without MCP-Protocol-Version, the
//                          negotiated version is 2025-11-25, a visible-ASCII Mcp-Session-Id,
//                          tools.listChanged / resources.subscribe / logging advertised,
//                          notifications/initialized answered 202, then the SDK's GET stream
//                          opened with the session id and answered 200 as SSE
//     list_tools           listTools, every page (a cursor made by one replica continued on
//                          another): the conformance tools, each with an inputSchema
//     ping                 ping answers exactly {}
//     call_tool            callTool test_simple_text carries the session id and the version
//     elicitation          callTool test_input_required_result_elicitation: the server sends
//                          elicitation/create on the call's SSE stream, the SDK's handler
//                          answers in a separate POST (202), the call completes with
//                          "Hello, <name>!"; the SDK sent the tools/call once (no retry: the
//                          server resumed the handler itself)
//     sampling             the same with sampling/createMessage
//                          (test_input_required_result_sampling)
//     multiple_inputs      test_input_required_result_multiple_inputs: elicitation, sampling
//                          and roots requests on one stream, each answered
//     logging              setLoggingLevel("debug") answers exactly {}; test_logging_tool's
//                          info log reaches the notifications/message handler; after
//                          setLoggingLevel("error") it does not
//     tools_list_changed   a second client calls test_trigger_tool_change; the first client's
//                          notifications/tools/list_changed handler fires, the notification
//                          having arrived on its GET stream
//     terminate_session    transport.terminateSession(): DELETE answered 2xx (not 405), then a
//                          POST and a GET with the old session id answer 404
//     no_sdk_errors        no client reported an error through Client.onerror
//
// One line per step (`ok <step>` / `FAIL <step>: reason`), then `N passed, M failed`.
// Exit status 0 only if every step passed. Every network call has a 10 s timeout, the whole
// run 120 s.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import {
    CheckFailed,
    ROOTS,
    SAMPLING_MODEL,
    StepRun,
    TIMEOUT_MS,
    USER_NAME,
    check,
    describe,
    inputHandlers,
    net,
    onlyText,
    parsedBody,
    runWithin,
    sleep,
    until
} from './common.mjs';

const PROTOCOL_VERSION = '2025-11-25';
const MAX_PAGES = 50;
const OVERALL_TIMEOUT_MS = 120_000;

/** The ESM module `sub` (a path under dist/esm) of the package in `dir`. */
async function loadModule(dir, sub) {
    return import(pathToFileURL(join(dir, 'dist/esm', sub)).href);
}

/** Every `data:` payload of an SSE text, as parsed JSON (events without data skipped). */
function ssePayloads(text) {
    const out = [];
    for (const block of text.split(/\r?\n\r?\n/)) {
        const data = block
            .split(/\r?\n/)
            .filter(l => l.startsWith('data:'))
            .map(l => l.slice(5).replace(/^ /, ''));
        if (data.length && data.join('\n') !== '') out.push(data.join('\n'));
    }
    return out;
}

class Run extends StepRun {
    constructor(url, sdk) {
        super();
        this.url = url;
        this.sdk = sdk;
        this.wire = []; // {method, headers, body, status, client} of every HTTP request
        this.received = []; // {answers, via, message, client} of every server message
        this.notifications = []; // [client, notification] the notification handlers received
        this.clients = [];
        this.sdkErrors = []; // what the SDK reported through Client.onerror
        this.pending = []; // promises reading teed response bodies
    }

    /**
     * A fetch that records every request the SDK sends and its status, and reads a copy of
     * every response body: the JSON-RPC messages in it go to `received`.
     */
    recordingFetch(client) {
        return async (input, init) => {
            const headers = new Headers(init?.headers);
            const entry = { method: init?.method ?? 'GET', headers, body: undefined, status: undefined, client };
            if (typeof init?.body === 'string') entry.body = parsedBody(init.body);
            this.wire.push(entry);
            const response = await fetch(input, init);
            entry.status = response.status;
            entry.responseHeaders = response.headers;
            // A null-body status cannot be rebuilt with a body (and has none to read).
            if (!response.body || [101, 204, 205, 304].includes(response.status)) return response;
            const [forSdk, forUs] = response.body.tee();
            this.pending.push(this.readCopy(forUs, entry));
            return new Response(forSdk, { status: response.status, statusText: response.statusText, headers: response.headers });
        };
    }

    async readCopy(stream, entry) {
        const answers = entry.body?.method !== undefined && entry.body?.id !== undefined ? entry.body.method : null;
        const contentType = entry.responseHeaders.get('content-type') ?? '';
        const push = text => {
            const message = JSON.parse(text);
            const isResponse = !('method' in message);
            this.received.push({ answers: isResponse ? answers : null, via: entry.method, message, client: entry.client });
        };
        let text = '';
        const decoder = new TextDecoder();
        try {
            for await (const chunk of stream) {
                text += decoder.decode(chunk, { stream: true });
                if (contentType.startsWith('text/event-stream')) {
                    // Hand over complete events as they arrive (GET streams never end).
                    const cut = text.lastIndexOf('\n\n');
                    if (cut >= 0) {
                        ssePayloads(text.slice(0, cut)).forEach(push);
                        text = text.slice(cut + 2);
                    }
                }
            }
        } catch {
            // The SDK aborted the stream (close, terminateSession): what arrived is recorded.
        }
        if (contentType.startsWith('text/event-stream')) {
            ssePayloads(text).forEach(push);
        } else if (contentType.startsWith('application/json') && text.trim() !== '') {
            push(text);
        }
    }

    async newClient(name, capabilities = {}) {
        const { Client, StreamableHTTPClientTransport } = this.sdk;
        const client = new Client({ name, version: '0.1.0' }, { capabilities });
        const transport = new StreamableHTTPClientTransport(new URL(this.url), { fetch: this.recordingFetch(name) });
        this.clients.push(client);
        client.onerror = err => {
            this.sdkErrors.push(`${name}: ${describe(err)}`);
        };
        return { client, transport };
    }

    /**
     * The response message the server sent for the SDK's request `method` sent at `start`,
     * once the copy of its body was read.
     */
    async responseTo(start, method) {
        const request = this.wire.slice(start).find(w => w.client === 'interop-ts-legacy' && w.body?.method === method);
        check(request !== undefined, `the SDK sent no ${method}`);
        const find = () =>
            this.received.find(r => r.client === 'interop-ts-legacy' && r.answers === method && r.message.id === request.body.id);
        await until(() => find() !== undefined, `the recorded response to ${method}`);
        return find().message;
    }

    /**
     * Checks the wire for one call of `name` that the server completed on its own; `start`
     * and `received` are the lengths of `wire` and `received` before the call.
     */
    async checkServerResumed(start, received, name, kinds) {
        const mine = this.wire.slice(start).filter(w => w.client === 'interop-ts-legacy');
        const calls = mine.filter(w => w.body?.method === 'tools/call' && w.body.params?.name === name);
        check(calls.length === 1, `the SDK sent ${calls.length} tools/call for ${name}, expected 1 (the server resumes the handler)`);
        check(calls[0].headers.get('mcp-session-id') === this.sessionId, `tools/call without the session id`);
        const answers = mine.filter(w => w.body && 'result' in w.body && w.body.method === undefined);
        check(answers.length === kinds.length, `the SDK answered ${answers.length} server requests, expected ${kinds.length}`);
        // The call's result may reach the SDK before the 202 of its last answer does.
        await until(() => answers.every(a => a.status !== undefined), 'the answers\' HTTP statuses');
        for (const a of answers) {
            check(a.status === 202, `an answer POST got HTTP ${a.status}, expected 202`);
            check(a.headers.get('mcp-session-id') === this.sessionId, 'an answer POST without the session id');
        }
        const requests = () =>
            this.received
                .slice(received)
                .filter(r => r.client === 'interop-ts-legacy' && r.via === 'POST' && 'method' in r.message && 'id' in r.message)
                .filter(r => answers.some(a => JSON.stringify(a.body.id) === JSON.stringify(r.message.id)))
                .map(r => r.message.method)
                .sort();
        try {
            await until(() => requests().length >= kinds.length, 'the recorded server requests');
        } catch {
            // reported below
        }
        check(
            JSON.stringify(requests()) === JSON.stringify([...kinds].sort()),
            `server requests on the call's stream: ${JSON.stringify(requests())}, expected ${JSON.stringify(kinds)}`
        );
    }

    // ---- steps -------------------------------------------------------------

    async stepConnect() {
        const { client, transport } = await this.newClient('interop-ts-legacy', {
            elicitation: { form: {} },
            sampling: {},
            roots: { listChanged: true }
        });
        this.client = client;
        this.transport = transport;
        const { ElicitRequestSchema, CreateMessageRequestSchema, ListRootsRequestSchema } = this.sdk;
        const { ToolListChangedNotificationSchema, LoggingMessageNotificationSchema } = this.sdk;
        const answer = inputHandlers(this, 'Paris.');
        client.setRequestHandler(ElicitRequestSchema, answer.elicitation);
        client.setRequestHandler(CreateMessageRequestSchema, answer.sampling);
        client.setRequestHandler(ListRootsRequestSchema, answer.roots);
        for (const schema of [ToolListChangedNotificationSchema, LoggingMessageNotificationSchema]) {
            client.setNotificationHandler(schema, n => {
                this.notifications.push(n);
            });
        }
        await net(client.connect(transport, { timeout: TIMEOUT_MS }), 'connect');
        this.sessionId = transport.sessionId;
        check(typeof this.sessionId === 'string' && /^[\x21-\x7E]+$/.test(this.sessionId), `session id ${JSON.stringify(this.sessionId)}`);
        check(transport.protocolVersion === PROTOCOL_VERSION, `negotiated ${transport.protocolVersion}, expected ${PROTOCOL_VERSION}`);
        const init = this.wire.find(w => w.body?.method === 'initialize');
        check(init.headers.get('mcp-protocol-version') === null, 'the SDK sent initialize with MCP-Protocol-Version');
        const caps = client.getServerCapabilities() ?? {};
        check(caps.tools?.listChanged === true, `tools.listChanged not advertised: ${JSON.stringify(caps)}`);
        check(caps.resources?.subscribe === true, `resources.subscribe not advertised: ${JSON.stringify(caps)}`);
        check(caps.logging !== undefined, `logging not advertised: ${JSON.stringify(caps)}`);
        check(typeof client.getServerVersion()?.name === 'string', 'no serverInfo.name');
        const initialized = this.wire.find(w => w.body?.method === 'notifications/initialized');
        check(initialized !== undefined, 'the SDK sent no notifications/initialized');
        await until(() => initialized.status !== undefined, 'the initialized POST');
        check(initialized.status === 202, `notifications/initialized answered HTTP ${initialized.status}, expected 202`);
        // The SDK opens its GET stream after the 202 to initialized.
        const get = () => this.wire.find(w => w.client === 'interop-ts-legacy' && w.method === 'GET');
        try {
            await until(() => get()?.status !== undefined, 'the GET stream');
        } catch {
            throw new CheckFailed('the SDK opened no GET stream (or it got no answer)');
        }
        check(get().status === 200, `the GET stream answered HTTP ${get().status}`);
        check(get().headers.get('mcp-session-id') === this.sessionId, 'the GET carried no session id');
        const type = get().responseHeaders.get('content-type') ?? '';
        check(type.startsWith('text/event-stream'), `the GET stream answered ${type}`);
    }

    async stepListTools() {
        const tools = [];
        let cursor;
        for (let page = 0; page < MAX_PAGES; page++) {
            const result = await net(this.client.listTools(cursor ? { cursor } : undefined, { timeout: TIMEOUT_MS }), 'listTools');
            tools.push(...result.tools);
            cursor = result.nextCursor;
            if (cursor === undefined) break;
        }
        check(cursor === undefined, `tools/list had more than ${MAX_PAGES} pages`);
        const names = tools.map(t => t.name);
        for (const name of ['test_simple_text', 'test_input_required_result_elicitation', 'test_trigger_tool_change']) {
            check(names.includes(name), `tools/list lacks ${name}: ${names.join(', ')}`);
        }
        for (const t of tools) check(t.inputSchema?.type === 'object', `${t.name} has no object inputSchema`);
    }

    async stepPing() {
        const start = this.wire.length;
        await net(this.client.ping({ timeout: TIMEOUT_MS }), 'ping');
        const response = await this.responseTo(start, 'ping');
        check(JSON.stringify(response.result) === '{}', `ping answered ${JSON.stringify(response.result)}, expected {}`);
    }

    async stepCallTool() {
        const start = this.wire.length;
        const text = onlyText(
            await net(this.client.callTool({ name: 'test_simple_text', arguments: {} }, undefined, { timeout: TIMEOUT_MS })),
            'test_simple_text'
        );
        check(text === 'This is a simple text response for testing.', `result text ${JSON.stringify(text)}`);
        const sent = this.wire.slice(start).find(w => w.body?.method === 'tools/call');
        check(sent.headers.get('mcp-session-id') === this.sessionId, 'tools/call without the session id');
        check(sent.headers.get('mcp-protocol-version') === PROTOCOL_VERSION, 'tools/call without MCP-Protocol-Version');
    }

    async stepElicitation() {
        const start = this.wire.length;
        const received = this.received.length;
        const name = 'test_input_required_result_elicitation';
        const text = onlyText(
            await net(this.client.callTool({ name, arguments: {} }, undefined, { timeout: TIMEOUT_MS })),
            name
        );
        check(text === `Hello, ${USER_NAME}!`, `result text ${JSON.stringify(text)}, expected "Hello, ${USER_NAME}!"`);
        const asked = this.takeAsked();
        check(asked.length === 1 && asked[0][0] === 'elicitation', `handlers asked: ${JSON.stringify(asked)}`);
        check(asked[0][1].message === 'What is your name?', `elicitation message ${JSON.stringify(asked[0][1].message)}`);
        check(asked[0][1].requestedSchema?.properties?.name !== undefined, `requestedSchema ${JSON.stringify(asked[0][1].requestedSchema)}`);
        await this.checkServerResumed(start, received, name, ['elicitation/create']);
    }

    async stepSampling() {
        const start = this.wire.length;
        const received = this.received.length;
        const name = 'test_input_required_result_sampling';
        const text = onlyText(
            await net(this.client.callTool({ name, arguments: {} }, undefined, { timeout: TIMEOUT_MS })),
            name
        );
        check(text.includes(SAMPLING_MODEL), `result text ${JSON.stringify(text)} does not name ${SAMPLING_MODEL}`);
        const asked = this.takeAsked();
        check(asked.length === 1 && asked[0][0] === 'sampling', `handlers asked: ${JSON.stringify(asked)}`);
        check(asked[0][1].maxTokens === 100, `maxTokens ${asked[0][1].maxTokens}`);
        const texts = asked[0][1].messages.map(m => m.content?.text);
        check(JSON.stringify(texts) === JSON.stringify(['What is the capital of France?']), `sampling messages ${JSON.stringify(texts)}`);
        await this.checkServerResumed(start, received, name, ['sampling/createMessage']);
    }

    async stepMultipleInputs() {
        const start = this.wire.length;
        const received = this.received.length;
        const name = 'test_input_required_result_multiple_inputs';
        const text = onlyText(
            await net(this.client.callTool({ name, arguments: {} }, undefined, { timeout: TIMEOUT_MS })),
            name
        );
        const expected = `${USER_NAME}: greeting received, ${ROOTS.length} root(s)`;
        check(text === expected, `result text ${JSON.stringify(text)}, expected ${JSON.stringify(expected)}`);
        const kinds = this.takeAsked().map(([k]) => k).sort();
        check(JSON.stringify(kinds) === JSON.stringify(['elicitation', 'roots', 'sampling']), `handlers asked: ${kinds}`);
        await this.checkServerResumed(start, received, name, ['elicitation/create', 'roots/list', 'sampling/createMessage']);
    }

    logs() {
        return this.notifications.filter(n => n.method === 'notifications/message');
    }

    async stepLogging() {
        const start = this.wire.length;
        await net(this.client.setLoggingLevel('debug', { timeout: TIMEOUT_MS }), 'setLoggingLevel');
        const response = await this.responseTo(start, 'logging/setLevel');
        check(JSON.stringify(response.result) === '{}', `logging/setLevel answered ${JSON.stringify(response.result)}, expected {}`);
        const before = this.logs().length;
        onlyText(
            await net(this.client.callTool({ name: 'test_logging_tool', arguments: {} }, undefined, { timeout: TIMEOUT_MS })),
            'test_logging_tool'
        );
        await until(() => this.logs().length > before, 'the info log after setLevel debug');
        const log = this.logs()[before];
        check(log.params.level === 'info', `log level ${log.params.level}`);
        check(log.params.data === 'logging tool called', `log data ${JSON.stringify(log.params.data)}`);
        await net(this.client.setLoggingLevel('error', { timeout: TIMEOUT_MS }), 'setLoggingLevel');
        const quiet = this.logs().length;
        onlyText(
            await net(this.client.callTool({ name: 'test_logging_tool', arguments: {} }, undefined, { timeout: TIMEOUT_MS })),
            'test_logging_tool'
        );
        await sleep(200);
        check(this.logs().length === quiet, `an info log arrived after setLevel error: ${JSON.stringify(this.logs().slice(quiet))}`);
    }

    async stepToolsListChanged() {
        const { client: trigger, transport } = await this.newClient('interop-ts-trigger');
        await net(trigger.connect(transport, { timeout: TIMEOUT_MS }), 'trigger connect');
        const before = this.notifications.filter(n => n.method === 'notifications/tools/list_changed').length;
        onlyText(
            await net(trigger.callTool({ name: 'test_trigger_tool_change', arguments: {} }, undefined, { timeout: TIMEOUT_MS })),
            'test_trigger_tool_change'
        );
        try {
            await until(
                () => this.notifications.filter(n => n.method === 'notifications/tools/list_changed').length > before,
                'tools/list_changed'
            );
        } catch {
            throw new CheckFailed(`no notifications/tools/list_changed reached the handler within ${TIMEOUT_MS / 1000}s`);
        }
        const onGet = this.received.filter(
            r => r.client === 'interop-ts-legacy' && r.via === 'GET' && r.message.method === 'notifications/tools/list_changed'
        );
        check(onGet.length > 0, 'the tools/list_changed notification did not arrive on the GET stream');
    }

    async stepTerminateSession() {
        const start = this.wire.length;
        const old = this.transport.sessionId;
        await net(this.transport.terminateSession(), 'terminateSession');
        const del = this.wire.slice(start).find(w => w.method === 'DELETE');
        check(del !== undefined, 'the SDK sent no DELETE');
        check(del.headers.get('mcp-session-id') === old, 'the DELETE carried no session id');
        check(del.status >= 200 && del.status < 300, `DELETE answered HTTP ${del.status}, expected 2xx`);
        check(this.transport.sessionId === undefined, 'the SDK kept the session id');
        const headers = {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': PROTOCOL_VERSION,
            'mcp-session-id': old
        };
        const post = await net(
            fetch(this.url, {
                method: 'POST',
                headers,
                body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list', params: {} })
            }),
            'POST after DELETE'
        );
        await post.body?.cancel();
        check(post.status === 404, `tools/list with the terminated session answered HTTP ${post.status}, expected 404`);
        const get = await net(
            fetch(this.url, { headers: { accept: 'text/event-stream', 'mcp-protocol-version': PROTOCOL_VERSION, 'mcp-session-id': old } }),
            'GET after DELETE'
        );
        await get.body?.cancel();
        check(get.status === 404, `GET with the terminated session answered HTTP ${get.status}, expected 404`);
    }

    async run() {
        const steps = [
            ['connect', () => this.stepConnect()],
            ['list_tools', () => this.stepListTools()],
            ['ping', () => this.stepPing()],
            ['call_tool', () => this.stepCallTool()],
            ['elicitation', () => this.stepElicitation()],
            ['sampling', () => this.stepSampling()],
            ['multiple_inputs', () => this.stepMultipleInputs()],
            ['logging', () => this.stepLogging()],
            ['tools_list_changed', () => this.stepToolsListChanged()],
            ['terminate_session', () => this.stepTerminateSession()]
        ];
        this.order = steps.map(([name]) => name).concat(['no_sdk_errors']);
        await this.runSteps(steps, name => this.afterConnect(name));
        this.recordSdkErrors(this.sdkErrors);
    }

    async closeAll() {
        await Promise.allSettled(this.clients.map(c => net(c.close(), 'client close')));
        await Promise.race([Promise.allSettled(this.pending), sleep(2000)]);
    }
}

/** Writes what the server sent to the SDK to `recordFile`, one JSON object a line. */
function writeRecord(run, recordFile) {
    const lines = run.received.map(r => JSON.stringify({ answers: r.answers, via: r.via, message: r.message }));
    writeFileSync(recordFile, lines.join('\n') + '\n');
}

async function main(argv) {
    if (argv.length < 2 || argv.length > 3) {
        console.error('usage: node legacy.mjs URL RECORD_FILE [SDK_PACKAGE_DIR]');
        return 2;
    }
    const here = dirname(fileURLToPath(import.meta.url));
    const packageDir = resolve(argv[2] ?? join(here, '../../../target/test-tools/node/node_modules/@modelcontextprotocol/sdk'));
    let sdk;
    try {
        const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
        check(pkg.version.startsWith('1.'), `@modelcontextprotocol/sdk ${pkg.version} is not 1.x`);
        sdk = {
            ...(await loadModule(packageDir, 'client/index.js')),
            ...(await loadModule(packageDir, 'client/streamableHttp.js')),
            ...(await loadModule(packageDir, 'types.js'))
        };
        console.error(`@modelcontextprotocol/sdk ${pkg.version} from ${packageDir}, node ${process.version}`);
    } catch (err) {
        console.log(`FAIL load_sdk: ${describe(err)}`);
        console.log('0 passed, 1 failed');
        return 1;
    }
    const run = new Run(argv[0], sdk);
    return runWithin(run, OVERALL_TIMEOUT_MS, () => writeRecord(run, argv[1]));
}

process.exitCode = await main(process.argv.slice(2));
// Open sockets or timers left behind by a misbehaving peer must not keep the process alive.
process.exit(process.exitCode);
