#!/usr/bin/env node
// Interop client for an MCP 2026-07-28 server over stdio, driven by the official TypeScript
// SDK v2 client (`@modelcontextprotocol/client`, pinned in tests/tools/package.json) and its
// `StdioClientTransport`, which spawns the server. Plain ESM, no build step; Node >= 22.
//
// Usage:
//     node stdio.mjs CLIENT_PACKAGE_DIR COMMAND [ARGS...]
//
// COMMAND is a server with the demo and conformance fixtures (`stateless-mcp --transport
// stdio --fixtures conformance`). Steps:
//     connect           Client.connect with versionNegotiation pinned to 2026-07-28: the
//                       server/discover probe over the pipe succeeds, the era is "modern"
//     list_tools        tools/list contains echo
//     call_echo         tools/call echo returns its text
//     progress          tools/call test_tool_with_progress: onprogress sees 0, 50, 100
//     concurrent_calls  sleep 400 ms and echo issued together: the echo resolves first
//     mrtr_elicitation  test_input_required_result_elicitation completes through the
//                       registered elicitation/create handler ("Hello, <name>!")
//     listen            client.listen({toolsListChanged: true}) is acknowledged; after
//                       test_trigger_tool_change on the same connection the
//                       notifications/tools/list_changed handler fires, tagged with the
//                       listen id; subscription.close() settles `closed` as "local"
//     no_sdk_errors     nothing reached Client.onerror; the server wrote nothing but
//                       JSON-RPC on stdout (the SDK reports unparsable lines there)
//
// One line per step (`ok <step>` / `FAIL <step>: reason`), then `N passed, M failed`.
// Exit status 0 only if every step passed. Every call has a 10 s timeout, the run 120 s.

import { StepRun, TIMEOUT_MS, USER_NAME, check, describe, loadClientPackage, net, onlyText, runWithin, until } from './common.mjs';

const PROTOCOL_VERSION = '2026-07-28';
const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';
const OVERALL_TIMEOUT_MS = 120_000;

class Run extends StepRun {
    constructor(sdk, command) {
        super();
        this.sdk = sdk;
        this.command = command;
        this.errors = [];
        this.notifications = [];
    }

    async connect() {
        const { Client, StdioClientTransport } = this.sdk;
        this.client = new Client(
            { name: 'interop-ts-stdio', version: '0.1.0' },
            { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: PROTOCOL_VERSION } } }
        );
        this.client.onerror = err => this.errors.push(describe(err));
        this.client.setRequestHandler('elicitation/create', async () => ({
            action: 'accept',
            content: { name: USER_NAME }
        }));
        this.client.setNotificationHandler('notifications/tools/list_changed', n => {
            this.notifications.push(n);
        });
        const [command, ...args] = this.command;
        const transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
        await net(this.client.connect(transport, { timeout: TIMEOUT_MS }), 'connect');
        check(this.client.getProtocolEra() === 'modern', `era ${this.client.getProtocolEra()}`);
        const version = this.client.getNegotiatedProtocolVersion();
        check(version === PROTOCOL_VERSION, `negotiated ${version}`);
    }

    async listTools() {
        const { tools } = await net(this.client.listTools({}, { timeout: TIMEOUT_MS }));
        const names = tools.map(t => t.name);
        check(names.includes('echo'), `echo not in ${JSON.stringify(names)}`);
    }

    call(name, args, options = {}) {
        return net(this.client.callTool({ name, arguments: args }, { timeout: TIMEOUT_MS, ...options }), name);
    }

    async callEcho() {
        const text = onlyText(await this.call('echo', { text: 'over stdio' }), 'echo');
        check(text === 'over stdio', `echo returned ${JSON.stringify(text)}`);
    }

    async progress() {
        // test_tool_with_progress pauses 50 ms after each notification. (The SDK dispatches
        // notifications in a microtask but responses at once, so a progress notification
        // read in the same chunk as its response reaches it after the request is settled
        // and is reported as "unknown token": `count`, whose last progress comes right
        // before its result, shows that.)
        const seen = [];
        const result = await this.call('test_tool_with_progress', {}, { onprogress: p => seen.push(p.progress) });
        onlyText(result, 'test_tool_with_progress');
        check(JSON.stringify(seen) === '[0,50,100]', `progress seen ${JSON.stringify(seen)}`);
    }

    async concurrentCalls() {
        const order = [];
        const slow = this.call('sleep', { ms: 400 }).then(() => order.push('slow'));
        await new Promise(done => setTimeout(done, 50));
        const fast = this.call('echo', { text: 'quick' }).then(() => order.push('fast'));
        await Promise.all([slow, fast]);
        check(JSON.stringify(order) === '["fast","slow"]', `completion order ${JSON.stringify(order)}`);
    }

    async mrtrElicitation() {
        const text = onlyText(await this.call('test_input_required_result_elicitation', {}), 'result');
        check(text === `Hello, ${USER_NAME}!`, `result ${JSON.stringify(text)}`);
    }

    async listen() {
        const sub = await net(this.client.listen({ toolsListChanged: true }, { timeout: TIMEOUT_MS }), 'listen');
        check(sub.honoredFilter?.toolsListChanged === true, `honoured ${JSON.stringify(sub.honoredFilter)}`);
        onlyText(await this.call('test_trigger_tool_change', {}), 'trigger');
        await until(() => this.notifications.some(n => n.params?._meta?.[SUBSCRIPTION_ID_KEY] !== undefined), 'list_changed');
        await net(sub.close(), 'close');
        const how = await net(sub.closed, 'closed');
        check(how === 'local', `closed as ${JSON.stringify(how)}`);
    }

    async run() {
        const steps = [
            ['connect', () => this.connect()],
            ['list_tools', () => this.listTools()],
            ['call_echo', () => this.callEcho()],
            ['progress', () => this.progress()],
            ['concurrent_calls', () => this.concurrentCalls()],
            ['mrtr_elicitation', () => this.mrtrElicitation()],
            ['listen', () => this.listen()]
        ];
        this.order = steps.map(([name]) => name).concat(['no_sdk_errors']);
        await this.runSteps(steps, name => this.afterConnect(name));
        this.recordSdkErrors(this.errors);
    }

    async closeAll() {
        if (this.client) await net(this.client.close(), 'client close').catch(() => {});
    }
}

async function main(argv) {
    if (argv.length < 2) {
        console.error('usage: node stdio.mjs CLIENT_PACKAGE_DIR COMMAND [ARGS...]');
        return 2;
    }
    let sdk;
    try {
        const [index, stdio] = await Promise.all([loadClientPackage(argv[0]), loadClientPackage(argv[0], './stdio')]);
        sdk = { ...index.mod, ...stdio.mod };
        console.error(`@modelcontextprotocol/client ${index.version}, node ${process.version}`);
    } catch (err) {
        console.log(`FAIL load_sdk: ${describe(err)}`);
        console.log('0 passed, 1 failed');
        return 1;
    }
    return runWithin(new Run(sdk, argv.slice(1)), OVERALL_TIMEOUT_MS);
}

process.exitCode = await main(process.argv.slice(2));
process.exit(process.exitCode);
