/**
 * The player closes an opened license copy wherever the buyer's right to it ends (issue 24
 * item 6), in Chromium against a real service: signing out in tab B closes the model in tab A
 * (its canvases gone, the opened-copy state released, the sign-in prompt shown), and a
 * revocation seen by one tab closes the copy open in another, which then says when and why
 * (the seller's reason). And the player in Japanese (issue 24 item 9): a browser that prefers
 * Japanese gets every string of the page from the Japanese catalog (no English message left,
 * `<html lang="ja">`), at 1280 and 360 px with no sideways scroll, and the header's switch to
 * English is remembered.
 */
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshotDir, shoot } from './chromium.js';
import { englishLeft } from './i18n-check.js';
import {
  PASSWORD, buildMaster, newAccount, registerSigningKey, startService, type Account, type Service,
} from './setup.js';

declare const document: { querySelectorAll(selector: string): ArrayLike<unknown>; body: { dataset: Record<string, string> };
  dispatchEvent(event: unknown): boolean };
declare const Event: new (type: string) => unknown;

let service: Service;
let browser: Browser;
let seller: Account;
let buyer: Account;
let licenseId: string;
/** A second license, never revoked, for the language test. */
let keptId: string;
const errors: string[] = [];

async function api(method: string, path: string, token: string, body?: unknown, type = 'application/json'): Promise<any> {
  const response = await fetch(`${service.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': type },
    body: body === undefined ? undefined : type === 'application/json' ? JSON.stringify(body) : body as Uint8Array });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function signIn(page: Page): Promise<void> {
  await page.goto(`${service.url}/?next=%2Fplayer`);
  await page.fill('#signin-email', buyer.email);
  await page.fill('#signin-password', PASSWORD);
  await Promise.all([page.waitForURL(`${service.url}/player`), page.click('#signin button[type=submit]')]);
  await page.waitForSelector('#license-list');
}

/** Opens the license and waits until its textures are drawn. */
async function openModel(page: Page, id = licenseId): Promise<void> {
  await page.click(`#license-list tr[data-license-id="${id}"] button`);
  await page.waitForSelector('#viewer-status .notice.success');
  await page.waitForSelector(`body[data-open-license="${id}"]`);
  expect(await page.evaluate(() => document.querySelectorAll('canvas').length)).toBeGreaterThan(0);
}

/** What is left on the page of an opened copy. */
function leftOver(page: Page) {
  return page.evaluate(() => ({ canvases: document.querySelectorAll('canvas').length, files: document.querySelectorAll('#package *').length,
    open: document.body.dataset['openLicense'] ?? null }));
}

beforeAll(async () => {
  service = await startService({ perLicense: 20, perUser: 120, windowSeconds: 3600 });
  seller = await newAccount(service, 'Sela Seller');
  buyer = await newAccount(service, 'Bo Buyer');
  const { seed } = await registerSigningKey(service, seller);
  const master = await buildMaster(service, seed);
  const uploaded = await api('POST', '/api/licenses/masters', seller.token, new Uint8Array(await readFile(master.file)), 'application/vnd.iki.model');
  licenseId = (await api('POST', `/api/licenses/masters/${uploaded.masterId}/licenses`, seller.token, { accountId: buyer.accountId })).licenseId;
  // The service warns of a second license for the same buyer only on the page; the API makes it.
  keptId = (await api('POST', `/api/licenses/masters/${uploaded.masterId}/licenses`, seller.token, { accountId: buyer.accountId })).licenseId;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('the player closes the model', () => {
  it('signing out in tab B closes the model in tab A', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const [a, b] = [await context.newPage(), await context.newPage()];
    for (const p of [a, b]) p.on('pageerror', (e) => errors.push(e.message));
    await signIn(a);
    await b.goto(`${service.url}/player`);
    await b.waitForSelector('#license-list');
    await openModel(a);
    await b.click('#session button');
    await a.waitForSelector('body:not([data-open-license])');
    expect(await leftOver(a)).toEqual({ canvases: 0, files: 0, open: null });
    expect(await a.isHidden('#licenses-section')).toBe(true);
    expect(await a.textContent('#gate')).toContain('Sign in');
    await context.close();
  });

  it('a revocation seen in tab B closes the copy open in tab A, which says when and why', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const [a, b] = [await context.newPage(), await context.newPage()];
    for (const p of [a, b]) p.on('pageerror', (e) => errors.push(e.message));
    await signIn(a);
    await b.goto(`${service.url}/player`);
    await b.waitForSelector('#license-list');
    await openModel(a);
    await api('POST', `/api/licenses/${licenseId}/revoke`, seller.token, { reason: 'refunded on request' });
    // Tab B comes back to the front and reads its list again.
    await b.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    await a.waitForSelector(`#viewer-status [data-revoked="${licenseId}"]`);
    expect(await leftOver(a)).toEqual({ canvases: 0, files: 0, open: null });
    const said = await a.textContent('#viewer-status');
    expect(said).toContain('its license was revoked');
    expect(said).toContain('Their reason: “refunded on request”');
    expect(said).toMatch(/revoked this license on \S/);
    // When, as a local date and time with the ISO form in its tooltip.
    const when = a.locator('#viewer-status time');
    expect(await when.getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
    expect(await when.textContent()).not.toMatch(/\d{4}-\d\d-\d\dT/);
    await context.close();
    expect(errors).toEqual([]);
  });

  it('in Japanese: the home and player pages take every string from the Japanese catalog, at 1280 and 360 px; the switch to English is remembered', async () => {
    const shots = await screenshotDir();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'ja-JP' });
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) errors.push(m.text()); });
    // The home page, signed out: its forms and the header in Japanese too.
    await page.goto(`${service.url}/`);
    expect(await page.getAttribute('html', 'lang')).toBe('ja');
    expect(await englishLeft(page)).toEqual({ sentences: [], labels: [] });
    await shoot(page, shots, 'home-ja-1280');
    await signIn(page);
    await openModel(page, keptId);
    await page.waitForSelector('#runtime-summary');
    expect(await page.getAttribute('html', 'lang')).toBe('ja');
    const left = await englishLeft(page, ['Aster']);
    expect(left).toEqual({ sentences: [], labels: [] });
    await shoot(page, shots, 'player-ja-1280');
    await page.setViewportSize({ width: 360, height: 740 });
    expect(await page.evaluate(() => (document as any).documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    // Table captions use the width there is (a stacked table's caption went one word per line).
    const captions = await page.evaluate(() => Array.from((document as any).querySelectorAll('caption') as ArrayLike<any>)
      .map((c: any) => Math.round(c.getBoundingClientRect().width)));
    expect(captions.length).toBeGreaterThan(0);
    for (const width of captions) expect(width).toBeGreaterThan(250);
    await shoot(page, shots, 'player-ja-360');

    await Promise.all([page.waitForEvent('load'), page.selectOption('#language', 'en')]);
    await page.waitForSelector('#license-list');
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await page.textContent('nav a[href="/player"]')).toBe('Player');
    await page.reload();
    await page.waitForSelector('#license-list');
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    await shoot(page, shots, 'player-en-360');
    await context.close();
    expect(errors).toEqual([]);
  });
});
