/**
 * The seller, verify-email and reset-password pages in Japanese (issue 24 item 9), in Chromium
 * against a real service: with `ja-JP` as the browser's language each page takes every string
 * from the Japanese catalog (no sentence of the English catalog and no English label left; see
 * i18n-check.ts), at 1280 and 360 px with no sideways scroll, and logs no console error. The
 * seller page is checked with a master open: its licenses, a license's history, the identify
 * form and the CLI instructions, then with its selling cards in use: a license search (none
 * found, then found), an API key just made with its secret and its revoke confirmation, and a
 * webhook endpoint with its secret and delivery log; the two link pages with their failure
 * notices and forms.
 */
import { readFile } from 'node:fs/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshotDir, shoot } from './chromium.js';
import { watchBrowser } from './narrow.js';
import { receiver, type Receiver } from '../helpers/webhook-receiver.js';
import { englishLeft } from './i18n-check.js';
import { PASSWORD, buildMaster, newAccount, registerSigningKey, startService, type Account, type Service } from './setup.js';

declare const document: { documentElement: { scrollWidth: number; clientWidth: number } };

let service: Service;
let browser: Browser;
let page: Page;
let shots: string;
let seller: Account;
let buyer: Account;
let masterId: string;
let hook: Receiver;
const errors: string[] = [];

/** Names and addresses the page shows as data, not as its own text. */
let data: string[];

async function api(path: string, token: string, init: { method: string; body?: Uint8Array | string; type?: string }): Promise<any> {
  const response = await fetch(`${service.url}${path}`, { method: init.method, body: init.body,
    headers: { authorization: `Bearer ${token}`, 'content-type': init.type ?? 'application/json' } });
  expect(response.status, `${init.method} ${path}`).toBeLessThan(300);
  return response.json();
}

/** Sideways scroll of the page in px (0 when none). */
const overflow = (target: Page) => target.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** The page in Japanese, with nothing English left, at 1280 and then 360 px; screenshots of both. */
async function checkBothWidths(name: string): Promise<void> {
  expect(await page.getAttribute('html', 'lang')).toBe('ja');
  expect({ name, left: await englishLeft(page, data) }).toEqual({ name, left: { sentences: [], labels: [] } });
  expect({ name, overflow: await overflow(page) }).toEqual({ name, overflow: 0 });
  await shoot(page, shots, `${name}-ja-1280`);
  await page.setViewportSize({ width: 360, height: 740 });
  expect({ name, overflow: await overflow(page) }).toEqual({ name, overflow: 0 });
  await shoot(page, shots, `${name}-ja-360`);
  await page.setViewportSize({ width: 1280, height: 900 });
}

beforeAll(async () => {
  service = await startService({ perLicense: 20, perUser: 120, windowSeconds: 3600 },
    { webhooks: { allowPrivate: true, timeoutMs: 2000, pollMs: 20, retryHours: 72 } });
  hook = await receiver();
  seller = await newAccount(service, 'Sela Seller');
  buyer = await newAccount(service, 'Bo Buyer');
  const { seed } = await registerSigningKey(service, seller);
  const built = await buildMaster(service, seed);
  const master = await api('/api/licenses/masters', seller.token,
    { method: 'POST', body: new Uint8Array(await readFile(built.file)), type: 'application/vnd.iki.model' });
  masterId = String(master.masterId);
  await api(`/api/licenses/masters/${master.masterId}/licenses`, seller.token, { method: 'POST', body: JSON.stringify({ accountId: buyer.accountId }) });
  data = [built.name, seller.name, buyer.name, seller.email, buyer.email];
  browser = watchBrowser(await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] }));
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'ja-JP' });
  page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  shots = await screenshotDir();
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await hook?.close();
});

