// The same pkg/ in a real browser: Debian's Chromium, driven by playwright-core
// (never a downloaded browser), loads ts/dist and pkg/ from a localhost static
// server; hashes computed in the page must match node:crypto.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IkiError, callWasm } from '../../src/errors.js';
import type { loadWasm } from '../../src/wasm.js';
import { startStaticServer, type StaticServer } from './static-server.js';

const CHROMIUM = '/usr/bin/chromium';

/** What page.html puts on window (the built library, as a browser app sees it). */
interface PageIki {
  loadWasm: typeof loadWasm;
  IkiError: typeof IkiError;
  callWasm: typeof callWasm;
}
type PageWindow = typeof globalThis & { iki: PageIki };

/** Deterministic test bytes, built the same way in Node and in the page. */
function pattern(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + 7) & 0xff;
  return bytes;
}

let server: StaticServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const wasmResponses: { status: number; type: string | undefined }[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run make setup`);
  if (!existsSync(new URL('../../dist/wasm.js', import.meta.url))) throw new Error('ts/dist missing: run make build');
  server = await startStaticServer();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  page.on('response', (r) => {
    if (r.url().endsWith('/pkg/iki_wasm_bg.wasm')) wasmResponses.push({ status: r.status(), type: r.headers()['content-type'] });
  });
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => document.title === 'ready');
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('iki WASM in Chromium', () => {
  it('fetches pkg/iki_wasm_bg.wasm over HTTP and loads it once', async () => {
    const same = await page.evaluate(async () => {
      const { iki } = window as unknown as PageWindow;
      const [a, b] = await Promise.all([iki.loadWasm(), iki.loadWasm()]);
      return a === b && typeof a.version() === 'string';
    });
    expect(same).toBe(true);
    expect(wasmResponses).toEqual([{ status: 200, type: 'application/wasm' }]);
  });

  it.each([0, 3, 64, 100_003])('sha256 of %i pattern bytes matches node:crypto', async (length) => {
    const inPage = await page.evaluate(async (n) => {
      const { iki } = window as unknown as PageWindow;
      const bytes = new Uint8Array(n);
      for (let i = 0; i < n; i++) bytes[i] = (i * 31 + 7) & 0xff;
      const digest = (await iki.loadWasm()).sha256(bytes);
      return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
    }, length);
    expect(inPage).toBe(createHash('sha256').update(pattern(length)).digest('hex'));
  });

  it('streams with Sha256Hasher and reports INVALID_STATE as IkiError', async () => {
    const result = await page.evaluate(async () => {
      const { iki } = window as unknown as PageWindow;
      const { Sha256Hasher } = await iki.loadWasm();
      const hasher = new Sha256Hasher();
      try {
        const bytes = new Uint8Array(10_000);
        for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) & 0xff;
        for (let at = 0; at < bytes.length; at += 4096) hasher.update(bytes.subarray(at, at + 4096));
        const digest = Array.from(hasher.finish(), (b) => b.toString(16).padStart(2, '0')).join('');
        try {
          iki.callWasm(() => hasher.update(bytes));
          return { digest, error: null };
        } catch (e) {
          const isIki = e instanceof iki.IkiError;
          return { digest, error: { isIki, code: (e as { code?: string }).code, details: (e as { details?: unknown }).details } };
        }
      } finally {
        hasher.free();
      }
    });
    expect(result.digest).toBe(createHash('sha256').update(pattern(10_000)).digest('hex'));
    expect(result.error).toEqual({ isIki: true, code: 'INVALID_STATE', details: { operation: 'update after finish' } });
  });

  it('logged no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
