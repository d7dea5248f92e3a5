#!/usr/bin/env node
// Interop client for the Skills extension (`io.modelcontextprotocol/skills`, SEP-2640),
// driven by the official TypeScript SDK v2 client (`@modelcontextprotocol/client`, pinned in
// tests/tools/package.json) and its `SkillsClient` (`@modelcontextprotocol/client/ext/skills`),
// over Streamable HTTP or stdio, in either era. Plain ESM, no build step; Node >= 22.
//
// Usage:
//     node skills.mjs CLIENT_PACKAGE_DIR RECORD_FILE ERA http URL
//     node skills.mjs CLIENT_PACKAGE_DIR RECORD_FILE ERA stdio COMMAND [ARGS...]
//
// ERA is `modern` (versionNegotiation pinned to 2026-07-28: the server/discover probe) or
// `legacy` (the SDK's default: an initialize handshake at 2025-11-25). The server has the
// demo fixtures, whose skill is skill://demo-tour/SKILL.md with references/TOOLS.md.
//
// Steps:
//     connect          Client.connect; the era and version are the ones asked for
//     supported        SkillsClient.supported: the server declared the extension (and
//                      `resources`) in server/discover or initialize
//     list             SkillsClient.list() (every page walked, every entry checked by the
//                      SDK) holds the demo skill: its front matter, its two files; the
//                      caching fields are there on 2026-07-28 and absent on 2025-11-25
//     get              SkillsClient.get(uri) returns the same entry
//     get_unknown      skills/get of a URI that names no skill: -32602
//     read_manifest    SkillsClient.read(skill): SKILL.md, size and digest verified, its
//                      front matter equal to the entry's, the body as written
//     read_file        SkillsClient.read(skill, 'references/TOOLS.md'): verified
//     no_sdk_errors    nothing reached Client.onerror
//
// Every message the SDK received is written to RECORD_FILE, one JSON object a line
// (`message`, and `answers`: the method of the request a response answers), for the test
// to check against the schema. One line per step (`ok <step>` / `FAIL <step>: reason`),
// then `N passed, M failed`; exit status 0 only if every step passed.

import { writeFileSync } from 'node:fs';

import { StepRun, TIMEOUT_MS, check, describe, loadClientPackage, net, runWithin } from './common.mjs';

const MODERN_VERSION = '2026-07-28';
const LEGACY_VERSION = '2025-11-25';
const SKILL_URI = 'skill://demo-tour/SKILL.md';
const FILE_URI = 'skill://demo-tour/references/TOOLS.md';
const OVERALL_TIMEOUT_MS = 60_000;

class Run extends StepRun {
    constructor(sdk, era, target) {
        super();
        this.sdk = sdk;
        this.era = era;
        this.target = target;
        this.errors = [];
        this.received = []; // {message, answers}
        this.sent = new Map(); // request id -> method
    }

