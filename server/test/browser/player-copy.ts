/**
 * What the package-URL browser tests share: a service with a seller, a buyer, the master
 * uploaded over the API and licenses for the buyer; signing in and opening a copy on
 * `/player`; counting object URLs; what the origin's storage holds; and the texture checks.
 */
import { readFile } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Config } from '../../src/config.js';
import { PASSWORD, buildMaster, newAccount, registerSigningKey, startService, type Account, type BuiltMaster, type Service } from './setup.js';

/** A service with a master and `count` licenses of it for the buyer. */
export interface LicensedCopy { service: Service; seller: Account; buyer: Account; master: BuiltMaster; licenses: string[] }

/** An API call with a bearer token; throws on an error answer. */
export async function api(service: Service, method: string, path: string, token: string, json?: unknown): Promise<any> {
  const response = await fetch(`${service.url}${path}`, { method,
    headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json) });
  const body = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

export async function licensedCopy(count: number, config: Partial<Config> = {}): Promise<LicensedCopy> {
  const service = await startService({ perLicense: 50, perUser: 200, windowSeconds: 3600 }, config);
  const seller = await newAccount(service, 'Sela Seller');
  const buyer = await newAccount(service, 'Bo Buyer');
  const { seed } = await registerSigningKey(service, seller);
  const master = await buildMaster(service, seed);
  const uploaded = await fetch(`${service.url}/api/licenses/masters`, { method: 'POST', body: await readFile(master.file),
    headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/vnd.iki.model' } });
  expect(uploaded.status).toBe(201);
  const { masterId } = (await uploaded.json()) as { masterId: string };
  const licenses: string[] = [];
  for (let i = 0; i < count; i++) {
    licenses.push((await api(service, 'POST', `/api/licenses/masters/${masterId}/licenses`, seller.token, { email: buyer.email })).licenseId);
  }
  return { service, seller, buyer, master, licenses };
}

/** Counts object URLs made on the context's pages (`ikiObjectUrls`). */
export async function countObjectUrls(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const w = globalThis as any;
    w.ikiObjectUrls = 0;
    const create = URL.createObjectURL.bind(URL);
    URL.createObjectURL = (o: any) => {
      w.ikiObjectUrls += 1;
      return create(o);
    };
  });
}

export async function signInToPlayer(page: Page, service: Service, account: Account): Promise<void> {
  await page.goto(`${service.url}/?next=%2Fplayer`);
  await page.fill('#signin-email', account.email);
  await page.fill('#signin-password', PASSWORD);
  await Promise.all([page.waitForURL(`${service.url}/player`), page.click('#signin button[type=submit]')]);
}

/** Opens `licenseId` on the player page; resolves to the model's package URL. */
export async function openCopy(page: Page, service: Service, licenseId: string): Promise<string> {
  await page.click(`#license-list tr[data-license-id="${licenseId}"] button`);
  await page.waitForSelector('#viewer-status .notice.success');
  const url = await page.textContent('#package-model-url');
  expect(url).toMatch(new RegExp(`^${service.url}/package/${licenseId}/[A-Za-z0-9_-]{22}/`));
  return url!;
}

/**
 * What the origin's storage holds, and how many object URLs the page made. `localStorage`
 * counts every item but the player's device seed (issue 29; ts/src/browser/device-id.ts), and
 * that one only while it holds a seed (43 base64url characters) and nothing else.
 */
export async function storage(page: Page): Promise<unknown> {
  return page.evaluate(async () => {
    const g = globalThis as any;
    const opfs: string[] = [];
    for await (const name of (await g.navigator.storage.getDirectory()).keys()) opfs.push(name);
    const local = Object.keys(g.localStorage)
      .filter((k) => !(k === 'iki.playerDevice' && /^[A-Za-z0-9_-]{43}$/.test(g.localStorage.getItem(k))));
    return {
      caches: await g.caches.keys(), indexedDb: (await g.indexedDB.databases()).map((d: any) => d.name), opfs,
      localStorage: local.length, sessionStorage: g.sessionStorage.length, objectUrls: g.ikiObjectUrls,
    };
  });
}

/** {@link storage} when nothing is stored and no object URL was made. */
export const EMPTY_STORAGE = { caches: [], indexedDb: [], opfs: [], localStorage: 0, sessionStorage: 0, objectUrls: 0 };

/** The pixels of the player's own canvas of `path` (the built-in runtime draws the decoded copy there). */
export async function copyPixels(page: Page, path: string): Promise<{ width: number; height: number; rgba: number[] }> {
  return page.evaluate((p) => {
    const c = (globalThis as any).document.querySelector(`#textures canvas[data-path="${p}"]`);
    return { width: c.width, height: c.height, rgba: Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data as number[]) };
  }, path);
}

/** Drawn pixels against the master's: opaque ones within the watermark's ±2 (others are premultiplied by a canvas). */
export function expectOpaque(master: BuiltMaster, drawn: ArrayLike<number>, path: string, maxDelta = 2): void {
  const source = master.textures.find((t) => t.path === path)!.rgba;
  expect(drawn.length).toBe(source.length);
  let opaque = 0;
  let worst = 0;
  for (let p = 0; p < source.length; p += 4) {
    if (source[p + 3] !== 255) continue;
    opaque += 1;
    expect(drawn[p + 3]).toBe(255);
    for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(drawn[p + c]! - source[p + c]!));
  }
  expect(opaque).toBeGreaterThan(100);
  expect(worst).toBeLessThanOrEqual(maxDelta);
}

/** The status of GET `url` from `page` (0 when the fetch itself failed). */
export async function statusFrom(page: Page, url: string): Promise<number> {
  return page.evaluate(async (u) => {
    try {
      return (await fetch(u)).status;
    } catch {
      return 0;
    }
  }, url);
}
