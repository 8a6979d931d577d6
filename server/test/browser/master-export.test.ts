/**
 * Issue 12 in Chromium against a real service, without any terminal:
 *
 * - the seller picks the tests' look-alike model folder on `/seller`; the preview lists what
 *   `iki pack` would pack and the unreferenced file it leaves out; the browser packs it in the
 *   export worker, signs it with its own key (registered with the account on the way), seals
 *   it to the service and uploads it with progress; the service accepts it;
 * - a license for a second account is created; the buyer opens it on `/player`, where the
 *   built-in runtime loads the model through the package resolver only: every file the model
 *   JSON references resolves (asserted per path), each texture's pixels match the source
 *   within the watermark's amplitude, and the sound decodes into an AudioBuffer;
 * - nothing leaked: no `URL.createObjectURL` call and no `blob:`/`data:` URL in the page, the
 *   player's CSP allows neither for images or media, IndexedDB and Cache Storage hold nothing
 *   and no service worker is registered, no request left the service's origin, and no request
 *   after the key release carried the sealed license key; closing the player empties it and
 *   ends its worker.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePng } from '../../../tests/fixtures/png.mjs';
import { writeModelPackage, type ModelPackage } from '../../../tests/fixtures/packages.mjs';
import { launchChromium, newPage, screenshotDir, shoot } from './chromium.js';
import { namesSplit } from './narrow.js';
import { PASSWORD, newAccount, startService, type Account, type Service } from './setup.js';

// Browser globals of the page callbacks (the server's tsconfig has no DOM lib).
interface PageElement { textContent: string | null; dataset: Record<string, string | undefined>; getAttribute(n: string): string | null }
interface PageCanvas extends PageElement {
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
}
declare const document: { querySelectorAll<T = PageElement>(selector: string): Iterable<T> & ArrayLike<T> };
declare const indexedDB: { databases(): Promise<{ name?: string }[]> };
declare const caches: { keys(): Promise<string[]> };
declare const navigator: { serviceWorker: { getRegistrations(): Promise<unknown[]> } };
declare const localStorage: { length: number; getItem(key: string): string | null } & Record<string, unknown>;

let service: Service;
let browser: Browser;
let shots: string;
let seller: Account;
let buyer: Account;
let model: ModelPackage;
let sellerPage: Page;
let buyerPage: Page;
let masterId: string;
let licenseId: string;
const errors: string[] = [];

async function signIn(page: Page, account: Account, next: string): Promise<void> {
  await page.goto(`${service.url}/?next=${encodeURIComponent(next)}`);
  await page.fill('#signin-email', account.email);
  await page.fill('#signin-password', PASSWORD);
  await Promise.all([page.waitForURL(`${service.url}${next}`), page.click('#signin button[type=submit]')]);
}

/** Names in the page's origin-private file system. */
async function scratchFiles(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const root = await (navigator as unknown as { storage: { getDirectory(): Promise<{ keys(): AsyncIterable<string> }> } }).storage.getDirectory();
    const names: string[] = [];
    for await (const name of root.keys()) names.push(name);
    return names;
  });
}

/** Every reference of a model3.json (as written), in the order a runtime meets them. */
function referencesOf(model3: { FileReferences: Record<string, unknown> }): string[] {
  const refs = model3.FileReferences as Record<string, any>;
  const out = [refs.Moc, ...refs.Textures, refs.Physics, refs.Pose, refs.DisplayInfo, refs.UserData,
    ...refs.Expressions.map((e: { File: string }) => e.File)];
  for (const motions of Object.values(refs.Motions) as { File: string; Sound?: string }[][]) {
    for (const m of motions) out.push(m.File, ...(m.Sound === undefined ? [] : [m.Sound]));
  }
  return [...new Set(out.filter((r): r is string => typeof r === 'string'))];
}

