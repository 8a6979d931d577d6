/**
 * Driving the project page in Chromium, shared by its browser tests: a fresh profile (own
 * IndexedDB, so its own keys) that saves by download, signing in and out, saving the
 * new-project form, and opening a file until the page answers (a verdict, a refusal or the
 * password form).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { newPage } from './chromium.js';
import { PASSWORD, type Account, type Service } from './setup.js';

declare const document: { querySelectorAll(selector: string): ArrayLike<unknown> };
declare const window: Record<string, unknown>;

/** What one save put on disk. */
export interface SaveOptions { password?: string; account?: boolean; notes?: string }

/** The project page's journeys against one service and browser. */
export class ProjectDriver {
  private constructor(readonly service: Service, readonly browser: Browser, readonly errors: string[], readonly heroPng: string) {}

  /** Writes the 2 x 2 PNG the saves attach (a real one, so the page draws a preview from its pixels). */
  static async create(service: Service, browser: Browser, errors: string[]): Promise<ProjectDriver> {
    const heroPng = join(service.dir, 'hero.png');
    const { encodePng } = await import('../../../tests/fixtures/png.mjs');
    await writeFile(heroPng, encodePng(2, 2, new Uint8Array([255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 9, 9, 9, 255])));
    return new ProjectDriver(service, browser, errors, heroPng);
  }

  /** A page in a fresh context (its own IndexedDB, so its own keys) that saves by download. */
  async freshPage(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const made = await newPage(this.browser, this.errors, viewport);
    await made.context.addInitScript(() => { delete (window as Record<string, unknown>).showSaveFilePicker; });
    await made.page.goto(`${this.service.url}/project`);
    await made.page.waitForSelector('#key-fingerprint');
    return made;
  }

  async signIn(page: Page, account: Account): Promise<void> {
    await page.goto(`${this.service.url}/?next=%2Fproject`);
    await page.fill('#signin-email', account.email);
    await page.fill('#signin-password', PASSWORD);
    await Promise.all([page.waitForURL(`${this.service.url}/project`), page.click('#signin button[type=submit]')]);
    await page.waitForSelector('#key-fingerprint');
  }

  /** Signs out with the header's button and comes back to the project page. */
  async signOut(page: Page): Promise<void> {
    await Promise.all([page.waitForURL(`${this.service.url}/`), page.click('#session button')]);
    await page.goto(`${this.service.url}/project`);
    await page.waitForSelector('#key-fingerprint');
  }

  /** Fills the new-project form and saves; the downloaded file's path. */
  async save(page: Page, name: string, options: SaveOptions = {}): Promise<string> {
    await page.fill('#project-name', name);
    await page.fill('#project-notes', options.notes ?? 'notes');
    await page.setInputFiles('#asset-files', [{ name: 'hero.png', mimeType: 'image/png', buffer: await readFile(this.heroPng) },
      { name: 'readme.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') }]);
    if (options.password !== undefined) {
      await page.check('#protect-password');
      await page.fill('#save-password', options.password);
    }
    if (options.account === true) await page.check('#protect-account');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save-project')]);
    await page.waitForSelector('#save-result .notice.success');
    // The file was hashed for its signature by the digest worker, not by the project worker.
    const digestWorker = await page.getAttribute('#save-result .notice', 'data-digest-worker');
    if (digestWorker !== 'true') throw new Error(`the save's digest worker was not used (data-digest-worker=${digestWorker})`);
    const path = join(this.service.dir, `${name}-${Date.now()}.iki`);
    await download.saveAs(path);
    await page.reload();
    await page.waitForSelector('#key-fingerprint');
    return path;
  }

  /** Opens `path` by the picker; resolves once the page shows a verdict, a refusal or a password form. */
  async open(page: Page, path: string): Promise<string> {
    // The previous file's answer stays on the page until the new one replaces it: mark it, so the
    // wait below cannot read it (the page renders every answer as new elements).
    await page.evaluate(() => {
      const found = document.querySelectorAll('#opened .verdict, #open-status .notice.error, #password-form') as
        ArrayLike<{ setAttribute(name: string, value: string): void }>;
      for (let i = 0; i < found.length; i += 1) found[i]?.setAttribute('data-stale', '');
    });
    await page.setInputFiles('#open-file', path);
    const shown = await page.waitForSelector(
      '#opened .verdict:not([data-stale]), #open-status .notice.error:not([data-stale]), #password-form:not([data-stale])');
    return (await shown.getAttribute('data-verdict')) ?? (await shown.getAttribute('data-code')) ?? 'password';
  }
}

/** The text of `selector` ('' when it has none). */
export const text = (page: Page, selector: string): Promise<string> => page.textContent(selector).then((t) => t ?? '');
