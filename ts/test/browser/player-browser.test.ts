// The player in Chromium (Debian's, driven by playwright-core; the page imports ts/dist as a
// browser app would): a PlayerSession made in the page accepts a license key sealed in Node
// to its public key and reads a license copy made in Node; the plaintext it reports matches
// Node's reading of the same copy, and a second accept is refused.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey } from '../../src/keys.js';
import { openLicenseCopy, PlayerSession } from '../../src/player.js';
import type { ServiceKeys } from '../../src/service.js';
import { loadWasm } from '../../src/wasm.js';
import { FAKE_SEED, writeAll } from '../container-support.js';
import { LICENSE_A, licenseCopy, masterOptions, masterRef, modelEntries, serviceKeys } from '../service-support.js';
import { startStaticServer, type StaticServer } from './static-server.js';

const CHROMIUM = '/usr/bin/chromium';

let server: StaticServer;
let browser: Browser;
let page: Page;
let keys: ServiceKeys;
let master: Uint8Array;
let copy: Uint8Array;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run make setup`);
  if (!existsSync(new URL('../../dist/index.js', import.meta.url))) throw new Error('ts/dist missing: run make build');
  await loadWasm();
  keys = serviceKeys();
  master = await writeAll(modelEntries(), masterOptions(SigningKey.fromSeed(FAKE_SEED), keys.x25519PublicKey));
  copy = await licenseCopy(keys, master, LICENSE_A);
  server = await startStaticServer();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage();
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => document.title === 'ready');
  await page.addScriptTag({ type: 'module', content: "import * as iki from '/ts/dist/index.js'; window.ikiCore = iki;" });
  await page.waitForFunction(() => 'ikiCore' in window);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  keys?.free();
});

type Core = typeof import('../../src/index.js');
type PageWindow = { ikiCore: Core; session?: PlayerSession };
/** What Node hands the page: the license id, the sealed answer, the copy and the signing key. */
interface PageArgs { licenseId: string; sealed: { ephemeral: number[]; nonce: number[]; sealed: number[] }; copy: number[]; signing: number[] }

/** SHA-256 (hex) of each entry's plaintext, by path, from a stream of read events. */
async function digests(events: AsyncIterable<{ type: string; entry?: number; data?: Uint8Array; manifest?: { entries: { path: string }[] } }>) {
  const parts: Uint8Array[][] = [];
  let paths: string[] = [];
  for await (const e of events) {
    if (e.type === 'manifest') paths = e.manifest?.entries.map((x) => x.path) ?? [];
    if (e.type === 'chunk') (parts[e.entry as number] ??= []).push(e.data as Uint8Array);
  }
  return Object.fromEntries(paths.map((p, i) => [p, createHash('sha256').update(Buffer.concat(parts[i] ?? [])).digest('hex')]));
}

describe('PlayerSession in Chromium', () => {
  it('accepts its own sealed key once and reads the copy as Node does', async () => {
    const publicKey = await page.evaluate(async () => {
      const w = window as unknown as PageWindow;
      await w.ikiCore.loadWasm();
      w.session = w.ikiCore.PlayerSession.create();
      return Array.from(w.session.publicKey);
    });
    const sealed = keys.sealLicenseKey(masterRef(master), LICENSE_A.id, new Uint8Array(publicKey));
    const args: PageArgs = { licenseId: LICENSE_A.id, copy: Array.from(copy), signing: Array.from(keys.licenseSigningPublicKey),
      sealed: { ephemeral: Array.from(sealed.ephemeral), nonce: Array.from(sealed.nonce), sealed: Array.from(sealed.sealed) } };
    const inPage = await page.evaluate(async ({ licenseId, sealed, copy, signing }: PageArgs) => {
      const w = window as unknown as PageWindow;
      const { session, ikiCore: iki } = w as Required<PageWindow>;
      const bytes = (a: number[]) => new Uint8Array(a);
      const answer = { ephemeral: bytes(sealed.ephemeral), nonce: bytes(sealed.nonce), sealed: bytes(sealed.sealed) };
      session.acceptLicenseKey(licenseId, answer);
      let again: string | undefined;
      try {
        session.acceptLicenseKey(licenseId, answer);
      } catch (e) {
        again = (e as { code?: string }).code;
      }
      const found: Record<string, string> = {};
      const parts: Uint8Array[][] = [];
      let paths: string[] = [];
      for await (const e of iki.openLicenseCopy(bytes(copy), session, bytes(signing))) {
        if (e.type === 'manifest') paths = e.manifest.entries.map((x) => x.path);
        if (e.type === 'chunk') (parts[e.entry] ??= []).push(e.data);
      }
      for (const [i, path] of paths.entries()) {
        const whole = new Uint8Array((parts[i] ?? []).reduce((n, p) => n + p.length, 0));
        let at = 0;
        for (const p of parts[i] ?? []) {
          whole.set(p, at);
          at += p.length;
        }
        const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', whole));
        found[path] = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
      }
      session.free();
      return { again, found };
    }, args);
    expect(inPage.again).toBe('INVALID_STATE');

    const session = PlayerSession.create();
    session.acceptLicenseKey(LICENSE_A.id, keys.sealLicenseKey(masterRef(master), LICENSE_A.id, session.publicKey));
    const inNode = await digests(openLicenseCopy(copy, session));
    session.free();
    expect(Object.keys(inNode)).toHaveLength(5);
    expect(inPage.found).toEqual(inNode);
  });
});
