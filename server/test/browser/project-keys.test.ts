/**
 * This browser's signing keys over days of use (issue 24 items 1 and 2), in Chromium against a
 * real service: two accounts that sign in on one browser profile each make, register and sign
 * with their own key, and neither page shows the other's id or key; revoking this browser's key
 * asks first, then a new key is made and registered and the next save signs with it, while a
 * file signed with the old key opens as "key revoked"; a key revoked elsewhere (another device)
 * is never used to claim the account: the next save replaces it first.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshotDir, shoot } from './chromium.js';
import { englishLeft } from './i18n-check.js';
import { ProjectDriver, text } from './project-driver.js';
import { newAccount, startService, type Account, type Service } from './setup.js';

let service: Service;
let browser: Browser;
let driver: ProjectDriver;
let ada: Account;
let bob: Account;
const errors: string[] = [];

beforeAll(async () => {
  service = await startService({ perLicense: 20, perUser: 120, windowSeconds: 3600 });
  [ada, bob] = [await newAccount(service, 'Ada Author'), await newAccount(service, 'Bob Buyer')];
  browser = await launchChromium();
  driver = await ProjectDriver.create(service, browser, errors);
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('this browser\'s keys', () => {
  it('two accounts in one profile each register their own key and open their own account files', async () => {
    const { page, context } = await driver.freshPage();
    const signedOutKey = await page.getAttribute('#key-fingerprint', 'data-fingerprint');
    await driver.signIn(page, ada);
    const adaFile = await driver.save(page, 'ada', { account: true });
    const adaKey = await page.getAttribute('#key-fingerprint', 'data-fingerprint');
    expect(await page.getAttribute('#key-status', 'data-registered')).toBe('true');
    expect(adaKey).not.toBe(signedOutKey);
    expect(await driver.open(page, adaFile)).toBe('account');
    expect(await text(page, '#opened .verdict')).toContain(adaKey ?? 'missing');

    await driver.signOut(page);
    expect(await page.getAttribute('#key-fingerprint', 'data-fingerprint')).toBe(signedOutKey);
    await driver.signIn(page, bob);
    const bobKey = await page.getAttribute('#key-fingerprint', 'data-fingerprint');
    expect(bobKey).not.toBe(adaKey);
    expect(bobKey).not.toBe(signedOutKey);
    const bobFile = await driver.save(page, 'bob', { account: true });
    expect(await page.getAttribute('#key-status', 'data-registered')).toBe('true');
    expect(await driver.open(page, bobFile)).toBe('account');
    expect(await text(page, '#opened .verdict')).toContain(bob.email);
    expect(await text(page, '#opened .verdict')).toContain(bobKey ?? 'missing');
    // Bob's page never shows Ada's account or key, and no raw code.
    const body = await text(page, 'main');
    expect(body).not.toContain(ada.accountId);
    expect(body).not.toContain(adaKey ?? 'missing');
    expect(body).not.toContain('SIGNING_KEY_TAKEN');
    // Ada's account file, opened by Bob on the browser Ada also uses: her signer first, then a sentence naming her as his other account.
    expect(await driver.open(page, adaFile)).toBe('WRONG_ACCOUNT');
    expect(await page.getAttribute('#open-status > :first-child', 'data-verdict')).toBe('account');
    expect(await text(page, '#open-status .notice.error p:first-child'))
      .toBe(`This file opens only for your other account (${ada.email}). Sign in as that account to open it.`);

    // Back to Ada on the same profile: her own key again, still registered.
    await driver.signOut(page);
    await driver.signIn(page, ada);
    expect(await page.getAttribute('#key-fingerprint', 'data-fingerprint')).toBe(adaKey);
    expect(await driver.open(page, adaFile)).toBe('account');
    await context.close();
  });

  it('revoking this browser\'s key asks, then a new key is registered and signs; the old file shows "key revoked"', async () => {
    const { page, context } = await driver.freshPage();
    await driver.signIn(page, ada);
    const before = await driver.save(page, 'before');
    const oldKey = await page.getAttribute('#key-fingerprint', 'data-fingerprint') as string;
    await page.click(`#account-keys tr[data-key="${oldKey}"] button`);
    expect(await text(page, 'dialog.confirm')).toContain(oldKey);
    expect(await text(page, 'dialog.confirm')).toContain('Chrome on Linux');
    await page.click('dialog.confirm button[value="cancel"]');
    expect(await page.getAttribute(`#account-keys tr[data-key="${oldKey}"]`, 'data-status')).toBe('active');

    await page.click(`#account-keys tr[data-key="${oldKey}"] button`);
    await page.click('dialog.confirm button[value="confirm"]');
    await page.waitForSelector(`#key-fingerprint:not([data-fingerprint="${oldKey}"])`);
    await page.waitForSelector(`#account-keys tr[data-key="${oldKey}"][data-status="revoked"]`);
    const newKey = await page.getAttribute('#key-fingerprint', 'data-fingerprint') as string;
    expect(await page.getAttribute('#key-status', 'data-registered')).toBe('true');
    expect(await page.getAttribute(`#account-keys tr[data-key="${newKey}"]`, 'data-status')).toBe('active');
    expect(await text(page, `#account-keys tr[data-key="${oldKey}"]`)).toMatch(/Revoked \S/);

    const after = await driver.save(page, 'after');
    expect(await driver.open(page, after)).toBe('account');
    expect(await text(page, '#opened .verdict')).toContain(newKey);
    expect(await driver.open(page, before)).toBe('revoked');
    await context.close();
  });

  it('a key revoked on another device is replaced before the next save claims the account', async () => {
    const { page, context } = await driver.freshPage();
    await driver.signIn(page, bob);
    await driver.save(page, 'first');
    const oldKey = await page.getAttribute('#key-fingerprint', 'data-fingerprint') as string;
    const revoked = await fetch(`${service.url}/api/keys/signing/${oldKey}/revoke`, {
      method: 'POST', headers: { authorization: `Bearer ${bob.token}` } });
    expect(revoked.status).toBe(200);
    await page.fill('#project-name', 'second');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save-project')]);
    await page.waitForSelector('#save-result .notice.success');
    expect(await page.getAttribute('#save-result .notice', 'data-signed-as')).toBe('account');
    expect(await page.$('#save-result [data-rotated="true"]')).not.toBeNull();
    const path = `${service.dir}/second.iki`;
    await download.saveAs(path);
    expect(await driver.open(page, path)).toBe('account');
    const verdict = await text(page, '#opened .verdict');
    expect(verdict).not.toContain(oldKey);
    expect(await page.getAttribute('#key-fingerprint', 'data-fingerprint')).not.toBe(oldKey);
    await context.close();
    expect(errors).toEqual([]);
  });

  it('in Japanese (the remembered choice): the project page, the strength refusal, the verdict, the key panel and the account page, at 1280 and 360 px', async () => {
    const shots = await screenshotDir();
    const { page, context } = await driver.freshPage();
    await context.addCookies([{ name: 'iki_lang', value: 'ja', url: service.url }]);
    await driver.signIn(page, ada);
    expect(await page.getAttribute('html', 'lang')).toBe('ja');
    await page.check('#protect-password');
    await page.fill('#save-password', 'a');
    await page.click('#save-project');
    await page.waitForSelector('#save-result [data-code="WEAK_PASSWORD"]');
    expect(await text(page, '#save-result')).toContain('推測されやすすぎます (強度 0/4');
    await page.uncheck('#protect-password');
    const file = await driver.save(page, 'ja', { account: true });
    expect(await driver.open(page, file)).toBe('account');
    await page.waitForSelector('#account-keys table');
    expect(await englishLeft(page, [ada.name, 'Chrome on Linux', 'ja', 'Untitled', 'image/png', 'text/plain'])).toEqual({ sentences: [], labels: [] });
    await shoot(page, shots, 'project-ja-1280');
    // The account page in Japanese too.
    await page.goto(`${service.url}/account`);
    await page.waitForSelector('#session-list');
    expect(await englishLeft(page, [ada.name, 'Chrome on Linux'])).toEqual({ sentences: [], labels: [] });
    await shoot(page, shots, 'account-ja-1280');
    await page.goto(`${service.url}/project`);
    await page.waitForSelector('#account-keys table');
    await page.setViewportSize({ width: 360, height: 740 });
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await shoot(page, shots, 'project-ja-360');
    await context.close();
    expect(errors).toEqual([]);
  });
});
