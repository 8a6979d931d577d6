/**
 * Issue 27 item 3: a screenshot of the player's texture preview names its license. The buyer
 * opens a copy on `/player`, whose texture preview shows each texture over a checkerboard at
 * its own pixel size (smaller, smoothly, only when its cell is narrower; never enlarged); a
 * screenshot of that element alone (what a buyer would capture) is uploaded to the seller's
 * identify, which must name the buyer's license: read as it is when the screenshot holds the
 * copy's pixels unchanged, else through a registration on the master's texture drawn over a
 * background (docs/watermark.md sections 11.6 and 11.7).
 */
import { writeFile } from 'node:fs/promises';
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

/**
 * Screenshots the preview of `suffix` in the player for `license` on a screen of `density`
 * device pixels per CSS pixel, and identifies it as the seller.
 */
async function previewIdentified(license: string, suffix: string, density = 1): Promise<void> {
  const { service, buyer, licenses } = copy;
  const { context: playerContext, page: player } = await newPage(browser, errors, undefined, density);
  await signInToPlayer(player, service, buyer);
  await openCopy(player, service, license);
  const preview = player.locator(`#textures canvas[data-path$="${suffix}"]`);
  await preview.scrollIntoViewIfNeeded();
  const box = (await preview.boundingBox())!;
  const intrinsic = await preview.evaluate((c) => (c as unknown as { width: number }).width);
  // The preview as the page shows it (its outline takes no room): at most the texture's own
  // size, and here, where the cell is wide enough, exactly that.
  expect(box.width).toBe(intrinsic);
  const shot = await player.screenshot({ clip: box });
  expect(shot.subarray(1, 4).toString()).toBe('PNG');
  expect(shot.readUInt32BE(16)).toBe(intrinsic * density);
  const keep = process.env['IKI_PREVIEW_SHOT'] === undefined ? undefined : `${process.env['IKI_PREVIEW_SHOT']}-${density}x-${suffix}`;
  if (keep !== undefined) await writeFile(keep, shot);
  // Each context keeps its connections to the service until it is closed (64 per client address).
  await playerContext.close();

  const { context: sellerContext, page: seller } = await newPage(browser, errors);
  await signInAsSeller(seller);
  await seller.click('details.master > summary');
  const panel = seller.locator('details.master[open]');
  await panel.locator('input[name=image]').setInputFiles({ name: 'preview.png', mimeType: 'image/png', buffer: shot });
  await panel.locator('form.identify button[type=submit]').click();
  await panel.locator('.identify-result .notice.pending').waitFor({ state: 'detached', timeout: 60_000 });
  const answer = panel.locator('.identify-result .notice:not(.pending)');
  const said = await answer.textContent();
  if (keep !== undefined) await writeFile(`${keep}.txt`, `${said}\n`);
  expect(said, suffix).toContain('Found.');
  expect(said, suffix).toContain(license);
  // Named, and none of the buyer's other licenses of the same master.
  const named = await answer.locator('table.candidates tr.named td code').allTextContents();
  for (const other of licenses.filter((l) => l !== license)) expect(named).not.toContain(other);
  await sellerContext.close();
  expect(errors).toEqual([]);
}

// Each texture has transparency, so the screenshot shows it over the player's checkerboard:
// the 256 x 256 drawn-art sprite (mostly transparent, flat colour, half-transparent parts) and
// the 200 x 120 synthetic disc (a band of partial alpha beside it). IKI_PREVIEW_SHOT=/tmp/shot
// writes the screenshots and the answers.
describe('a screenshot of the player\'s texture preview', () => {
  it('of the synthetic texture (200 x 120, with a band of partial alpha) names the license shown', async () => {
    await previewIdentified(copy.licenses[1]!, 'texture_01.png');
  }, 60_000);

  it('of the drawn-art sprite over the checkerboard names the license shown', async () => {
    await previewIdentified(copy.licenses[2]!, 'texture_00.png');
  }, 60_000);

  // A screen of two device pixels per CSS pixel enlarges the preview twice, smoothly.
  it('of the synthetic texture on a screen of twice the density names the license shown', async () => {
    await previewIdentified(copy.licenses[0]!, 'texture_01.png', 2);
  }, 60_000);

  it('of the drawn-art sprite on a screen of twice the density names the license shown', async () => {
    await previewIdentified(copy.licenses[1]!, 'texture_00.png', 2);
  }, 60_000);
});
