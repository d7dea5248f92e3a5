#!/usr/bin/env node
// Interop client for resumable 2025-11-25 streams, driven by the official TypeScript SDK v1
// (`@modelcontextprotocol/sdk` 1.x, pinned in tests/tools/package.json): `Client.callTool`
// of `test_reconnection`, whose POST stream the server closes before the result; the SDK
// reconnects by itself with GET + `Last-Event-ID` and gets the result there.
//
// Usage:
//     node resume.mjs URL [SDK_PACKAGE_DIR]
//
// Prints which replica (`x-mcp-replica`) answered the call and the resuming GETs, then
// `ok resume` or `FAIL resume: reason`, then `N passed, M failed`; exit status 0 only
// if it passed. The whole run has a 30 s timeout.

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [url, sdkDir = 'target/test-tools/node/node_modules/@modelcontextprotocol/sdk'] =
    process.argv.slice(2);
const load = sub => import(pathToFileURL(join(sdkDir, 'dist/esm', sub)).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');

const timer = setTimeout(() => {
    console.log('FAIL resume: no result within 30 s');
    console.log('0 passed, 1 failed');
    process.exit(1);
}, 30_000);

const requests = [];
const recordingFetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const entry = { method: init?.method ?? 'GET', lastEventId: headers.get('last-event-id') };
    entry.call = typeof init?.body === 'string' && init.body.includes('"tools/call"');
    requests.push(entry);
    const response = await fetch(input, init);
    entry.replica = response.headers.get('x-mcp-replica');
    return response;
};
const errors = [];
let failed = null;
try {
    const client = new Client({ name: 'it-resume', version: '1.0.0' }, { capabilities: {} });
    client.onerror = e => errors.push(String(e?.message ?? e));
    const transport = new StreamableHTTPClientTransport(new URL(url), {
        fetch: recordingFetch,
        reconnectionOptions: {
            initialReconnectionDelay: 100,
            maxReconnectionDelay: 1000,
            reconnectionDelayGrowFactor: 1.5,
            maxRetries: 3
        }
    });
    await client.connect(transport);
    const result = await client.callTool({ name: 'test_reconnection', arguments: {} });
    const text = result?.content?.[0]?.text ?? '';
    const resumed = requests.filter(r => r.method === 'GET' && r.lastEventId);
    if (result?.isError) failed = `isError: ${JSON.stringify(result)}`;
    else if (!text.startsWith('Reconnection test completed successfully')) failed = `result ${JSON.stringify(result)}`;
    else if (resumed.length === 0) failed = 'the SDK never sent GET with Last-Event-ID';
    else if (errors.length) failed = `SDK errors: ${errors.join('; ')}`;
    const call = requests.find(r => r.call);
    console.log(`replicas: call ${call?.replica} resumed ${resumed.map(r => r.replica).join(',')}`);
    await transport.terminateSession().catch(() => {});
    await client.close();
} catch (e) {
    failed = String(e?.stack ?? e);
}
clearTimeout(timer);
console.log(failed ? `FAIL resume: ${failed}` : 'ok resume');
console.log(failed ? '0 passed, 1 failed' : '1 passed, 0 failed');
process.exit(failed ? 1 : 0);
