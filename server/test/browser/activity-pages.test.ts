/**
 * The activity pages in Chromium against a real service (issue 29 items 2 to 4), with a seeded
 * history of 50 licenses of one master over 30 days (helpers/activity-seed.ts) and two open
 * flags:
 * - the seller's master shows 50 sparklines (uPlot canvases), busiest first, at 1280 and 360 px
 *   with no sideways scroll; the tables behind them hold the numbers the API answered the page
 *   (totals, one sparkline's buckets, a timeline's buckets), and the page asked in the
 *   browser's time zone;
 * - a license's timeline draws its plot with the limit and says the limits;
 * - the flags card says why each flag was raised, its link opens the license's timeline, and
 *   Dismiss takes the flag off the open list (in the API too);
 * - the buyer sees their own licenses' release history on the player page, and the service
 *   refuses them another buyer's; opening a copy sends the player's device id, which the
 *   service counts as one more device;
 * - in Japanese (another time zone) nothing of the English catalog is left (i18n-check.ts);
 * - no console error and no CSP violation anywhere.
 * Screenshots go to the printed directory.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FLAG_DEFAULTS } from '../../src/activity-config.js';
import { SqlRepository } from '../../src/storage/sql-repository.js';
import { seedActivity } from '../helpers/activity-seed.js';
import { launchChromium, screenshotDir } from './chromium.js';
import { englishLeft } from './i18n-check.js';
import { PASSWORD, buildMaster, newAccount, registerSigningKey, startService, type Account, type Service } from './setup.js';

declare const document: {
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelectorAll(selector: string): ArrayLike<{ textContent: string | null; getAttribute(name: string): string | null }>;
};

const LIMITS = { perLicense: 20, perUser: 120, windowSeconds: 3600 };
// 50 plots a page on a shared machine: more than the suite's default 30 s per test.
vi.setConfig({ testTimeout: 120_000 });

let service: Service;
let browser: Browser;
let shots: string;
let seller: Account;
let buyer: Account;
let masterId: string;
let buyerLicenses: string[];
let otherLicense: string;
let flagged: { shared: string; scripted: string };
/** Names and addresses the pages show as data (skipped by the language check). */
let data: string[];
const errors: string[] = [];

async function api(path: string, token: string, init: { method?: string; json?: unknown; body?: Uint8Array; type?: string } = {}): Promise<any> {
  const response = await fetch(`${service.url}${path}`, { method: init.method ?? 'GET',
    body: init.json === undefined ? init.body : JSON.stringify(init.json),
    headers: { authorization: `Bearer ${token}`, ...(init.body !== undefined || init.json !== undefined ? { 'content-type': init.type ?? 'application/json' } : {}) } });
  expect(response.status, `${init.method ?? 'GET'} ${path}`).toBeLessThan(300);
  return response.json();
}

