/**
 * Debian's Chromium driven by playwright-core (never a downloaded browser), as in
 * ts/test/browser: a headless launch, pages that record every script error, console error
 * and CSP violation, and screenshots into a temp directory for a person to look at. Every page
 * of every context the browser makes is measured at 360 px at each state its test waits for
 * (`narrow.ts`).
 */
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { watchBrowser } from './narrow.js';

const CHROMIUM = '/usr/bin/chromium';

/** Launches headless Chromium; throws a clear message when it is not installed. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run make setup`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  return watchBrowser(browser);
}

/**
 * A page in its own context (own sessionStorage) that collects errors into `errors`;
 * `deviceScaleFactor` 2 is a screen of two device pixels per CSS pixel.
 */
export async function newPage(browser: Browser, errors: string[], viewport = { width: 1280, height: 900 }, deviceScaleFactor = 1):
Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, deviceScaleFactor });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // Failed API answers the page handles itself (4xx) are logged by Chromium as resource
    // errors; they are expected in the error-state steps and checked through the UI instead.
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) {
      errors.push(`console: ${m.text()}`);
    }
  });
  // Which request a server error answered (the console line above does not say).
  page.on('response', (r) => {
    if (r.status() >= 500) errors.push(`response: ${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  return { context, page };
}

/** A fresh directory for screenshots (printed so a person can open them). */
export async function screenshotDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'iki-web-shots-'));
  process.stdout.write(`screenshots: ${dir}\n`);
  return dir;
}

/** A full-page screenshot named `<name>.png` in `dir`. */
export async function shoot(page: Page, dir: string, name: string): Promise<void> {
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}