    /** The transport, every message it carries recorded. */
    transport() {
        const { StreamableHTTPClientTransport, StdioClientTransport } = this.sdk;
        const [kind, ...rest] = this.target;
        const transport =
            kind === 'http'
                ? new StreamableHTTPClientTransport(new URL(rest[0]))
                : new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'inherit' });
        const send = transport.send.bind(transport);
        transport.send = (message, options) => {
            if (message.method !== undefined && message.id !== undefined) this.sent.set(message.id, message.method);
            return send(message, options);
        };
        let onmessage;
        Object.defineProperty(transport, 'onmessage', {
            configurable: true,
            get: () => onmessage,
            set: handler => {
                onmessage =
                    handler &&
                    ((message, extra) => {
                        const answers = message.method === undefined ? this.sent.get(message.id) ?? null : null;
                        this.received.push({ message, answers });
                        return handler(message, extra);
                    });
            }
        });
        return transport;
    }

    async connect() {
        const { Client, SkillsClient } = this.sdk;
        const options = this.era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN_VERSION } } } : {};
        this.client = new Client({ name: 'interop-ts-skills', version: '0.1.0' }, { capabilities: {}, ...options });
        this.client.onerror = err => this.errors.push(describe(err));
        await net(this.client.connect(this.transport(), { timeout: TIMEOUT_MS }), 'connect');
        const version = this.client.getNegotiatedProtocolVersion();
        const expected = this.era === 'modern' ? MODERN_VERSION : LEGACY_VERSION;
        check(version === expected, `negotiated ${version}, expected ${expected}`);
        this.skills = new SkillsClient(this.client);
    }

    async supported() {
        check(this.skills.supported, `SkillsClient.supported is false; capabilities ${JSON.stringify(this.client.getServerCapabilities())}`);
    }

    async list() {
        const listing = await net(this.skills.list({}, { timeout: TIMEOUT_MS }), 'skills.list');
        check(listing.invalid.length === 0, `invalid entries ${JSON.stringify(listing.invalid)}`);
        const skill = listing.skills.find(s => s.uri === SKILL_URI);
        check(skill !== undefined, `${SKILL_URI} not among ${JSON.stringify(listing.skills.map(s => s.uri))}`);
        check(skill.frontmatter.name === 'demo-tour', `name ${JSON.stringify(skill.frontmatter.name)}`);
        check(skill.frontmatter.metadata?.author === 'stateless-mcp', `front matter ${JSON.stringify(skill.frontmatter)}`);
        const uris = Array.isArray(skill.resources) ? skill.resources.map(r => r.uri) : skill.resources;
        check(JSON.stringify(uris) === JSON.stringify([SKILL_URI, FILE_URI]), `resources ${JSON.stringify(uris)}`);
        if (this.era === 'modern') {
            check(typeof listing.ttlMs === 'number' && listing.cacheScope !== undefined, `no caching fields on ${MODERN_VERSION}`);
        } else {
            check(listing.ttlMs === undefined && listing.cacheScope === undefined, `caching fields on ${LEGACY_VERSION}: ${listing.ttlMs} ${listing.cacheScope}`);
        }
        this.skill = skill;
    }

    async get() {
        const got = await net(this.skills.get(SKILL_URI, { timeout: TIMEOUT_MS }), 'skills.get');
        check(JSON.stringify(got.skill) === JSON.stringify(this.skill), `get ${JSON.stringify(got.skill)} differs from the listed ${JSON.stringify(this.skill)}`);
        check((got.ttlMs !== undefined) === (this.era === 'modern'), `ttlMs ${got.ttlMs} on ${this.era}`);
    }

    async getUnknown() {
        let error;
        try {
            await net(this.skills.get('skill://no-such-skill/SKILL.md', { timeout: TIMEOUT_MS }), 'skills.get');
        } catch (err) {
            error = err;
        }
        check(error !== undefined, 'skills/get of an unknown skill succeeded');
        check(error.code === -32602, `code ${error.code}: ${describe(error)}`);
    }

    async readManifest() {
        const file = await net(this.skills.read(this.skill, undefined, { timeout: TIMEOUT_MS }), 'skills.read');
        check(file.verified === true, 'SKILL.md not verified');
        check(file.uri === SKILL_URI, `uri ${file.uri}`);
        check(file.frontmatter?.name === 'demo-tour', `front matter ${JSON.stringify(file.frontmatter)}`);
        check(file.body?.startsWith('# Touring the demo server'), `body ${JSON.stringify(file.body?.slice(0, 60))}`);
        check(file.mimeType === 'text/markdown', `mimeType ${file.mimeType}`);
    }

    async readFile() {
        const file = await net(this.skills.read(this.skill, 'references/TOOLS.md', { timeout: TIMEOUT_MS }), 'skills.read');
        check(file.verified === true, 'references/TOOLS.md not verified');
        check(file.uri === FILE_URI, `uri ${file.uri}`);
        check(file.text?.startsWith('# The demo tools'), `text ${JSON.stringify(file.text?.slice(0, 60))}`);
    }

    async run() {
        const steps = [
            ['connect', () => this.connect()],
            ['supported', () => this.supported()],
            ['list', () => this.list()],
            ['get', () => this.get()],
            ['get_unknown', () => this.getUnknown()],
            ['read_manifest', () => this.readManifest()],
            ['read_file', () => this.readFile()]
        ];
        this.order = steps.map(([name]) => name).concat(['no_sdk_errors']);
        const needsEntry = ['get', 'read_manifest', 'read_file'];
        const skip = name => this.afterConnect(name) ?? (needsEntry.includes(name) && this.skill === undefined ? 'the skill was not listed' : undefined);
        await this.runSteps(steps, skip);
        this.recordSdkErrors(this.errors);
    }

    async closeAll() {
        if (this.client) await net(this.client.close(), 'client close').catch(() => {});
    }
}

async function main(argv) {
    if (argv.length < 5 || !['modern', 'legacy'].includes(argv[2]) || !['http', 'stdio'].includes(argv[3])) {
        console.error('usage: node skills.mjs CLIENT_PACKAGE_DIR RECORD_FILE modern|legacy http URL | stdio COMMAND [ARGS...]');
        return 2;
    }
    const [dir, recordFile, era, ...target] = argv;
    let sdk;
    try {
        const parts = await Promise.all([loadClientPackage(dir), loadClientPackage(dir, './stdio'), loadClientPackage(dir, './ext/skills')]);
        sdk = Object.assign({}, ...parts.map(p => p.mod));
        console.error(`@modelcontextprotocol/client ${parts[0].version}, node ${process.version}, ${era} over ${target[0]}`);
    } catch (err) {
        console.log(`FAIL load_sdk: ${describe(err)}`);
        console.log('0 passed, 1 failed');
        return 1;
    }
    const run = new Run(sdk, era, target);
    return runWithin(run, OVERALL_TIMEOUT_MS, () => {
        writeFileSync(recordFile, run.received.map(r => JSON.stringify(r)).join('\n') + '\n');
    });
}

process.exitCode = await main(process.argv.slice(2));
process.exit(process.exitCode);
