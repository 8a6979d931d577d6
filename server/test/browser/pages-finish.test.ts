/**
 * Issue 24 item 8 in Chromium against a real service, in English and Japanese:
 * - every page has an Account link in its navigation (and the home page signed in shows no
 *   sign-in or sign-up form); each page is screenshotted at 1280 and 360 px in both languages;
 * - times are local dates and times with the ISO form in a tooltip, never a raw ISO string on
 *   the seller, account and player pages;
 * - the export card's drop zone is styled, lights up while something is dragged over it (not
 *   going dark over its own text), goes back when the drag leaves, and takes a drop;
 * - paths in the export preview wrap after a slash at 360 px, never inside a name that fits.
 * Every state is also measured at 360 px by narrow.ts.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newPage, screenshotDir, shoot } from './chromium.js';
import { namesSplit } from './narrow.js';
import { PASSWORD, buildMaster, newAccount, registerSigningKey, startService, type Account, type Service } from './setup.js';

let service: Service;
let browser: Browser;
let shots: string;
let seller: Account;
let buyer: Account;
const errors: string[] = [];

const PAGES = ['/', '/project', '/seller', '/player', '/account', '/verify-email', '/reset-password'];
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d/;

async function api(path: string, token: string, init: { method: string; body?: Uint8Array | string; type?: string }): Promise<any> {
  const response = await fetch(`${service.url}${path}`, { method: init.method, body: init.body,
    headers: { authorization: `Bearer ${token}`, 'content-type': init.type ?? 'application/json' } });
  expect(response.status, `${init.method} ${path}`).toBeLessThan(300);
  return response.json();
}

async function signIn(page: Page, account: Account, next: string): Promise<void> {
  await page.goto(`${service.url}/?next=${encodeURIComponent(next)}`);
  await page.fill('#signin-email', account.email);
  await page.fill('#signin-password', PASSWORD);
  await Promise.all([page.waitForURL(`${service.url}${next}`), page.click('#signin button[type=submit]')]);
}

/** Waits until the page's own script has run (the session bar is drawn) and the page is loaded. */
async function settled(page: Page): Promise<void> {
  await page.waitForLoadState('load');
  await page.locator('#session *').first().waitFor();
}

