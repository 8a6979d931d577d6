/**
 * Issue 27 item 3: a screenshot of the player's texture preview names its license. The buyer
 * opens a copy on `/player`, whose texture preview shows the texture scaled to its grid cell
 * over a checkerboard (transparent pixels show the checkerboard); a screenshot of that element
 * alone (what a buyer would capture) is uploaded to the seller's identify, which must name
 * the buyer's license: registered on the master's texture with its coverage weighting the
 * match, so the checkerboard does not count (docs/watermark.md sections 11.2 and 11.3).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newPage } from './chromium.js';
import { licensedCopy, openCopy, signInToPlayer, type LicensedCopy } from './player-copy.js';
import { PASSWORD } from './setup.js';

let copy: LicensedCopy;
let browser: Browser;
const errors: string[] = [];

beforeAll(async () => {
  copy = await licensedCopy(3);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await copy?.service.close();
});

async function signInAsSeller(page: Page): Promise<void> {
  const { service, seller } = copy;
  await page.goto(`${service.url}/?next=%2Fseller`);
  await page.fill('#signin-email', seller.email);
  await page.fill('#signin-password', PASSWORD);
  await Promise.all([page.waitForURL(`${service.url}/seller`), page.click('#signin button[type=submit]')]);
}

describe('a screenshot of the player\'s texture preview', () => {
  it('names the license of the copy shown, on the seller\'s identify', async () => {
    const { service, buyer, licenses } = copy;
    const license = licenses[1]!;
    const { page: player } = await newPage(browser, errors);
    await signInToPlayer(player, service, buyer);
    await openCopy(player, service, license);
    // The preview of the drawn-art texture, as the page shows it (scaled, over the checkerboard).
    const preview = player.locator('#textures canvas[data-path$="texture_00.png"]');
    await preview.scrollIntoViewIfNeeded();
    const box = (await preview.boundingBox())!;
    const intrinsic = await preview.evaluate((c) => ({ width: (c as unknown as { width: number }).width }));
    const shot = await player.screenshot({ clip: { x: box.x + 1, y: box.y + 1, width: box.width - 2, height: box.height - 2 } });
    expect(shot.subarray(1, 4).toString()).toBe('PNG');
    if (process.env['IKI_PREVIEW_SHOT']) {
      const { writeFile } = await import('node:fs/promises');
      await writeFile(process.env['IKI_PREVIEW_SHOT'], shot);
      process.stdout.write(`preview ${JSON.stringify(box)} intrinsic ${intrinsic.width}\n`);
    }
    // The preview is not the texture's own pixels: it is resampled to the cell.
    expect(Math.round(box.width - 2)).not.toBe(intrinsic.width);

    const { page: seller } = await newPage(browser, errors);
    await signInAsSeller(seller);
    await seller.click('details.master > summary');
    const panel = seller.locator('details.master[open]');
    await panel.locator('input[name=image]').setInputFiles({ name: 'preview.png', mimeType: 'image/png', buffer: shot });
    await panel.locator('form.identify button[type=submit]').click();
    await panel.locator('.identify-result .notice.pending').waitFor({ state: 'detached', timeout: 60_000 });
    const answer = panel.locator('.identify-result .notice:not(.pending)');
    const said = await answer.textContent();
    expect(said).toContain('Found.');
    expect(said).toContain(license);
    // Named, and none of the buyer's other licenses of the same master.
    for (const other of licenses.filter((l) => l !== license)) {
      expect(await answer.locator('table.candidates tr.named td code').allTextContents()).not.toContain(other);
    }
    expect(errors).toEqual([]);
  });
});
