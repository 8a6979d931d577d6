// An encrypted container written and read inside Chromium with the same
// pkg/ .wasm (Debian's Chromium driven by playwright-core; the page imports
// ts/dist as a browser app would). The file made in the page is then opened
// in Node too, so both builds agree byte for byte on the format.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openContainer } from '../../src/container.js';
import { X25519Identity } from '../../src/keys.js';
import { loadWasm } from '../../src/wasm.js';
import { startStaticServer, type StaticServer } from './static-server.js';

const CHROMIUM = '/usr/bin/chromium';

let server: StaticServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run make setup`);
  if (!existsSync(new URL('../../dist/index.js', import.meta.url))) throw new Error('ts/dist missing: run make build');
  server = await startStaticServer();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => document.title === 'ready');
  // The whole library, as a browser app imports it (ts/dist/index.js loads pkg/ by fetch).
  await page.addScriptTag({ type: 'module', content: "import * as iki from '/ts/dist/index.js'; window.ikiCore = iki;" });
  await page.waitForFunction(() => 'ikiCore' in window);
  await loadWasm();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** What the page does: everything through ts/dist/index.js, as an app would. */
async function inPage(identitySecret: number[]) {
  const iki = (window as unknown as { ikiCore: typeof import('../../src/index.js') }).ikiCore;
  await iki.loadWasm();
  const key = iki.SigningKey.generate();
  const recipient = iki.X25519Identity.fromBytes(new Uint8Array(identitySecret));
  const data = new Uint8Array(300_000).map((_, i) => (i * 31 + (i >> 9)) & 0xff);
  const sha = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', data)), (b) => b.toString(16).padStart(2, '0')).join('');
  try {
    const stream = iki.writeContainer(
      [{ path: 'assets/data.bin', type: 'application/octet-stream', encoding: 'deflate', data, size: data.length, sha256: sha }],
      {
        kind: 'project',
        signingKey: key,
        signer: { kind: 'device', name: 'chromium' },
        meta: { format: 'iki-project', version: 1, name: 'Browser', savedAt: '2024-05-01T12:30:00Z', canvas: { width: 1, height: 1 }, app: 'test' },
        chunkSize: 65536,
        protection: { password: 'pässword', passwordCost: { mKib: 8, t: 1, p: 1 }, recipients: [recipient.publicKey] },
      },
    );
    // A native ReadableStream straight into the reader.
    const [toRead, toKeep] = stream.tee();
    const types: string[] = [];
    let read = 0;
    for await (const event of iki.readContainer(toRead, { kind: 'project', unlock: { password: 'pa\u0308ssword' } })) {
      types.push(event.type);
      if (event.type === 'chunk') read += event.data.length;
    }
    const file = await iki.collect(toKeep);
    let wrong: { isIki: boolean; code?: string } | undefined;
    try {
      await iki.openContainer(file, { kind: 'project', unlock: { password: 'wrong' } });
    } catch (e) {
      wrong = { isIki: e instanceof iki.IkiError, code: (e as { code?: string }).code };
    }
    const opened = await iki.openContainer(file, { kind: 'project', unlock: { identity: recipient } });
    const same = opened.entries.get('assets/data.bin')?.every((b, i) => b === data[i]) ?? false;
    return { types: [...new Set(types)], read, wrong, same, file: Array.from(file), sha, publicKey: Array.from(key.publicKey) };
  } finally {
    key.free();
    recipient.free();
  }
}

describe('containers in Chromium', () => {
  it('writes and reads an encrypted container with the browser build', async () => {
    const identity = X25519Identity.generate();
    try {
      const result = await page.evaluate(inPage, Array.from(identity.exportSecret()));
      expect(result.types).toEqual(['header', 'locked', 'manifest', 'chunk', 'entryVerified', 'end']);
      expect(result.read).toBe(300_000);
      expect(result.wrong).toEqual({ isIki: true, code: 'DECRYPT_FAILED' });
      expect(result.same).toBe(true);
      // The page's file opens in Node with the recipient's identity.
      const opened = await openContainer(new Uint8Array(result.file), { kind: 'project', unlock: { identity } });
      expect(opened.header.encrypted).toBe(true);
      expect(opened.verified.publicKey).toEqual(new Uint8Array(result.publicKey));
      expect(opened.verified.signer).toEqual({ kind: 'device', name: 'chromium' });
      expect(opened.manifest?.entries[0]?.sha256).toBe(result.sha);
    } finally {
      identity.free();
    }
  });

  it('derives a password slot at the default Argon2id cost (64 MiB, 3 passes) inside the page', async () => {
    const result = await page.evaluate(async () => {
      const iki = (window as unknown as { ikiCore: typeof import('../../src/index.js') }).ikiCore;
      const key = iki.SigningKey.generate();
      const data = new TextEncoder().encode('{"doc":1}');
      try {
        const meta = { format: 'iki-project', version: 1, name: 'B', savedAt: '2024-05-01T12:30:00Z', canvas: { width: 1, height: 1 }, app: 'test' };
        const started = performance.now();
        const file = await iki.collect(iki.writeContainer(
          [{ path: 'snapshot.json', type: 'application/x-iki-snapshot', encoding: 'deflate', data, size: data.length }],
          { kind: 'project', signingKey: key, signer: { kind: 'device' }, meta, protection: { password: 'correct horse' } },
        ));
        const written = performance.now() - started;
        const opened = await iki.openContainer(file, { kind: 'project', unlock: { password: 'correct horse' } });
        return { written, slots: opened.slots, text: new TextDecoder().decode(opened.entries.get('snapshot.json')) };
      } finally {
        key.free();
      }
    });
    expect(result.slots).toEqual([{ type: 'password', kdf: 1, mKib: 65536, t: 3, p: 1 }]);
    expect(result.text).toBe('{"doc":1}');
    // One derivation at full cost: far more than the cheap test cost would take.
    expect(result.written).toBeGreaterThan(20);
  });

  it('logged no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
