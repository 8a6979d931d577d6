/**
 * Sessions and accounts in Chromium against a real service (issue 14 items 1-3): two tabs of
 * one browser share a session; signing out ends it on the service (a token taken from the page
 * stops working) and in the other tab; "sign out everywhere"; the account id is shown with a
 * copy button; a sign-up shows the verification banner on every page until verified; and a
 * forgotten password is reset through the mailed link.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newPage, screenshotDir, shoot } from './chromium.js';
import { PASSWORD, newAccount, startService, type Account, type Service } from './setup.js';

declare const navigator: { clipboard: { readText(): Promise<string> } };
declare function fetch(url: string, init: Record<string, unknown>): Promise<{ status: number; json(): Promise<Record<string, unknown>> }>;

let service: Service;
let browser: Browser;
let shots: string;
const errors: string[] = [];

async function signIn(page: Page, account: Account, password = PASSWORD): Promise<void> {
  await page.goto(`${service.url}/?next=%2Faccount`);
  await page.fill('#signin-email', account.email);
  await page.fill('#signin-password', password);
  await Promise.all([page.waitForURL(`${service.url}/account`), page.click('#signin button[type=submit]')]);
}

/** An access token as page code could obtain it (what an injected script could steal). */
async function tokenFromPage(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const answer = await fetch('/api/sessions/refresh', { method: 'POST', headers: { 'x-iki-session': '1' }, credentials: 'same-origin' });
    return String((await answer.json())['accessToken']);
  });
}

