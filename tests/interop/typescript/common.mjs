// Helpers shared by the TypeScript interop clients: step checks, the per-call timeout,
// one-line failure reasons, loading the SDK package from its directory, and the summary line.

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
