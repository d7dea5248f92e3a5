// Helpers shared by the TypeScript interop clients: step checks, the per-call timeout,
// one-line failure reasons, loading the SDK package from its directory, the answers to the
// fixtures' input requests, running and recording steps, and the summary line.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The timeout of every call. */
export const TIMEOUT_MS = 10_000;

export class CheckFailed extends Error {}

export function check(cond, reason) {
    if (!cond) throw new CheckFailed(reason);
}

/** Resolves with `promise`, or rejects after the 10 s timeout. */
export function net(promise, what = 'call') {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new CheckFailed(`${what} timed out after ${TIMEOUT_MS / 1000}s`)), TIMEOUT_MS);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Polls `cond` every 10 ms until it holds, under the 10 s timeout. */
export function until(cond, what) {
    return net(
        new Promise(done => {
            const tick = () => (cond() ? done() : setTimeout(tick, 10));
            tick();
        }),
        what
    );
}

export const sleep = ms => new Promise(done => setTimeout(done, ms));

export function describe(err) {
    if (err instanceof CheckFailed) return err.message;
    const code = err?.code !== undefined ? ` code=${JSON.stringify(err.code)}` : '';
    const data = err?.data !== undefined ? ` data=${JSON.stringify(err.data)}` : '';
    const text = `${err?.name ?? 'Error'}${code}: ${String(err?.message ?? err)}${data}`.replace(/\s+/g, ' ');
    return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

/** A request body as the SDK sent it: parsed JSON, or `{unreadable: text}`. */
export function parsedBody(text) {
    try {
        return JSON.parse(text);
    } catch {
        return { unreadable: text };
    }
}

export function onlyText(result, what) {
    check(!result.isError, `${what}: isError=true: ${JSON.stringify(result.content)}`);
    const blocks = result.content ?? [];
    check(blocks.length === 1, `${what}: expected 1 content block, got ${JSON.stringify(blocks)}`);
    check(blocks[0].type === 'text', `${what}: content block is not text: ${JSON.stringify(blocks[0])}`);
    return blocks[0].text;
}

export async function loadClientPackage(dir, subpath = '.') {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const entry = pkg.exports?.[subpath]?.import?.default;
    if (typeof entry !== 'string') throw new Error(`${dir}/package.json has no ESM entry point for ${subpath}`);
    const mod = await import(pathToFileURL(join(dir, entry)).href);
    return { mod, version: pkg.version };
}

export function summarize(run) {
    const reasons = [...run.results.values()];
    const passed = reasons.filter(r => r === null).length;
    const failed = reasons.length - passed;
    console.log(`${passed} passed, ${failed} failed`);
    return failed === 0 && passed > 0 ? 0 : 1;
}

/** What the clients answer the conformance fixtures' elicitation, sampling and roots requests. */
export const USER_NAME = 'Ada Lovelace';
export const FAVORITE_COLOR = 'teal';
export const SAMPLING_MODEL = 'interop-model';
export const ROOTS = [{ uri: 'file:///work/project', name: 'project' }, { uri: 'file:///work/notes' }];

/**
 * Handlers for the server's elicitation, sampling and roots requests (register them under
 * the SDK's method names or schemas); each records [kind, params] in `run.asked`. The
 * elicitation answers the name, or the colour when asked for one; sampling answers
 * `samplingText` from SAMPLING_MODEL.
 */
export function inputHandlers(run, samplingText) {
    return {
        elicitation: async request => {
            const params = request.params;
            run.asked.push(['elicitation', params]);
            const message = params?.message ?? '';
            const content = message.includes('color') ? { color: FAVORITE_COLOR } : { name: USER_NAME };
            return { action: 'accept', content };
        },
        sampling: async request => {
            run.asked.push(['sampling', request.params]);
            return {
                role: 'assistant',
                content: { type: 'text', text: samplingText },
                model: SAMPLING_MODEL,
                stopReason: 'endTurn'
            };
        },
        roots: async request => {
            run.asked.push(['roots', request.params]);
            return { roots: ROOTS };
        }
    };
}

/**
 * One interop run: the outcome of each step, printed as it is recorded, and what the SDK
 * handed to the request handlers. Subclasses define `run()` and `closeAll()`.
 */
export class StepRun {
    constructor() {
        this.results = new Map(); // step -> null (ok) or failure reason
        this.order = []; // every step the run records, for the ones an abort leaves
        this.asked = []; // [kind, params] the SDK handed to the request handlers
    }

    record(step, reason) {
        this.results.set(step, reason);
        console.log(reason === null ? `ok ${step}` : `FAIL ${step}: ${reason}`);
    }

    takeAsked() {
        const asked = this.asked;
        this.asked = [];
        return asked;
    }

    /**
     * Runs `steps` ([name, fn] pairs) one after the other and records each. `skip(name)`
     * returns a failure reason to record instead of running the step (or undefined); every
     * step starts with nothing asked.
     */
    async runSteps(steps, skip = () => undefined) {
        for (const [name, fn] of steps) {
            const reason = skip(name);
            if (reason !== undefined) {
                this.record(name, reason);
                continue;
            }
            this.takeAsked();
            try {
                await fn();
                this.record(name, null);
            } catch (err) {
                this.record(name, describe(err));
            }
        }
    }

    /** Skips every step after `connect` when `connect` failed. */
    afterConnect(name) {
        return name !== 'connect' && this.results.get('connect') !== null ? 'not connected' : undefined;
    }

    /** The step `no_sdk_errors`: what the SDK reported through Client.onerror. */
    recordSdkErrors(errors) {
        const text = errors.join('; ');
        this.record('no_sdk_errors', text === '' ? null : `Client.onerror reported: ${text.slice(0, 600)}`);
    }

    /** Records every step of `order` not recorded yet as failed with `reason`. */
    abortRest(reason) {
        for (const name of this.order.length ? this.order : ['run']) {
            if (!this.results.has(name)) this.record(name, reason);
        }
    }
}

/**
 * Runs `run.run()` then `run.closeAll()` within `overallMs`, calls `finish()` (also when the
 * time runs out, then exits), and returns the exit status of the summary.
 */
export async function runWithin(run, overallMs, finish = () => {}) {
    const overall = setTimeout(() => {
        run.abortRest(`run aborted: whole run exceeded ${overallMs / 1000}s`);
        finish();
        process.exit(summarize(run));
    }, overallMs);
    try {
        await run.run();
    } catch (err) {
        run.abortRest(`run aborted: ${describe(err)}`);
    }
    await run.closeAll();
    clearTimeout(overall);
    finish();
    return summarize(run);
}