beforeAll(async () => {
  service = await startService({ perLicense: 20, perUser: 120, windowSeconds: 3600 });
  seller = await newAccount(service, 'Sela Seller');
  buyer = await newAccount(service, 'Bo Buyer');
  const { seed } = await registerSigningKey(service, seller);
  const built = await buildMaster(service, seed);
  const master = await api('/api/licenses/masters', seller.token,
    { method: 'POST', body: new Uint8Array(await readFile(built.file)), type: 'application/vnd.iki.model' });
  await api(`/api/licenses/masters/${master.masterId}/licenses`, seller.token, { method: 'POST', body: JSON.stringify({ accountId: buyer.accountId }) });
  browser = await launchChromium();
  shots = await screenshotDir();
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('issue 24 item 8: the pages finished', () => {
  it.each([{ lang: 'en', account: 'Account' }, { lang: 'ja', account: 'アカウント' }])(
    '$lang: every page has an Account link in its navigation; the home page signed in has no forms; screenshots at 1280 and 360 px',
    async ({ lang, account }) => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: lang === 'ja' ? 'ja-JP' : 'en-US' });
      const page = await context.newPage();
      page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
      for (const path of PAGES) {
        await page.goto(`${service.url}${path}`);
        await settled(page);
        expect(await page.getAttribute('html', 'lang')).toBe(lang);
        const link = page.locator('nav a[href="/account"]');
        expect({ path, count: await link.count(), text: await link.textContent() }).toEqual({ path, count: 1, text: account });
        await shoot(page, shots, `${lang}-${path.slice(1) || 'home'}-out-1280`);
      }
      await signIn(page, seller, '/account');
      for (const path of PAGES) {
        await page.goto(`${service.url}${path}`);
        await settled(page);
        expect(await page.locator('nav a[href="/account"]').textContent()).toBe(account);
        if (path === '/') {
          expect(await page.locator('#signin').isVisible()).toBe(false);
          expect(await page.locator('#signup').isVisible()).toBe(false);
        }
        await shoot(page, shots, `${lang}-${path.slice(1) || 'home'}-1280`);
        await page.setViewportSize({ width: 360, height: 740 });
        await shoot(page, shots, `${lang}-${path.slice(1) || 'home'}-360`);
        await page.setViewportSize({ width: 1280, height: 800 });
      }
      await context.close();
    }, 120_000);

  it('times are local dates and times with the ISO form in a tooltip; no raw ISO time on the seller, account and player pages', async () => {
    const { context, page } = await newPage(browser, errors);
    const times = async () => page.evaluate((iso) => {
      const doc = (globalThis as any).document;
      const shown = [...doc.querySelectorAll('time')].map((t: any) => ({ text: String(t.textContent), title: String(t.getAttribute('title') ?? '') }));
      return { count: shown.length, bad: shown.filter((t) => new RegExp(iso).test(t.text) || !new RegExp(iso).test(t.title)),
        raw: (String(doc.body.innerText).match(new RegExp(`${iso}\\S*`, 'g')) ?? []) };
    }, ISO.source);
    await signIn(page, seller, '/seller');
    await page.click('details.master > summary');
    await page.locator('details.master[open] tbody tr').first().waitFor();
    expect(await times()).toMatchObject({ bad: [], raw: [] });
    expect((await times()).count).toBeGreaterThan(0);
    await page.goto(`${service.url}/account`);
    await page.locator('#signing-keys, #sessions, main time').first().waitFor();
    expect(await times()).toMatchObject({ bad: [], raw: [] });
    await context.close();
    const other = await newPage(browser, errors);
    const buyerPage = other.page;
    await signIn(buyerPage, buyer, '/player');
    await buyerPage.locator('#license-list tbody tr').first().waitFor();
    const onPlayer = await buyerPage.evaluate(() => String((globalThis as any).document.body.innerText));
    expect(onPlayer).not.toMatch(ISO);
    await other.context.close();
  }, 90_000);

  it('the export card: a styled drop zone that lights up while a file is dragged over it, and takes the drop', async () => {
    const { context, page } = await newPage(browser, errors);
    await signIn(page, seller, '/seller');
    const zone = page.locator('#export-drop');
    await zone.waitFor();
    const look = () => zone.evaluate((z) => {
      const style = (globalThis as any).getComputedStyle(z);
      return { over: z.classList.contains('over'), border: `${style.borderTopStyle} ${style.borderTopColor}`, background: style.backgroundColor };
    });
    const idle = await look();
    expect(idle.over).toBe(false);
    expect(idle.border).toMatch(/^dashed /);
    // A DataTransfer with a file, as a drag from the desktop carries.
    const transfer = await page.evaluateHandle(() => {
      const g = globalThis as any;
      const data = new g.DataTransfer();
      const model3 = { Version: 3, FileReferences: { Moc: 'aster.moc3', Textures: [] } };
      data.items.add(new g.File([JSON.stringify(model3)], 'aster.model3.json', { type: 'application/json' }));
      data.items.add(new g.File(['moc'], 'aster.moc3'));
      return data;
    });
    await zone.dispatchEvent('dragenter', { dataTransfer: transfer });
    await zone.dispatchEvent('dragover', { dataTransfer: transfer });
    const over = await look();
    expect(over.over).toBe(true);
    expect(over.border).not.toBe(idle.border);
    expect(over.background).not.toBe(idle.background);
    await shoot(page, shots, 'export-drag-over');
    // Moving onto the zone's own text is not leaving it.
    await zone.evaluate((z) => {
      const g = globalThis as any;
      z.dispatchEvent(new g.DragEvent('dragleave', { bubbles: true, relatedTarget: z.querySelector('p') }));
    });
    expect((await look()).over).toBe(true);
    await zone.evaluate((z) => {
      const g = globalThis as any;
      z.dispatchEvent(new g.DragEvent('dragleave', { bubbles: true, relatedTarget: g.document.body }));
    });
    expect(await look()).toEqual(idle);
    await zone.dispatchEvent('dragenter', { dataTransfer: transfer });
    await zone.dispatchEvent('drop', { dataTransfer: transfer });
    expect((await look()).over).toBe(false);
    await page.locator('#export-files').waitFor();
    expect(await page.locator('#export-files tbody tr').evaluateAll((rows) => rows.map((r) => (r as any).dataset.path).sort()))
      .toEqual(['aster.moc3', 'aster.model3.json']);
    await context.close();
  });

  it('the export preview at 360 px: long paths break after a slash, never inside a name that fits', async () => {
    const { context, page } = await newPage(browser, errors, { width: 360, height: 740 });
    await signIn(page, seller, '/seller');
    const dir = join(service.dir, 'long-paths');
    const moc = 'moc_files_of_the_spring_edition/aster_spring_edition.moc3';
    const motion = 'motions_of_the_spring_edition/idle_standing_00.motion3.json';
    const model3 = { Version: 3, FileReferences: { Moc: moc, Textures: [], Motions: { Idle: [{ File: motion }] } } };
    for (const [file, text] of [['Aster.model3.json', JSON.stringify(model3)], [moc, 'moc'], [motion, '{"Version":3}']] as const) {
      await mkdir(dirname(join(dir, 'model', file)), { recursive: true });
      await writeFile(join(dir, 'model', file), text);
    }
    await page.setInputFiles('#export-folder', join(dir, 'model'));
    await page.locator('#export-files').waitFor();
    const paths = await page.locator('#export-files .mono.path').allTextContents();
    expect(paths).toEqual(expect.arrayContaining([moc, motion]));
    expect(await namesSplit(page, '#export-files')).toEqual([]);
    await shoot(page, shots, 'export-paths-360');
    await context.close();
  });

  it('logged no script errors', () => {
    expect(errors).toEqual([]);
  });
});
