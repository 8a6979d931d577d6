// The browser's key in Chromium (docs/format.md 7.3): a non-extractable WebCrypto Ed25519 key
// kept in IndexedDB, the same key again on the next open, signatures that verify; and the
// fallback where WebCrypto has no Ed25519: a seed used inside WASM, stored only sealed by a
// non-extractable AES-GCM key, signing with the same public key across opens.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStaticServer, type StaticServer } from './static-server.js';

const CHROMIUM = '/usr/bin/chromium';
let server: StaticServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run make setup`);
  server = await startStaticServer();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  page = await browser.newPage();
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => document.title === 'ready');
  // The modules exactly as an app imports them (ts/dist), loaded by the page itself.
  await page.addScriptTag({ type: 'module', content: "import { DeviceKey } from '/ts/dist/browser/device-key.js'; "
    + "import { loadWasm } from '/ts/dist/wasm.js'; window.ikiKey = { DeviceKey, loadWasm };" });
  await page.waitForFunction(() => 'ikiKey' in window);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Opens the key (after forgetting any), signs a message twice across opens, and reports. */
async function inPage(fallback: boolean) {
  const { DeviceKey, loadWasm } = (window as unknown as { ikiKey: {
    DeviceKey: typeof import('../../src/browser/device-key.js').DeviceKey; loadWasm: () => Promise<unknown> } }).ikiKey;
  await loadWasm();
  await DeviceKey.forget();
  const first = await DeviceKey.open({ name: 'test browser', fallback });
  const again = await DeviceKey.open();
  const message = new TextEncoder().encode('IKIFMT-SIGNATURE-V1\u0000 a digest of 32 bytes .......');
  const signature = await (await again.signer()).sign(message);
  const publicKey = await crypto.subtle.importKey('raw', first.info().publicKey as Uint8Array<ArrayBuffer>, { name: 'Ed25519' }, true, ['verify']);
  const verifies = await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, signature as Uint8Array<ArrayBuffer>, message);
  const record = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const open = indexedDB.open('iki-device-key');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const get = open.result.transaction('keys').objectStore('keys').get('current');
      get.onsuccess = () => resolve(get.result as Record<string, unknown>);
    };
  });
  const secretKey = (record.privateKey ?? record.wrapKey) as CryptoKey;
  const exported = await crypto.subtle.exportKey('jwk', secretKey).then(() => 'exported', (e: Error) => e.name);
  return { kind: again.info().kind, same: first.info().fingerprint === again.info().fingerprint, verifies,
    stored: Object.keys(record).sort(), extractable: secretKey.extractable, exported, sealed: (record.sealedSeed as Uint8Array | undefined)?.length };
}

describe('the browser\'s key', () => {
  it('is a non-extractable WebCrypto Ed25519 key kept in IndexedDB', async () => {
    const result = await page.evaluate(inPage, false);
    expect(result).toMatchObject({ kind: 'webcrypto', same: true, verifies: true, extractable: false, exported: 'InvalidAccessError' });
    expect(result.stored).toEqual(['createdMs', 'kind', 'name', 'privateKey', 'publicCryptoKey', 'publicKey']);
  });

  it('falls back to a WASM key sealed by a non-extractable AES-GCM key', async () => {
    const result = await page.evaluate(inPage, true);
    // 32-byte seed + 16-byte tag, never the seed itself.
    expect(result).toMatchObject({ kind: 'wasm-fallback', same: true, verifies: true, extractable: false, exported: 'InvalidAccessError', sealed: 48 });
    expect(result.stored).toEqual(['createdMs', 'iv', 'kind', 'name', 'publicKey', 'sealedSeed', 'wrapKey']);
  });
});