/** A page of its own (language, time zone) that records errors and CSP violations. */
async function newPage(locale: string, timezoneId: string, width = 1280): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, locale, timezoneId });
  await context.addInitScript(() => {
    (globalThis as any).document.addEventListener('securitypolicyviolation', (e: any) => {
      (globalThis as any).console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  return { context, page };
}

async function signIn(page: Page, account: Account, next: string): Promise<void> {
  await page.goto(`${service.url}/?next=${encodeURIComponent(next)}`);
  await page.fill('#signin-email', account.email);
  await page.fill('#signin-password', PASSWORD);
  await Promise.all([page.waitForURL(`${service.url}${next}`), page.click('#signin button[type=submit]')]);
}

/** The JSON of the next answer of the page whose URL matches `path`, and the query the page sent. */
async function answer(page: Page, path: RegExp, action: () => Promise<unknown>): Promise<{ body: any; query: URLSearchParams }> {
  const [response] = await Promise.all([page.waitForResponse((r: Response) => path.test(new URL(r.url()).pathname)), action()]);
  expect(response.status()).toBe(200);
  return { body: await response.json(), query: new URL(response.url()).searchParams };
}

/** A screenshot of the viewport with `selector`'s top at its top (the pages are long: 50 licenses). */
async function look(page: Page, selector: string, name: string): Promise<void> {
  await page.locator(selector).first().evaluate((e: any) => e.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(shots, `${name}.png`) });
}

const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/**
 * The text of each cell of the rows of `table` (numbers are formatted for the page's language),
 * once its rows are there: a <details> makes its table when the toggle event that follows the
 * click runs, not during the click.
 */
async function cells(page: Page, selector: string): Promise<string[][]> {
  const rows = page.locator(`${selector} tbody tr`);
  await rows.first().waitFor();
  return rows.evaluateAll((all) => all.map((r) =>
    [...(r as any).querySelectorAll('td')].map((td: any) => String(td.textContent))));
}
const digits = (text: string) => Number(text.replace(/[^0-9]/g, ''));
/** The first number of a cell ("3rate limit: 3" is 3 refusals, their reasons below). */
const leading = (text: string) => Number((/^[\d,.\s]+/.exec(text)?.[0] ?? '').replace(/[^0-9]/g, ''));

/** The master's panel open with its activity drawn; the API's answer to the page. */
async function openMaster(page: Page): Promise<{ body: any; query: URLSearchParams }> {
  const activity = await answer(page, /\/activity$/, () => page.click(`details.master[data-master-id="${masterId}"] > summary`));
  await page.locator('ul.multiples li.spark-card .spark canvas').first().waitFor();
  return activity;
}

beforeAll(async () => {
  // No sweeper: the flags are the two raised below (activity-flags.test.ts tests the rules).
  service = await startService(LIMITS, { flags: { ...FLAG_DEFAULTS, sweepSeconds: 0 } });
  seller = await newAccount(service, 'Sela Seller');
  buyer = await newAccount(service, 'Bo Buyer');
  const others = await Promise.all(['Ana', 'Ben', 'Cy', 'Dee', 'Eli', 'Fay', 'Gus'].map((n) => newAccount(service, `${n} Other`)));
  const { seed } = await registerSigningKey(service, seller);
  const built = await buildMaster(service, seed);
  const master = await api('/api/licenses/masters', seller.token, { method: 'POST', body: new Uint8Array(await readFile(built.file)), type: 'application/vnd.iki.model' });
  masterId = String(master.masterId);
  const create = async (account: Account) => String((await api(`/api/licenses/masters/${masterId}/licenses`, seller.token,
    { method: 'POST', json: { email: account.email } })).licenseId);
  // 50 licenses: two of the buyer's, 48 of seven others'.
  const licenseIds: string[] = [];
  for (let i = 0; i < 48; i++) licenseIds.push(await create(others[i % others.length]!));
  buyerLicenses = [await create(buyer), await create(buyer)];
  licenseIds.splice(3, 0, buyerLicenses[0]!);
  licenseIds.push(buyerLicenses[1]!);
  otherLicense = licenseIds[0]!;
  await seedActivity(service.server.db, { licenseIds, days: 30 });
  // The seed makes license 1 shared (many prefixes) and license 2 scripted: flagged.
  flagged = { shared: licenseIds[1]!, scripted: licenseIds[2]! };
  const repo = new SqlRepository(service.server.db);
  const now = Date.now();
  const flag = (licenseId: string, rule: 'addresses' | 'scripted', value: number, threshold: number) => repo.flags.raise({
    id: `fl_${randomBytes(12).toString('hex')}`, licenseId, rule, raisedAt: new Date(now - 3600_000),
    windowStart: new Date(now - 25 * 3600_000), windowEnd: new Date(now - 3600_000), value, threshold });
  await flag(flagged.shared, 'addresses', 12, 4);
  await flag(flagged.scripted, 'scripted', 0.02, 0.1);
  data = [built.name, seller.name, buyer.name, seller.email, buyer.email, ...others.flatMap((o) => [o.name, o.email])];
  browser = await launchChromium();
  shots = await screenshotDir();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('the seller page', () => {
  it('shows 50 sparklines busiest first, with tables holding the API’s numbers, at 1280 and 360 px', async () => {
    const { page } = await newPage('en-US', 'America/New_York');
    // uPlot and the plots are their own chunk, fetched only once a plot is shown.
    const plotChunks: string[] = [];
    page.on('request', (r) => { if (/\/assets\/js\/seller-activity-plots-[A-Z0-9]+\.js$/.test(r.url())) plotChunks.push(r.url()); });
    await signIn(page, seller, '/seller');
    await page.locator(`details.master[data-master-id="${masterId}"] > summary`).waitFor();
    expect(plotChunks).toEqual([]);
    const { body: activity, query } = await openMaster(page);
    expect(plotChunks).toHaveLength(1);
    expect(query.get('tz')).toBe('America/New_York');
    expect(query.get('bucket')).toBe('day');
    expect(activity.licenses).toHaveLength(50);
    expect(activity.buckets).toHaveLength(30);
    // One card and one drawn canvas per license, in the API's order (releases, most first).
    const order = await page.locator('ul.multiples li.spark-card').evaluateAll((cards) => cards.map((c) => (c as any).dataset.licenseId));
    expect(order).toEqual(activity.licenses.map((l: any) => l.licenseId));
    const releases = activity.licenses.map((l: any) => l.totals.releases);
    expect(releases).toEqual([...releases].sort((a: number, b: number) => b - a));
    expect(releases[0]).toBeGreaterThan(releases.at(-1));
    await expect.poll(() => page.locator('ul.multiples .spark canvas').count()).toBe(50);
    // The totals table: every license's numbers as the API gave them.
    await page.click('section.activity details.totals > summary');
    const totals = await cells(page, `#activity-totals-${masterId}`);
    expect(totals.map((row) => row.slice(2).map(digits))).toEqual(activity.licenses.map((l: any) =>
      [l.totals.releases, l.totals.downloads, l.totals.resumes, l.totals.refusals, l.totals.addresses, l.totals.devices, l.openFlags]));
    // One sparkline's table: its releases per day.
    const first = page.locator('ul.multiples li.spark-card').first();
    await first.locator('details.numbers > summary').click();
    await first.locator('table tbody tr').first().waitFor();
    const buckets = await first.locator('table tbody tr').evaluateAll((rows) => rows.map((r) => [(r as any).dataset.start, (r as any).querySelectorAll('td')[1].textContent]));
    expect(buckets.map(([start, n]) => [start, digits(n)])).toEqual(activity.buckets.map((b: string, i: number) => [b, activity.licenses[0].releases[i]]));
    // Bucket starts are the browser zone's midnights.
    expect(activity.buckets[0]).toMatch(/T00:00:00-0[45]:00$/);
    await look(page, 'section.activity', 'seller-activity-en-1280');
    await look(page, '#flags', 'seller-flags-en-1280');
    expect(await overflow(page)).toBe(0);
    await page.setViewportSize({ width: 360, height: 740 });
    await expect.poll(() => overflow(page)).toBe(0);
    // The plots follow the width: no canvas wider than its card.
    const widest = await page.locator('ul.multiples li.spark-card').first().evaluate((c: any) => ({ card: c.clientWidth, plot: c.querySelector('canvas').getBoundingClientRect().width }));
    expect(widest.plot).toBeLessThanOrEqual(widest.card);
    await look(page, 'section.activity', 'seller-activity-en-360');
    await look(page, `#activity-totals-${masterId}`, 'seller-totals-en-360');
    await page.context().close();
  });

  it('opens a license’s timeline with the limit drawn in and its table holding the API’s numbers', async () => {
    const { page } = await newPage('en-US', 'Europe/Berlin');
    await signIn(page, seller, '/seller');
    const { body: master } = await openMaster(page);
    const top = String(master.licenses[0].licenseId);
    const { body: timeline, query } = await answer(page, new RegExp(`/api/licenses/${top}/activity$`),
      () => page.click(`li.spark-card[data-license-id="${top}"] .spark-foot button`));
    expect(query.get('tz')).toBe('Europe/Berlin');
    await page.locator('.timeline .timeline-plot canvas').waitFor();
    // The legend names the limit; the sentence says both limits.
    expect(await page.textContent('.timeline .u-legend')).toContain('Release limit');
    expect(await page.textContent('.timeline p.limit')).toBe('Limit: 20 releases per 1 hour for the license, 120 per 1 hour for the account.');
    await page.click('.timeline details.numbers > summary');
    const rows = await cells(page, `#timeline-table-${top}`);
    expect(rows.map((r) => [leading(r[1]!), leading(r[2]!), leading(r[3]!), leading(r[4]!), leading(r[5]!), leading(r[6]!)])).toEqual(
      timeline.series.map((p: any) => [p.releases, p.downloads, p.resumes,
        Object.values(p.refusals as Record<string, number>).reduce((a, b) => a + b, 0), p.addresses, p.devices]));
    expect(timeline.series.reduce((sum: number, p: any) => sum + p.releases, 0)).toBe(master.licenses[0].totals.releases);
    // The limit is drawn in (20 an hour: 480 a day, against this license's peak of 96 a day and 4 an hour).
    expect(await page.textContent('.timeline .u-legend')).not.toContain('far above');
    const hourly = await answer(page, new RegExp(`/api/licenses/${top}/activity$`), () => page.selectOption(`#timeline-period-${top}`, 'week'));
    expect(hourly.query.get('bucket')).toBe('hour');
    expect(hourly.body.series).toHaveLength(7 * 24);
    await page.locator('.timeline .timeline-plot canvas').waitFor();
    expect(await page.textContent('.timeline .u-legend')).toContain('Release limit');
    expect(await page.textContent('.timeline .u-legend')).not.toContain('far above');
    await look(page, 'section.timeline', 'seller-timeline-hourly-en-1280');
    await page.selectOption(`#timeline-period-${top}`, 'month');
    await page.locator('.timeline .timeline-plot canvas').waitFor();
    await page.click('.timeline details.numbers > summary');
    await look(page, 'section.timeline', 'seller-timeline-en-1280');
    await look(page, `#timeline-table-${top}`, 'seller-timeline-table-en-1280');
    await page.setViewportSize({ width: 360, height: 740 });
    await expect.poll(() => overflow(page)).toBe(0);
    await look(page, 'section.timeline', 'seller-timeline-en-360');
    await page.context().close();
  });

  it('lists the open flags with why, links each to its timeline, and dismisses one', async () => {
    const { page } = await newPage('en-US', 'UTC');
    await signIn(page, seller, '/seller');
    await page.locator('#flags ul.flags li.flag').nth(1).waitFor();
    const sentences = await page.locator('#flags li.flag > p:first-child').allTextContents();
    expect(sentences).toHaveLength(2);
    expect(sentences.find((s) => s.includes('12 different network address prefixes'))).toBeDefined();
    expect(sentences.find((s) => s.includes('as regular as a script'))).toBeDefined();
    // The link opens the master and the license's timeline.
    const shared = page.locator(`#flags li.flag[data-license-id="${flagged.shared}"]`);
    await answer(page, new RegExp(`/api/licenses/${flagged.shared}/activity$`), () => shared.locator('a.timeline-link').click());
    await page.locator(`section.timeline[data-license-id="${flagged.shared}"] .timeline-plot canvas`).waitFor();
    expect(await page.locator(`section.timeline[data-license-id="${flagged.shared}"] ul.flags li.flag`).count()).toBe(1);
    await look(page, 'section.timeline', 'seller-flag-timeline-en-1280');
    // Dismissed: gone from the card and from the API's open list.
    await shared.locator('button.dismiss').click();
    await page.locator('#flags .notice.success').waitFor();
    expect(await page.locator('#flags ul.flags li.flag').count()).toBe(1);
    const open = await api('/api/seller/flags?state=open', seller.token);
    expect(open.flags.map((f: any) => f.licenseId)).toEqual([flagged.scripted]);
    await page.context().close();
  });
});

describe('the buyer', () => {
  it('sees their own licenses’ release history, and not another buyer’s', async () => {
    const { page } = await newPage('en-US', 'Australia/Adelaide');
    await signIn(page, buyer, '/player');
    await page.locator('#license-list tbody tr').nth(1).waitFor();
    const listed = await page.locator('#license-list tbody tr').evaluateAll((rows) => rows.map((r) => (r as any).dataset.licenseId));
    expect(listed.sort()).toEqual([...buyerLicenses].sort());
    const mine = buyerLicenses[1]!;
    const { body: timeline, query } = await answer(page, new RegExp(`/api/licenses/${mine}/activity$`),
      () => page.click(`#license-list button[data-history="${mine}"]`));
    expect(query.get('tz')).toBe('Australia/Adelaide');
    await page.locator('#release-history .timeline-plot canvas').waitFor();
    await page.click('#release-history details.numbers > summary');
    const rows = await cells(page, `#timeline-table-${mine}`);
    expect(rows.map((r) => leading(r[1]!))).toEqual(timeline.series.map((p: any) => p.releases));
    // A limit more than five times the busiest day would flatten the counts: left out, and the legend says so.
    const peak = Math.max(1, ...timeline.series.map((p: any) => Math.max(p.releases, p.downloads)));
    const legend = await page.textContent('#release-history .u-legend');
    if (480 > peak * 5) expect(legend).toContain('Release limit: 480 per day, far above');
    else expect(legend).not.toContain('far above');
    expect(timeline.series.some((p: any) => p.releases > 0)).toBe(true);
    // Opening a copy here sends this browser's device id for the license (X-Iki-Device): the
    // current hour has one more release and one more device than before (the seed ends at
    // the last quarter hour, and its devices are others').
    const other = buyerLicenses[0]!;
    const hour = `/api/licenses/${other}/activity?bucket=hour&from=${new Date(Math.floor(Date.now() / 3600_000) * 3600_000).toISOString()}`;
    const before = (await api(hour, buyer.token)).series.at(-1);
    await page.click(`#license-list tr[data-license-id="${other}"] button[data-open]`);
    await page.locator('#viewer-status .notice.success').waitFor({ timeout: 60_000 });
    const after = (await api(hour, buyer.token)).series.at(-1);
    expect([after.start, after.releases, after.devices]).toEqual([before.start, before.releases + 1, before.devices + 1]);
    const seed = await page.evaluate(() => (globalThis as any).localStorage.getItem('iki.playerDevice'));
    expect(seed).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Asked from this page, another buyer's license is not found.
    const refused = await page.evaluate(async (id) => (await fetch(`/api/licenses/${id}/activity?bucket=day`)).status, otherLicense);
    expect([401, 403, 404]).toContain(refused);
    await look(page, '#licenses-section', 'player-history-en-1280');
    await page.setViewportSize({ width: 360, height: 740 });
    await expect.poll(() => overflow(page)).toBe(0);
    await look(page, '#release-history', 'player-history-en-360');
    await page.context().close();
  });
});

describe('in Japanese', () => {
  it('the seller’s activity, a timeline and the flags, then the buyer’s history, with nothing English left', async () => {
    const { page } = await newPage('ja-JP', 'Asia/Tokyo');
    await signIn(page, seller, '/seller');
    const { query } = await openMaster(page);
    expect(query.get('tz')).toBe('Asia/Tokyo');
    await answer(page, /\/api\/licenses\/[0-9a-f]{16}\/activity$/, () => page.locator('ul.multiples li.spark-card .spark-foot button').first().click());
    await page.locator('.timeline .timeline-plot canvas').waitFor();
    for (const summary of await page.locator('details.numbers > summary').all()) await summary.click();
    await page.locator('#flags li.flag').first().waitFor();
    expect(await page.getAttribute('html', 'lang')).toBe('ja');
    expect(await englishLeft(page, data)).toEqual({ sentences: [], labels: [] });
    await look(page, 'section.activity', 'seller-activity-ja-1280');
    await look(page, 'section.timeline', 'seller-timeline-ja-1280');
    await look(page, '#flags', 'seller-flags-ja-1280');
    await page.setViewportSize({ width: 360, height: 740 });
    await expect.poll(() => overflow(page)).toBe(0);
    await look(page, 'section.activity', 'seller-activity-ja-360');
    await look(page, 'section.timeline', 'seller-timeline-ja-360');
    await page.context().close();

    const buyerView = await newPage('ja-JP', 'Asia/Tokyo', 360);
    await signIn(buyerView.page, buyer, '/player');
    await buyerView.page.click(`#license-list button[data-history="${buyerLicenses[1]}"]`);
    await buyerView.page.locator('#release-history .timeline-plot canvas').waitFor();
    await buyerView.page.click('#release-history details.numbers > summary');
    expect(await englishLeft(buyerView.page, data)).toEqual({ sentences: [], labels: [] });
    expect(await overflow(buyerView.page)).toBe(0);
    await look(buyerView.page, '#release-history', 'player-history-ja-360');
    await buyerView.context.close();
  }, 120_000);

  it('logged no console error and no CSP violation on any page', () => {
    expect(errors).toEqual([]);
  });
});
