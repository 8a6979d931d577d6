/**
 * Issue 27 item 3: a screenshot of the player's texture preview names its license. The buyer
 * opens a copy on `/player`, whose texture preview shows each texture scaled to its grid cell
 * (image-rendering: pixelated) over a checkerboard; a screenshot of that element alone (what a
 * buyer would capture) is uploaded to the seller's identify, which must name the buyer's
 * license through a registration on the master's texture (docs/watermark.md section 11.6).
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

/** Screenshots the preview of `suffix` in the player for `license`, identifies it as the seller. */
async function previewIdentified(license: string, suffix: string): Promise<void> {
  const { service, buyer, licenses } = copy;
  const { page: player } = await newPage(browser, errors);
  await signInToPlayer(player, service, buyer);
  await openCopy(player, service, license);
  const preview = player.locator(`#textures canvas[data-path$="${suffix}"]`);
  await preview.scrollIntoViewIfNeeded();
  const box = (await preview.boundingBox())!;
  const intrinsic = await preview.evaluate((c) => (c as unknown as { width: number }).width);
  // Inside the 1-pixel border: the preview as the page shows it, resampled to its cell.
  const shot = await player.screenshot({ clip: { x: box.x + 1, y: box.y + 1, width: box.width - 2, height: box.height - 2 } });
  expect(shot.subarray(1, 4).toString()).toBe('PNG');
  expect(Math.round(box.width - 2)).not.toBe(intrinsic);
  if (process.env['IKI_PREVIEW_SHOT']) {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${process.env['IKI_PREVIEW_SHOT']}-${suffix}`, shot);
  }
  await player.close();

  const { page: seller } = await newPage(browser, errors);
  await signInAsSeller(seller);
  await seller.click('details.master > summary');
  const panel = seller.locator('details.master[open]');
  await panel.locator('input[name=image]').setInputFiles({ name: 'preview.png', mimeType: 'image/png', buffer: shot });
  await panel.locator('form.identify button[type=submit]').click();
  await panel.locator('.identify-result .notice.pending').waitFor({ state: 'detached', timeout: 60_000 });
  const answer = panel.locator('.identify-result .notice:not(.pending)');
  const said = await answer.textContent();
  expect(said, suffix).toContain('Found.');
  expect(said, suffix).toContain(license);
  // Named, and none of the buyer's other licenses of the same master.
  const named = await answer.locator('table.candidates tr.named td code').allTextContents();
  for (const other of licenses.filter((l) => l !== license)) expect(named).not.toContain(other);
  await seller.close();
  expect(errors).toEqual([]);
}

// NOT YET PASSING (issue 27 item 3, docs/watermark.md section 11.7): both previews are answered
// "no texture matches". Each texture has transparency, so the screenshot shows it over the
// player's checkerboard, at 254/256 (the sprite) or 254/200 (the synthetic texture) with
// nearest-neighbour resampling; the search over a background registers the crate's tests
// (a whole atlas at 25 % over a checkerboard) but not these small, mostly transparent textures.
// The cases are kept, skipped, as the ones to make pass; run them with `it` to see the answer
// (IKI_PREVIEW_SHOT=/tmp/shot writes the screenshots).
describe('a screenshot of the player\'s texture preview', () => {
  it.skip('of the synthetic texture (200 x 120, enlarged to its cell) names the license shown', async () => {
    await previewIdentified(copy.licenses[1]!, 'texture_01.png');
  });

  it.skip('of the drawn-art sprite over the checkerboard names the license shown', async () => {
    await previewIdentified(copy.licenses[2]!, 'texture_00.png');
  });
});
