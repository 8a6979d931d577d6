// The page-worker RPC of @iki/core/browser in Chromium (Debian's, via playwright-core): a test
// worker and page bundled here with esbuild, as scripts/build-web.mjs bundles the service's.
// Buffers move both ways (detached on the sending side), progress arrives in order, a
// cancelled task rejects with AbortError at once and the worker sees its signal, errors keep
// their class and fields, the worker's own WASM instance works while the page loads none,
// and terminate() ends pending work.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey, toBase64Url } from '../../src/keys.js';
import { loadWasm } from '../../src/wasm.js';
import { FAKE_SEED } from '../container-support.js';
import type { WorkerClient } from '../../src/browser/worker-client.js';
import type { RpcPage } from './rpc/test-page.js';
import type { TestTasks } from './rpc/test-worker.js';
import { startStaticServer, type StaticServer } from './static-server.js';

const CHROMIUM = '/usr/bin/chromium';
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

let dir: string;
let server: StaticServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

/** What the test page puts on window, and the client the tests share. */
type PageWindow = { rpc: RpcPage; client: WorkerClient<TestTasks> };

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run make setup`);
  dir = await mkdtemp(join(tmpdir(), 'iki-rpc-'));
  await build({
    entryPoints: [{ in: here('./rpc/test-worker.ts'), out: 'test-worker' }, { in: here('./rpc/test-page.ts'), out: 'test-page' }],
    outdir: dir, bundle: true, format: 'esm', platform: 'browser', target: 'es2022', logLevel: 'warning',
  });
  server = await startStaticServer(dir);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${server.url}/`);
  await page.addScriptTag({ type: 'module', url: '/extra/test-page.js' });
  await page.waitForFunction(() => document.title === 'rpc ready');
  await page.evaluate(async () => {
    const w = window as unknown as PageWindow;
    w.client = new w.rpc.WorkerClient(w.rpc.startModuleWorker('/extra/test-worker.js', 'rpc-test'), { wasmUrl: '/pkg/iki_wasm_bg.wasm' });
    await w.client.ready();
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('worker RPC in Chromium', () => {
  it('runs WASM in the worker\'s own instance while the page loads none', async () => {
    await loadWasm();
    const key = SigningKey.fromSeed(FAKE_SEED);
    const expected = toBase64Url(key.publicKey);
    key.free();
    const found = await page.evaluate(async (seed) => {
      const w = window as unknown as PageWindow;
      const { client } = w;
      return {
        publicKey: await client.run('publicKey', { seed: new Uint8Array(seed) }),
        pageFetched: performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname),
      };
    }, Array.from(FAKE_SEED));
    expect(found.publicKey).toBe(expected);
    expect(found.pageFetched.filter((p) => p.endsWith('.wasm'))).toEqual([]);
    const inWorker = await page.workers()[0]?.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname));
    expect(inWorker).toContain('/pkg/iki_wasm_bg.wasm');
  });

  it('moves buffers both ways instead of copying them', async () => {
    const result = await page.evaluate(async () => {
      const w = window as unknown as PageWindow;
      const { client } = w;
      const filled = await client.run('fill', { size: 4 << 20, value: 7 });
      const leftInWorker = await client.run('lastSentLength', undefined);
      const bytes = new Uint8Array(1 << 20).fill(3);
      const sum = await client.run('sum', { bytes }, { transfer: [bytes.buffer] });
      return { length: filled.length, first: filled[0], last: filled[filled.length - 1], leftInWorker, sum, leftOnPage: bytes.byteLength };
    });
    expect(result).toEqual({ length: 4 << 20, first: 7, last: 7, leftInWorker: 0, sum: { length: 1 << 20, sum: 3 << 20 }, leftOnPage: 0 });
  });

  it('reports progress and cancels: the page rejects at once, the worker stops', async () => {
    const result = await page.evaluate(async () => {
      const w = window as unknown as PageWindow;
      const { client } = w;
      const seen: number[] = [];
      const all = await client.run('count', { to: 5, stepMs: 1 }, { onProgress: (n: number) => seen.push(n) });
      const controller = new AbortController();
      const cancelled: number[] = [];
      const started = performance.now();
      let error: { name: string } | undefined;
      try {
        await client.run('count', { to: 10_000, stepMs: 20 }, {
          signal: controller.signal,
          onProgress: (n: number) => {
            cancelled.push(n);
            if (n === 2) controller.abort();
          },
        });
      } catch (e) {
        error = { name: (e as Error).name };
      }
      const elapsed = performance.now() - started;
      // The worker notices at its next step.
      await new Promise((resolve) => setTimeout(resolve, 100));
      return { all, seen, error, elapsed, reports: cancelled.length, workerCancelled: await client.run('wasCancelled', undefined) };
    });
    expect(result.all).toBe(5);
    expect(result.seen).toEqual([0, 1, 2, 3, 4]);
    expect(result.error).toEqual({ name: 'AbortError' });
    expect(result.elapsed).toBeLessThan(5_000);
    expect(result.reports).toBeLessThan(10);
    expect(result.workerCancelled).toBe(true);
  });

  it('keeps the class and fields of errors thrown in the worker', async () => {
    const errors = await page.evaluate(async () => {
      const w = window as unknown as PageWindow;
      const { client } = w;
      const out: Record<string, unknown>[] = [];
      for (const kind of ['api', 'iki', 'type'] as const) {
        try {
          await client.run('fail', { kind });
        } catch (e) {
          const err = e as Error & Record<string, unknown>;
          out.push({ api: e instanceof w.rpc.ApiProblem, iki: e instanceof w.rpc.IkiError, name: err.name, message: err.message,
            code: err['code'], status: err['status'], requestId: err['requestId'], retry: err['retryAfterSeconds'],
            details: err['details'] });
        }
      }
      return out;
    });
    expect(errors).toEqual([
      { api: true, iki: false, name: 'ApiProblem', message: 'too many key releases', code: 'RATE_LIMITED', status: 429,
        requestId: 'req_0123', retry: 30, details: { scope: 'license' } },
      { api: false, iki: true, name: 'IkiError', message: 'decryption failed', code: 'DECRYPT_FAILED', status: undefined,
        requestId: undefined, retry: undefined, details: { chunk: 3 } },
      { api: false, iki: false, name: 'TypeError', message: 'not a license id', code: undefined, status: undefined,
        requestId: undefined, retry: undefined, details: undefined },
    ]);
  });

  it('terminate() ends pending work with AbortError; a worker whose WASM cannot load says so', async () => {
    const result = await page.evaluate(async () => {
      const w = window as unknown as PageWindow;
      const { client } = w;
      const pending = client.run('count', { to: 10_000, stepMs: 20 }).then(() => 'finished', (e: Error) => e.name);
      client.terminate();
      const after = await client.run('lastSentLength', undefined).then(() => 'ran', (e: Error) => e.name);
      const broken = new w.rpc.WorkerClient(w.rpc.startModuleWorker('/extra/test-worker.js'), { wasmUrl: '/pkg/missing.wasm' });
      const failed = await (broken as WorkerClient<TestTasks>).run('lastSentLength', undefined).then(() => 'ran', (e: Error) => e.message);
      broken.terminate();
      return { pending: await pending, after, failed };
    });
    expect(result.pending).toBe('AbortError');
    expect(result.after).toBe('AbortError');
    expect(result.failed).toMatch(/404 Not Found/);
    expect(pageErrors).toEqual([]);
  });
});