const me = (token: string) => globalThis.fetch(`${service.url}/api/me`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

beforeAll(async () => {
  service = await startService({ perLicense: 20, perUser: 120, windowSeconds: 3600 });
  browser = await launchChromium();
  shots = await screenshotDir();
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('accounts and sessions in Chromium', () => {
  let context: BrowserContext;
  let account: Account;

  it('two tabs share one session, and the account id is shown with a copy button', async () => {
    account = await newAccount(service, 'Tabby Tabs');
    const first = await newPage(browser, errors);
    context = first.context;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.url });
    await signIn(first.page, account);
    // A second tab, opened afterwards, is signed in without signing in.
    const second = await context.newPage();
    await second.goto(`${service.url}/account`);
    await second.locator('#account-id').waitFor();
    expect(await second.textContent('#account-id')).toBe(account.accountId);
    expect(await second.textContent('#session .who')).toBe(account.email);
    await second.click('#copy-account-id');
    await second.locator('.copy-status', { hasText: 'Copied.' }).first().waitFor();
    expect(await second.evaluate(() => navigator.clipboard.readText())).toBe(account.accountId);
    // Both tabs appear as one session of this browser in the list.
    await second.locator('#session-list tbody tr').first().waitFor();
    expect(await second.locator('#session-list tbody tr', { hasText: '(this browser)' }).count()).toBe(1);
    await shoot(second, shots, 'account-page');
    await second.close();
  });

  it('signing out in one tab ends the session on the service and in the other tab', async () => {
    const [tab] = context.pages();
    const other = await context.newPage();
    await other.goto(`${service.url}/account`);
    await other.locator('#account-id').waitFor();
    const stolen = await tokenFromPage(tab as Page);
    expect(await me(stolen)).toBe(200);
    await (tab as Page).click('#session button.link');
    await (tab as Page).waitForURL(`${service.url}/`);
    // The token taken before the sign-out no longer works anywhere: revoked server-side.
    expect(await me(stolen)).toBe(401);
    // The other tab was told and shows "Sign in" without a reload; a reload finds no session.
    await other.locator('#session a', { hasText: 'Sign in' }).waitFor();
    await other.reload();
    await other.locator('#gate .notice').waitFor();
    expect(await other.textContent('#gate')).toContain('Sign in to use this page');
    await context.close();
  });

  it('"sign out everywhere" asks first, then ends the sessions of other browsers too; home signed in has no forms', async () => {
    const a = await newPage(browser, errors);
    const b = await newPage(browser, errors);
    await signIn(a.page, account);
    await signIn(b.page, account);
    const other = await tokenFromPage(b.page);
    // Signed in, the home page shows where to go next and no sign-in or sign-up form.
    await b.page.goto(`${service.url}/`);
    await b.page.locator('#signed-in .notice').waitFor();
    expect(await b.page.isHidden('#forms')).toBe(true);
    await b.page.goto(`${service.url}/account`);
    await a.page.locator('#session-list tbody tr').nth(1).waitFor();
    // It asks first: cancelling changes nothing.
    await a.page.click('#sign-out-everywhere');
    expect(await a.page.textContent('dialog.confirm')).toContain('Every session of your account ends');
    await a.page.click('dialog.confirm button[value="cancel"]');
    expect(await me(other)).toBe(200);
    await a.page.click('#sign-out-everywhere');
    await Promise.all([a.page.waitForURL(/\/\?signed-out=/), a.page.click('dialog.confirm button[value="confirm"]')]);
    await a.page.locator('#signed-in .notice.success').waitFor();
    expect(await a.page.textContent('#signed-in')).toMatch(/Signed out everywhere: \d+ sessions ended/);
    expect(await me(other)).toBe(401);
    await b.page.reload();
    await b.page.locator('#gate .notice').waitFor();
    await a.context.close();
    await b.context.close();
  });

  it('a sign-up shows the verification banner on every page, with resend, until the link is used', async () => {
    const { page, context: ctx } = await newPage(browser, errors);
    const email = `bena-${Date.now()}@example.com`;
    await page.goto(`${service.url}/`);
    await page.fill('#signup-name', 'Bena Banner');
    await page.fill('#signup-email', email);
    await page.fill('#signup-password', PASSWORD);
    await page.click('#signup button[type=submit]');
    await page.locator('#verify-banner').waitFor();
    for (const path of ['/seller', '/player', '/account']) {
      await page.goto(`${service.url}${path}`);
      await page.locator('#verify-banner').waitFor();
      expect(await page.textContent('#verify-banner'), path).toContain(`Verify your e-mail address: open the link we sent to ${email}`);
    }
    await page.click('#verify-banner button');
    await page.locator('#verify-banner .notice.success').waitFor();
    await expect.poll(() => service.logs.filter((l) => l.fields['to'] === email).length).toBe(2);
    await shoot(page, shots, 'verify-banner');
    const link = new URL(String(service.logs.filter((l) => l.fields['to'] === email).at(-1)?.fields['link']));
    await page.goto(`${service.url}${link.pathname}${link.search}`);
    await page.locator('#result .notice.success').waitFor();
    expect(await page.locator('#verify-banner').count()).toBe(0);
    await page.goto(`${service.url}/seller`);
    await page.locator('#gate .notice').waitFor();
    expect(await page.locator('#verify-banner').count()).toBe(0);
    await ctx.close();
  });

  it('a forgotten password is reset by the mailed link, which signs out every session', async () => {
    const user = await newAccount(service, 'Rhea Reset');
    const signedIn = await newPage(browser, errors);
    await signIn(signedIn.page, user);
    const before = await tokenFromPage(signedIn.page);
    const { page, context: ctx } = await newPage(browser, errors);
    await page.goto(`${service.url}/`);
    await page.click('.forgot summary');
    await page.fill('#forgot-email', user.email);
    await page.click('#forgot button[type=submit]');
    await page.locator('#forgot .notice.success').waitFor();
    expect(await page.textContent('#forgot .notice')).toContain(`If ${user.email} has an account`);
    await expect.poll(() => service.logs.some((l) => l.fields['to'] === user.email && String(l.fields['link']).includes('/reset-password?'))).toBe(true);
    const link = new URL(String(service.logs.filter((l) => l.fields['to'] === user.email).at(-1)?.fields['link']));
    await page.goto(`${service.url}${link.pathname}${link.search}`);
    await page.waitForURL(`${service.url}/reset-password`);
    const fresh = 'a brand new password 42';
    await page.fill('#reset-password', fresh);
    await page.fill('#reset-password-again', `${fresh}!`);
    await page.click('#reset button[type=submit]');
    await page.locator('#reset .notice.error', { hasText: 'differ' }).waitFor();
    await page.fill('#reset-password-again', fresh);
    await page.click('#reset button[type=submit]');
    await page.locator('#reset .notice.success').waitFor();
    await shoot(page, shots, 'reset-password');
    expect(await me(before)).toBe(401);
    // The old password fails, the new one signs in; the link does not work twice.
    await page.goto(`${service.url}/`);
    await page.fill('#signin-email', user.email);
    await page.fill('#signin-password', PASSWORD);
    await page.click('#signin button[type=submit]');
    await page.locator('#signin .notice.error').waitFor();
    await signIn(page, user, fresh);
    const reused = await globalThis.fetch(`${service.url}/api/accounts/password-reset/complete`, { method: 'POST',
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: link.searchParams.get('token'), password: 'x'.repeat(12) }) });
    expect(reused.status).toBe(400);
    await ctx.close();
    await signedIn.context.close();
  });

  it('logged no script errors or CSP violations', () => {
    expect(errors).toEqual([]);
  });
});
