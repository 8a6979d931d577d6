/**
 * The project page in Chromium against a real service (SPEC "What the service does" 7): saving
 * signed out shows this browser's device key on reopening; signed in, the key is registered and
 * the file is a verified account's; revoking the key on the page marks the file revoked; a flipped
 * byte shows "modified after it was signed" until acknowledged; a password file asks, refuses a
 * wrong password and opens with the right one; an account file refuses another account and a
 * signed-out page, naming the owner; `.rigproj` bundles open (good) or are refused (bomb,
 * traversal); markup in a snapshot stays text; the stored key cannot be exported; and files move
 * between the page and the CLI with the same verdict.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { craftZip } from '../../../tests/fixtures/zip-craft.mjs';
import { launchChromium, screenshotDir, shoot } from './chromium.js';
import { ProjectDriver, text, type SaveOptions } from './project-driver.js';
import { newAccount, startService, type Account, type Service } from './setup.js';

declare const document: { querySelector<T = { textContent: string | null }>(selector: string): T | null;
  querySelectorAll(selector: string): ArrayLike<unknown> };
declare const indexedDB: { open(name: string): { onsuccess: (() => void) | null; onerror: (() => void) | null; result: any } };
declare const crypto: { subtle: { exportKey(format: string, key: unknown): Promise<unknown> } };
declare const window: Record<string, unknown>;

const CLI = new URL('../../../ts/dist/cli/main.js', import.meta.url).pathname;
const run = promisify(execFile);

let service: Service;
let browser: Browser;
let shots: string;
let ada: Account;
let bob: Account;
let driver: ProjectDriver;
const errors: string[] = [];
/** A password the strength check takes (unrelated words). */
const STRONG = 'violet otter harbour quantum';
const freshPage = () => driver.freshPage();
const signIn = (page: Page, account: Account) => driver.signIn(page, account);
const save = (page: Page, name: string, options?: SaveOptions) => driver.save(page, name, options);
const open = (page: Page, path: string) => driver.open(page, path);