describe('pages in Japanese', () => {
  it('the verify-email page: a link without its token, the form to get a new link and the one to choose a password', async () => {
    await page.goto(`${service.url}/verify-email`);
    await page.locator('#result .notice.error').waitFor({ timeout: 5000 });
    await page.locator('#resend').waitFor({ timeout: 5000 });
    await page.click('#resend-form button[type=submit]', { timeout: 5000 });
    await page.locator('#resend-form .result .notice').waitFor({ timeout: 5000 });
    // The choose-a-password section shows only after the service asks for it (SIGN_UP_PASSWORD_REQUIRED); its text
    // is checked shown, for the width too.
    await page.locator('#choose').evaluate((s) => { (s as unknown as { hidden: boolean }).hidden = false; });
    await checkBothWidths('verify-email');
  });

  it('the reset-password page: its form and the refusal of a link without its token', async () => {
    await page.goto(`${service.url}/reset-password`);
    await page.click('#reset button[type=submit]');
    await page.locator('#reset .result .notice').waitFor();
    await checkBothWidths('reset-password');
  });

  it('the seller page: a master open with its licenses, a history, the identify form and the CLI instructions', async () => {
    await page.goto(`${service.url}/?next=${encodeURIComponent('/seller')}`);
    await page.fill('#signin-email', seller.email);
    await page.fill('#signin-password', PASSWORD);
    await Promise.all([page.waitForURL(`${service.url}/seller`), page.click('#signin button[type=submit]')]);
    await page.click('details.master > summary');
    await page.locator('details.master[open] tbody tr').first().waitFor();
    await page.locator('details.master[open] tbody tr .actions button.secondary').first().click();
    await page.locator('details.master[open] .history table').waitFor();
    await page.locator('#how-to').evaluate((d) => { (d as unknown as { open: boolean }).open = true; });
    await page.locator('#pack-command').waitFor();
    await checkBothWidths('seller');
  });

  it('the seller page’s selling cards: a license search, an API key and a webhook endpoint with its deliveries', async () => {
    // Nothing found, then every license.
    await page.fill('#search-ref', '該当なし');
    await page.click('#license-search button[type=submit]');
    await page.locator('#license-search-results .notice').waitFor();
    expect(await englishLeft(page, data)).toEqual({ sentences: [], labels: [] });
    await page.fill('#search-ref', '');
    await page.click('#license-search button[type=submit]');
    await page.locator('#license-search-table tbody tr').first().waitFor();
    // An API key: the secret shown once, the list, and the revoke confirmation (checked open, then confirmed).
    await page.fill('#api-key-name', 'ショップのサーバー');
    await page.click('#api-key-form button[type=submit]');
    await page.locator('#api-key-secret').waitFor();
    await page.locator('#api-keys tbody tr .badge.active').waitFor();
    await page.locator('#api-keys tbody tr .actions button').click();
    await page.locator('dialog.confirm[open]').waitFor();
    expect(await englishLeft(page, data)).toEqual({ sentences: [], labels: [] });
    await page.locator('dialog.confirm button[value=confirm]').click();
    await page.locator('#api-keys tbody tr .badge.revoked').waitFor();
    // A webhook endpoint, an event sent to it, and its delivery log.
    await page.fill('#webhook-url', hook.url);
    await page.click('#webhook-form button[type=submit]');
    await page.locator('#webhook-secret').waitFor();
    await page.locator('#webhooks tbody tr .badge.active').waitFor();
    await api(`/api/licenses/masters/${masterId}/licenses`, seller.token, { method: 'POST', body: JSON.stringify({ accountId: buyer.accountId }) });
    await page.locator('#webhooks tbody tr .actions button').first().click();
    await page.locator('#webhook-deliveries tbody tr .badge').waitFor();
    await checkBothWidths('seller-sales');
    // Disabled: why, in the catalog's words from the service's code (not its English reason).
    await page.locator('#webhooks tbody tr .actions button').nth(1).click();
    await page.locator('#webhooks tbody tr .badge.revoked').waitFor();
    expect(await page.locator('#webhooks tbody tr .disabled-reason').textContent()).toBe('あなたが無効にしました');
    expect(await englishLeft(page, data)).toEqual({ sentences: [], labels: [] });
  });

  it('logged no script errors', () => {
    expect(errors).toEqual([]);
  });
});