beforeAll(async () => {
  service = await startService({ perLicense: 5, perUser: 120, windowSeconds: 3600 });
  buyer = await newAccount(service, 'Bea Buyer');
  model = await writeModelPackage(join(service.dir, 'Aster'), { name: 'Aster', atlasSize: 256, mocBytes: 4000, soundSamples: 800 });
  browser = await launchChromium();
  shots = await screenshotDir();
  sellerPage = (await newPage(browser, errors)).page;
  buyerPage = (await newPage(browser, errors)).page;
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('master export in the browser and the player runtime', () => {
  it('seller: signs up, picks a model folder, sees the preview, exports, signs, uploads with progress', async () => {
    // Sign up on the home page and verify through the e-mailed link, as a new seller does.
    const email = `esme-${Date.now()}@example.com`;
    await sellerPage.goto(`${service.url}/`);
    await sellerPage.fill('#signup-name', 'Esme Exporter');
    await sellerPage.fill('#signup-email', email);
    await sellerPage.fill('#signup-password', PASSWORD);
    await sellerPage.click('#signup button[type=submit]');
    await sellerPage.locator('#signup .notice.success').waitFor();
    const link = new URL(String(service.logs.find((l) => l.fields['to'] === email)?.fields['link']));
    await sellerPage.goto(`${service.url}${link.pathname}${link.search}`);
    await sellerPage.locator('#result .notice.success').waitFor();
    const session = await (await fetch(`${service.url}/api/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }) })).json() as { accountId: string; accessToken: string };
    seller = { accountId: session.accountId, email, name: 'Esme Exporter', token: session.accessToken };
    await signIn(sellerPage, seller, '/seller');
    expect(await sellerPage.textContent('#install-command')).toBe(`npm install -g ${service.url}/downloads/iki-cli.tgz`);
    // Issue 22 item 11: the tarball's SHA-256 beside it, and a command that checks it before installing.
    const tarball = Buffer.from(await (await fetch(`${service.url}/downloads/iki-cli.tgz`)).arrayBuffer());
    const sha256 = createHash('sha256').update(tarball).digest('hex');
    expect(await sellerPage.textContent('#cli-sha256')).toBe(sha256);
    expect(await sellerPage.textContent('#install-checked-command')).toBe(`curl -fsSL -o iki-cli.tgz ${service.url}/downloads/iki-cli.tgz`
      + ` && echo '${sha256}  iki-cli.tgz' | sha256sum -c - && npm install -g ./iki-cli.tgz`);
    // The browser export works here, so the CLI how-to starts collapsed.
    expect(await sellerPage.locator('#how-to').evaluate((d) => (d as unknown as { open: boolean }).open)).toBe(false);
    await sellerPage.setInputFiles('#export-folder', model.dir);
    await sellerPage.waitForSelector('#export-files');
    const rows = await sellerPage.evaluate(() => [...document.querySelectorAll('#export-files tbody tr')]
      .map((tr) => [tr.dataset['path'], tr.dataset['role']]));
    expect(rows.map(([path]) => path).sort()).toEqual([...model.files].sort());
    expect(rows.filter(([, role]) => role === 'texture').map(([path]) => path)).toEqual(model.textures);
    expect(await sellerPage.textContent('#export-notes')).toContain('README.txt');
    expect(await sellerPage.locator('#export-notes li.error').count()).toBe(0);
    await shoot(sellerPage, shots, '20-export-preview');
    // Record every progress phase the bar shows.
    await sellerPage.evaluate(() => {
      const seen: string[] = [];
      (globalThis as unknown as { ikiPhases: string[] }).ikiPhases = seen;
      const Observer = (globalThis as unknown as { MutationObserver: new (cb: () => void) => { observe(n: unknown, o: unknown): void } }).MutationObserver;
      new Observer(() => {
        for (const bar of document.querySelectorAll('#export-progress')) {
          const phase = bar.dataset['phase'];
          if (phase !== undefined && seen.at(-1) !== phase) seen.push(phase);
        }
      }).observe((document as unknown as { body: unknown }).body, { subtree: true, attributes: true, childList: true });
    });
    // The seller names the master before the export: it starts as the model's own name.
    expect(await sellerPage.inputValue('#export-name')).toBe('Aster');
    await sellerPage.fill('#export-name', 'Aster, spring edition');
    await sellerPage.click('#export-start');
    await sellerPage.waitForSelector('#export-status .notice', { timeout: 60_000 });
    expect(await sellerPage.getAttribute('#export-status .notice', 'class')).toContain('success');
    const phases = await sellerPage.evaluate(() => (globalThis as unknown as { ikiPhases: string[] }).ikiPhases);
    expect(phases).toEqual(expect.arrayContaining(['checking', 'packing', 'uploading']));
    masterId = String(await sellerPage.getAttribute('#export-status', 'data-master-id'));
    // The chunks were deflated by the export worker's deflate workers (issue 28 item 2).
    expect(service.logs.filter((l) => l.message === 'request' && l.fields['path'] === '/assets/js/deflate-worker.js'
      && l.fields['status'] === 200).length).toBeGreaterThan(0);
    // The packed master's scratch file (origin-private file system) is gone after the upload.
    expect(await scratchFiles(sellerPage)).toEqual([]);
    await sellerPage.waitForSelector(`details.master[data-master-id="${masterId}"]`);
    await shoot(sellerPage, shots, '21-export-done');
    // The service recorded it as this seller's master, signed by the browser's registered key.
    const masters = await (await fetch(`${service.url}/api/licenses/masters`, { headers: { authorization: `Bearer ${seller.token}` } })).json() as any;
    const master = masters.masters.find((m: { masterId: string }) => m.masterId === masterId);
    expect(master).toMatchObject({ name: 'Aster, spring edition', entries: model.files.length, textures: model.textures.length });
    const keys = await (await fetch(`${service.url}/api/keys/signing`, { headers: { authorization: `Bearer ${seller.token}` } })).json() as any;
    expect(keys.keys.filter((k: { status: string }) => k.status === 'active')).toHaveLength(1);
    // Cancel: a second export, held at its upload, is cancelled; the service keeps nothing.
    let held = false;
    await sellerPage.context().route('**/api/licenses/masters', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      held = true;
      await new Promise((resolve) => setTimeout(resolve, 15_000));
      await route.abort().catch(() => undefined);
    });
    await sellerPage.click('#export-start');
    await sellerPage.waitForFunction(() => [...document.querySelectorAll('#export-progress')]
      .some((bar) => bar.dataset['phase'] === 'uploading' || bar.dataset['phase'] === 'checking-upload'), undefined, { timeout: 60_000 });
    await sellerPage.click('#export-cancel');
    await sellerPage.locator('#export-status .notice', { hasText: 'Export cancelled' }).waitFor();
    expect(held).toBe(true);
    expect(await sellerPage.isDisabled('#export-cancel')).toBe(true);
    const after = await (await fetch(`${service.url}/api/licenses/masters`, { headers: { authorization: `Bearer ${seller.token}` } })).json() as any;
    expect(after.masters).toHaveLength(1);
    expect(await scratchFiles(sellerPage)).toEqual([]);
    await sellerPage.context().unrouteAll({ behavior: 'ignoreErrors' });
    const created = await fetch(`${service.url}/api/licenses/masters/${masterId}/licenses`, {
      method: 'POST', headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: buyer.email }) });
    expect(created.status).toBe(201);
    licenseId = ((await created.json()) as { licenseId: string }).licenseId;
  }, 120_000);

  it('buyer: the built-in runtime resolves every reference, draws the textures, decodes the sound; nothing leaks', async () => {
    await buyerPage.addInitScript(() => {
      const seen: string[] = [];
      (globalThis as unknown as { ikiUrls: string[] }).ikiUrls = seen;
      const urls = URL as unknown as { createObjectURL(o: unknown): string };
      const create = urls.createObjectURL.bind(URL);
      urls.createObjectURL = (o: unknown) => {
        seen.push('URL.createObjectURL');
        return create(o);
      };
    });
    const requests: Request[] = [];
    buyerPage.context().on('request', (r) => requests.push(r));
    let sealed = '';
    buyerPage.context().on('response', async (r) => {
      if (r.request().method() === 'POST' && r.url().endsWith(`/api/licenses/${licenseId}/key`)) sealed = (await r.json()).sealedKey;
    });
    const player = await fetch(`${service.url}/player`);
    const csp = player.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/img-src 'self'(;|$)/);
    expect(csp).not.toMatch(/blob:|data:/);
    await signIn(buyerPage, buyer, '/player');
    await buyerPage.click(`#license-list tr[data-license-id="${licenseId}"] button`);
    await buyerPage.waitForSelector('#viewer-status .notice', { timeout: 60_000 });
    expect(await buyerPage.getAttribute('#viewer-status .notice', 'class')).toContain('success');
    expect(await buyerPage.getAttribute('#runtime', 'data-runtime')).toBe('ready');
    const model3 = JSON.parse(await readFile(join(model.dir, model.model3), 'utf8'));
    const resolved = await buyerPage.evaluate(() => [...document.querySelectorAll('#runtime-references tbody tr')]
      .map((tr) => ({ reference: tr.dataset['reference'], ok: tr.dataset['ok'], status: tr.dataset['status'], role: tr.dataset['role'] })));
    const expected = referencesOf(model3);
    for (const reference of expected) {
      const row = resolved.find((r) => r.reference === reference);
      expect(row, reference).toBeDefined();
      expect([reference, row?.status, row?.ok]).toEqual([reference, '200', 'true']);
    }
    // Nothing else was asked for (a motion used by two groups is fetched once per use).
    expect([...new Set(resolved.filter((r) => r.role !== 'model').map((r) => r.reference))].sort()).toEqual([...expected].sort());
    // Textures, drawn from ImageBitmaps the resolver made: the source within the watermark's ±2.
    const canvases = await buyerPage.evaluate(() => [...document.querySelectorAll<PageCanvas>('#textures canvas')].map((c) => ({
      path: c.dataset['path'], width: c.width, height: c.height,
      rgba: Array.from(c.getContext('2d')?.getImageData(0, 0, c.width, c.height).data ?? []) })));
    expect(canvases.map((c) => c.path)).toEqual(model.textures);
    for (const canvas of canvases) {
      const source = decodePng(await readFile(join(model.dir, canvas.path!)));
      expect([canvas.width, canvas.height]).toEqual([source.width, source.height]);
      let visible = 0;
      let maxDelta = 0;
      for (let p = 0; p < source.rgba.length; p += 4) {
        expect(canvas.rgba[p + 3]).toBe(source.rgba[p + 3]);
        if (source.rgba[p + 3] !== 255) continue;
        visible += 1;
        for (let c = 0; c < 3; c++) maxDelta = Math.max(maxDelta, Math.abs(canvas.rgba[p + c]! - source.rgba[p + c]!));
      }
      expect(visible, canvas.path).toBeGreaterThan(100);
      expect(maxDelta, canvas.path).toBeLessThanOrEqual(2);
    }
    // The motion's sound, decoded: 800 samples at 8 kHz, one channel.
    const sounds = await buyerPage.evaluate(() => [...document.querySelectorAll('#sounds li')].map((li) => ({
      sound: li.dataset['sound'], duration: Number(li.dataset['duration']), channels: li.dataset['channels'] })));
    expect(sounds).toEqual([{ sound: 'sounds/tap_00.wav', duration: expect.closeTo(0.1, 2), channels: '1' }]);
    expect(await buyerPage.locator('#runtime-motions tbody tr').count()).toBe(3);
    expect(await buyerPage.textContent('#runtime-motions')).toContain('ParamBodyAngleX');
    expect(await buyerPage.textContent('#runtime-expressions')).toContain('ParamEyeLSmile');
    await shoot(buyerPage, shots, '22-player-runtime');
    // At 360 px the resolver table's caption spans the table (not one word per line) and its
    // references are paths that break after a slash (a <wbr> after each), never inside a name that fits.
    await buyerPage.setViewportSize({ width: 360, height: 740 });
    const table = await buyerPage.evaluate(() => {
      const doc = (globalThis as any).document;
      const paths = [...doc.querySelectorAll('#runtime-references tbody tr')].map((tr: any) => tr.querySelector('.mono.path'));
      return {
        paths: paths.every((p: any) => p !== null && p.querySelectorAll('wbr').length === (p.textContent.match(/\//g) ?? []).length),
        caption: doc.querySelector('#runtime-references caption').getBoundingClientRect().width
          >= doc.querySelector('#runtime-references').getBoundingClientRect().width - 1,
      };
    });
    expect(table).toEqual({ paths: true, caption: true });
    expect(await namesSplit(buyerPage, '#runtime-references')).toEqual([]);
    expect(await namesSplit(buyerPage, '#textures')).toEqual([]);
    await shoot(buyerPage, shots, '22-player-runtime-360');
    await buyerPage.setViewportSize({ width: 1280, height: 900 });

    // Nothing decrypted left memory.
    const page = await buyerPage.evaluate(async () => ({
      calls: (globalThis as unknown as { ikiUrls: string[] }).ikiUrls,
      urls: [...document.querySelectorAll('[src], [href], [poster], [srcset]')]
        .flatMap((e) => ['src', 'href', 'poster', 'srcset'].map((a) => e.getAttribute(a) ?? '')).filter((u) => /^(blob|data):/i.test(u)),
      indexedDb: (await indexedDB.databases()).map((d) => d.name),
      caches: await caches.keys(),
      serviceWorkers: (await navigator.serviceWorker.getRegistrations()).length,
      localStorage: Object.keys(localStorage).map((k) => (k === 'iki.playerDevice'
        && /^[A-Za-z0-9_-]{43}$/.test(localStorage.getItem(k) ?? '') ? 'device seed' : k)),
    }));
    // The one service worker is the package URLs' (it keeps nothing; package-urls.test.ts); the
    // one stored item is the player's random device seed (docs/activity.md), nothing of the copy.
    expect(page).toEqual({ calls: [], urls: [], indexedDb: [], caches: [], serviceWorkers: 1, localStorage: ['device seed'] });
    expect(requests.map((r) => new URL(r.url()).origin).filter((o) => o !== service.url)).toEqual([]);
    expect(sealed).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const carried = requests.filter((r) => r.url().includes(sealed) || (r.postData() ?? '').includes(sealed));
    expect(carried).toEqual([]);
    const release = requests.find((r) => r.method() === 'POST' && r.url().endsWith(`/api/licenses/${licenseId}/key`));
    expect(Object.keys(JSON.parse(release?.postData() ?? '{}'))).toEqual(['publicKey']);

    // Closing the player empties the page and ends the worker with its WASM instance.
    const worker = buyerPage.workers()[0];
    const ended = new Promise<void>((resolve) => worker?.once('close', () => resolve()));
    await buyerPage.click('#viewer-status button');
    expect(await buyerPage.locator('#package *').count()).toBe(0);
    await ended;
    expect(buyerPage.workers()).toHaveLength(0);
    expect(errors).toEqual([]);
  }, 120_000);
});