beforeAll(async () => {
  service = await startService({ perLicense: 20, perUser: 120, windowSeconds: 3600 });
  [ada, bob] = [await newAccount(service, 'Ada Author'), await newAccount(service, 'Bob Buyer')];
  browser = await launchChromium();
  driver = await ProjectDriver.create(service, browser, errors);
  shots = await screenshotDir();
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('the project page', () => {
  it('signed out: saved by this browser\'s device key; the key cannot be exported; markup stays text', async () => {
    const { page, context } = await freshPage();
    const fingerprint = await page.getAttribute('#key-fingerprint', 'data-fingerprint');
    const file = await save(page, 'device', { notes: '<img src=x onerror="window.pwned=1">' });
    expect(await open(page, file)).toBe('device');
    expect(await text(page, '#opened .verdict')).toContain('this browser’s key');
    expect(await text(page, '#opened .verdict')).toContain(fingerprint ?? 'missing');
    expect(await text(page, 'pre.snapshot')).toContain('<img src=x onerror=\\"window.pwned=1\\">');
    expect(await page.evaluate(() => [document.querySelectorAll('#opened img').length, window.pwned])).toEqual([0, undefined]);
    await page.click('tr[data-asset="hero.png"] button');
    await page.waitForSelector('canvas[data-preview="hero.png"]');
    const refused = await page.evaluate(async () => {
      const db: any = await new Promise((resolve, reject) => {
        const req = indexedDB.open('iki-device-key');
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(new Error('no database'));
      });
      const record: any = await new Promise((resolve) => {
        const get = db.transaction('keys').objectStore('keys').get('current');
        get.onsuccess = () => resolve(get.result);
      });
      const outcomes = [];
      for (const format of ['pkcs8', 'jwk', 'raw']) {
        outcomes.push(await crypto.subtle.exportKey(format, record.privateKey).then(() => 'exported', (e: Error) => e.name));
      }
      return { extractable: record.privateKey.extractable, outcomes };
    });
    expect(refused).toEqual({ extractable: false, outcomes: ['InvalidAccessError', 'InvalidAccessError', 'InvalidAccessError'] });
    await shoot(page, shots, 'project-device');
    await context.close();
  });

  it('signed in: registered and certified; revoking on the page marks it revoked; a flipped byte is modified', async () => {
    const { page, context } = await freshPage();
    await signIn(page, ada);
    const file = await save(page, 'certified');
    expect(await page.getAttribute('#key-status', 'data-registered')).toBe('true');
    expect(await open(page, file)).toBe('account');
    expect(await text(page, '#opened .verdict')).toContain(`verified account: ${ada.accountId}`);
    expect(await text(page, '#opened .verdict')).toContain(ada.email);
    await shoot(page, shots, 'project-account');

    // Interop: the CLI gives the same verdict for the browser's file.
    const cli = JSON.parse((await run(process.execPath, [CLI, 'verify', file, '--service', service.url, '--json'])).stdout);
    expect(cli.verdict).toMatchObject({ kind: 'account', accountId: ada.accountId, revocation: 'active' });

    const flipped = join(service.dir, 'flipped.iki');
    const bytes = await readFile(file);
    bytes[bytes.length - 200] = (bytes[bytes.length - 200] as number) ^ 1;
    await writeFile(flipped, bytes);
    expect(await open(page, flipped)).toBe('modified');
    // A flipped byte inside an asset: the damaged entry is named as the project names it, not by its assets/<sha256> path.
    const inAsset = Buffer.from(await readFile(file));
    const png = inAsset.indexOf(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    expect(png).toBeGreaterThan(0);
    inAsset[png + 20] = (inAsset[png + 20] as number) ^ 1;
    const damagedFile = join(service.dir, 'damaged.iki');
    await writeFile(damagedFile, inAsset);
    expect(await open(page, damagedFile)).toBe('modified');
    const damaged = await text(page, '#opened .verdict');
    expect(damaged).not.toMatch(/assets\/[0-9a-f]{64}/);
    expect(damaged).toContain('Damaged: hero.png');
    expect(await open(page, flipped)).toBe('modified');
    expect(await page.$('pre.snapshot')).toBeNull();
    await page.click('#acknowledge');
    await page.waitForSelector('pre.snapshot');

    const own = await page.getAttribute('#key-fingerprint', 'data-fingerprint');
    await page.click(`#account-keys tr[data-key="${own}"] button`);
    await page.click('dialog.confirm button[value="confirm"]');
    await page.waitForSelector(`#account-keys tr[data-key="${own}"]:not(:has(button))`);
    expect(await open(page, file)).toBe('revoked');
    await shoot(page, shots, 'project-revoked');
    await context.close();
  });

  it('a password file shows its signer first, asks for the password and refuses a wrong one', async () => {
    const { page, context } = await freshPage();
    const fingerprint = await page.getAttribute('#key-fingerprint', 'data-fingerprint');
    // The CLI's strength check first: a guessable password is refused, with the CLI's words, and nothing is saved.
    await page.check('#protect-password');
    await page.fill('#save-password', 'a');
    await page.click('#save-project');
    await page.waitForSelector('#save-result [data-code="WEAK_PASSWORD"]');
    expect(await text(page, '#save-result')).toMatch(/^The password is easy to guess \(strength 0 of 4, about 10\^\d+ guesses\)\..*Choose a longer one/);
    await page.uncheck('#protect-password');
    const file = await save(page, 'secret', { password: STRONG });
    expect(await open(page, file)).toBe('password');
    // Who signed it comes first, before the password is asked (SPEC 7).
    expect(await page.getAttribute('#open-status > :first-child', 'data-verdict')).toBe('device');
    expect(await text(page, '#open-status .verdict')).toContain(fingerprint ?? 'missing');
    await page.fill('#open-password', 'wrong');
    await page.click('#password-form button');
    await page.waitForSelector('#open-status [data-code="WRONG_PASSWORD"]');
    await page.fill('#open-password', STRONG);
    await page.click('#password-form button');
    await page.waitForSelector('#opened .verdict[data-verdict="device"]');
    await context.close();
  });

  it('an account file opens for its account only; another account and a signed-out page see the owner named', async () => {
    const owner = await freshPage();
    await signIn(owner.page, ada);
    const file = await save(owner.page, 'mine', { account: true });
    expect(await open(owner.page, file)).toBe('account');
    const stranger = await freshPage();
    await signIn(stranger.page, bob);
    expect(await open(stranger.page, file)).toBe('WRONG_ACCOUNT');
    // The signer and its verdict first, then the refusal as a sentence; the id only in the details line.
    expect(await stranger.page.getAttribute('#open-status > :first-child', 'data-verdict')).toBe('account');
    expect(await text(stranger.page, '#open-status .verdict')).toContain(ada.accountId);
    expect(await text(stranger.page, '#open-status .notice.error p:first-child')).toBe('This file opens only for another account.');
    expect(await text(stranger.page, '#open-status .notice.error .meta')).toContain(ada.accountId);
    // At 360 px the verdict and the refusal, with their ids and keys, do not widen the page.
    await stranger.page.setViewportSize({ width: 360, height: 740 });
    expect(await stranger.page.evaluate(() => (document as any).documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    const signedOut = await freshPage();
    expect(await open(signedOut.page, file)).toBe('SIGN_IN_REQUIRED');
    expect(await signedOut.page.getAttribute('#open-status > :first-child', 'data-verdict')).toBe('account');
    expect(await text(signedOut.page, '#open-status .notice.error p:first-child')).not.toContain('acct_');
    expect(await text(signedOut.page, '#open-status')).toContain(ada.accountId);
    for (const p of [owner, stranger, signedOut]) await p.context.close();
  });

  it('assets are renamed, removed and replaced in the form; the same file chosen again reopens it', async () => {
    const { page, context } = await freshPage();
    const hero = { name: 'hero.png', mimeType: 'image/png', buffer: await readFile(driver.heroPng) };
    await page.setInputFiles('#asset-files', [hero, { name: 'readme.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') },
      { name: 'draft.txt', mimeType: 'text/plain', buffer: Buffer.from('draft') }]);
    // A file under a name already in the list replaces that asset (no duplicate that would block every save).
    await page.setInputFiles('#asset-files', [{ name: 'readme.txt', mimeType: 'text/plain', buffer: Buffer.from('hello again') }]);
    expect(await page.locator('#asset-list li').count()).toBe(3);
    await page.click('#asset-list li[data-asset="draft.txt"] button');
    await page.fill('#asset-list li[data-asset="readme.txt"] input', 'hero.png');
    await page.dispatchEvent('#asset-list li[data-asset="readme.txt"] input', 'change');
    expect(await text(page, '#asset-list li[data-asset="readme.txt"] .field-error')).toContain('already called “hero.png”');
    await page.fill('#asset-list li[data-asset="readme.txt"] input', 'notes/readme.txt');
    await page.dispatchEvent('#asset-list li[data-asset="readme.txt"] input', 'change');
    await page.waitForSelector('#asset-list li[data-asset="notes/readme.txt"]');
    await page.fill('#project-name', 'edited');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save-project')]);
    await page.waitForSelector('#save-result .notice.success');
    const path = join(service.dir, 'edited.iki');
    await download.saveAs(path);
    expect(await open(page, path)).toBe('device');
    expect(await page.evaluate(() => Array.from(document.querySelectorAll('#opened tr[data-asset]') as ArrayLike<any>)
      .map((r: any) => r.dataset.asset).sort())).toEqual(['hero.png', 'notes/readme.txt']);
    // The same file chosen again is opened again (the picker was cleared).
    await page.evaluate(() => (document.querySelector('#opened .verdict') as any).setAttribute('data-stale', ''));
    await page.setInputFiles('#open-file', path);
    await page.waitForSelector('#opened .verdict:not([data-stale])');
    await context.close();
  });

  it('.rigproj: a good bundle opens as a legacy one; a bomb and a traversal are refused', async () => {
    const { page, context } = await freshPage();
    const snapshot = { name: 'Old', canvas: { width: 4, height: 4 } };
    const good = join(service.dir, 'good.rigproj');
    await writeFile(good, craftZip([{ name: 'snapshot.json', content: Buffer.from(JSON.stringify(snapshot)) },
      { name: 'assets/a.txt', content: Buffer.from('a') }]));
    expect(await open(page, good)).toBe('legacy');
    const bomb = join(service.dir, 'bomb.rigproj');
    await writeFile(bomb, craftZip([{ name: 'snapshot.json', content: Buffer.from(JSON.stringify(snapshot)) },
      { name: 'assets/zeros', content: new Uint8Array(8 * 1024 * 1024), method: 8 }]));
    expect(await open(page, bomb)).toBe('RIGPROJ_LIMIT');
    const traversal = join(service.dir, 'traversal.rigproj');
    await writeFile(traversal, craftZip([{ name: 'snapshot.json', content: Buffer.from(JSON.stringify(snapshot)) },
      { name: '../../etc/passwd', content: Buffer.from('x') }]));
    expect(await open(page, traversal)).toBe('RIGPROJ_BAD_NAME');
    await context.close();
  });

  it('a project packed by the CLI opens on the page with the CLI\'s verdict', async () => {
    const key = join(service.dir, 'cli.key');
    await run(process.execPath, [CLI, 'keygen', '-o', key]);
    const folder = join(service.dir, 'cli-project');
    const { writeProjectFolder } = await import('../../../tests/fixtures/packages.mjs');
    await writeProjectFolder(folder, { blobBytes: 1000 });
    const out = join(service.dir, 'cli.iki');
    await run(process.execPath, [CLI, 'pack', folder, '--key', key, '-o', out]);
    const cli = JSON.parse((await run(process.execPath, [CLI, 'verify', out, '--service', service.url, '--json'])).stdout);
    const { page, context } = await freshPage();
    expect(await open(page, out)).toBe(cli.verdict.kind);
    expect(await text(page, '#opened .verdict')).toContain(cli.verdict.publicKey);
    await context.close();
    expect(errors).toEqual([]);
  });
});
