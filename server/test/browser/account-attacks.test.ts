/**
 * Issue 22 items 3 and 7 attacked in Chromium against a real service:
 * - a sign-up link opened in another browser context than the one that signed up (the victim's
 *   browser, or a mail scanner that runs the page) does not activate the password typed at
 *   sign-up; the page asks the person at the link to choose one, and that one is the account's;
 * - a cross-site page's form that posts to the sign-out route does not clear the session
 *   cookies of the browser (the page would look signed out while the session lives on).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newPage } from './chromium.js';
import { PASSWORD, newAccount, startService, type Service } from './setup.js';

const ATTACKER_PASSWORD = 'attacker password 999';
const VICTIM_PASSWORD = 'victim chose this one';

let service: Service;
let browser: Browser;
const errors: string[] = [];

beforeAll(async () => {
  service = await startService({ perLicense: 20, perUser: 120, windowSeconds: 3600 });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

const signIn = (email: string, password: string) => fetch(`${service.url}/api/sessions`, { method: 'POST',
  headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password, refreshTokenIn: 'body' }) })
  .then(async (r) => ({ status: r.status, body: await r.json() as { error?: { code: string } } }));

/** The newest link the log mailer wrote for `email`. */
const linkTo = (email: string) => String(service.logs.filter((l) => l.fields['to'] === email).at(-1)?.fields['link']);

/** Signs `email` up with `password` through the home page of a fresh context; returns that context's page. */
async function signUpInBrowser(email: string, password: string) {
  const { context, page } = await newPage(browser, errors);
  await page.goto(`${service.url}/`);
  await page.fill('#signup-name', 'Someone');
  await page.fill('#signup-email', email);
  await page.fill('#signup-password', password);
  const answered = page.waitForResponse((r) => r.url().endsWith('/api/accounts') && r.request().method() === 'POST');
  await page.click('#signup button[type=submit]');
  expect((await answered).status()).toBe(202);
  await expect.poll(() => service.logs.some((l) => l.fields['to'] === email)).toBe(true);
  return { context, page };
}

describe('a sign-up link in another browser (issue 22 item 3)', () => {
  it('does not activate the password typed in the browser that signed up; the person at the link chooses it', async () => {
    const email = `victim-${Date.now()}@example.com`;
    const attacker = await signUpInBrowser(email, ATTACKER_PASSWORD);
    // The victim opens the mailed link in their own browser: no account is made, a password form is shown.
    const victim = await newPage(browser, errors);
    const verifying = victim.page.waitForResponse((r) => r.url().endsWith('/api/accounts/verify'));
    await victim.page.goto(linkTo(email));
    expect((await verifying).status()).toBe(403);
    await victim.page.locator('#choose').waitFor({ state: 'visible' });
    expect(await signIn(email, ATTACKER_PASSWORD).then((a) => a.body.error?.code)).toBe('EMAIL_NOT_VERIFIED');
    // The victim chooses the password: the account is created with it, and the attacker's never works.
    await victim.page.fill('#choose-password', VICTIM_PASSWORD);
    await victim.page.fill('#choose-again', VICTIM_PASSWORD);
    await victim.page.click('#choose-form button[type=submit]');
    await victim.page.locator('#result .notice.success').waitFor();
    expect(await victim.page.locator('#result').innerText()).toContain(`${email} is verified`);
    expect((await signIn(email, VICTIM_PASSWORD)).status).toBe(201);
    expect(await signIn(email, ATTACKER_PASSWORD).then((a) => a.body.error?.code)).toBe('INVALID_CREDENTIALS');
    await Promise.all([victim.context.close(), attacker.context.close()]);
  });

  it('in the browser that signed up, the link completes with the password typed there', async () => {
    const email = `same-${Date.now()}@example.com`;
    const { context, page } = await signUpInBrowser(email, PASSWORD);
    await page.goto(linkTo(email));
    await page.locator('#result .notice.success').waitFor();
    expect(await page.locator('#choose').isHidden()).toBe(true);
    expect((await signIn(email, PASSWORD)).status).toBe(201);
    await context.close();
    expect(errors).toEqual([]);
  });
});

describe('a cross-site sign-out form (issue 22 item 7)', () => {
  let attackerSite: Server;
  let attackerUrl: string;

  beforeAll(async () => {
    // Another site: `localhost` is not the same site as the service's `127.0.0.1`.
    attackerSite = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><form id="f" method="POST" action="${service.url}/api/sessions/sign-out"></form>`
        + '<script>document.getElementById("f").submit()</script>');
    });
    attackerSite.listen(0, '127.0.0.1');
    await once(attackerSite, 'listening');
    attackerUrl = `http://localhost:${(attackerSite.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    attackerSite.closeAllConnections();
    await new Promise((resolve) => attackerSite.close(resolve));
  });

  it('leaves the session cookies and the signed-in page alone', async () => {
    const account = await newAccount(service, 'Forms Target');
    const { context, page } = await newPage(browser, errors);
    await page.goto(`${service.url}/?next=%2Faccount`);
    await page.fill('#signin-email', account.email);
    await page.fill('#signin-password', PASSWORD);
    await Promise.all([page.waitForURL(`${service.url}/account`), page.click('#signin button[type=submit]')]);
    const before = await context.cookies();
    expect(before.find((c) => c.name === 'iki_session')?.value).toBe('1');
    // The victim visits the attacker's page, which posts the form across sites.
    const posted = page.waitForResponse((r) => r.url() === `${service.url}/api/sessions/sign-out`);
    await page.goto(attackerUrl);
    // Refused twice over: the cookie routes answer only the service's own origin (routes/cors.ts),
    // and sign-out clears nothing without X-Iki-Session, which a form cannot send (sessions.test.ts
    // checks that rule for a request without Origin).
    expect((await posted).status()).toBe(403);
    const after = await context.cookies();
    expect(after.find((c) => c.name === 'iki_session')?.value).toBe('1');
    expect(after.find((c) => c.name === 'iki_refresh')?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The pages still have the session.
    await page.goto(`${service.url}/account`);
    await page.locator('#account-id').waitFor();
    expect(await page.locator('#account-id').innerText()).toContain(account.accountId);
    await context.close();
  });
});
