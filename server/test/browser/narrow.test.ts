/**
 * The 360 px check every page test runs at each state it reaches (narrow.ts): a state that
 * scrolls sideways fails the wait that reached it, naming the widest element; content inside a
 * scroll container does not count; the test's own viewport comes back after each measurement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, newPage } from './chromium.js';
import { measureNarrow } from './narrow.js';

let browser: Browser;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  page = (await newPage(browser, errors, { width: 1280, height: 800 })).page;
});

afterAll(async () => {
  await browser?.close();
});

const STYLE = '<meta name="viewport" content="width=device-width"><style>body{margin:0}</style>';

describe('360 px at every state', () => {
  it('a wait that reaches a state wider than 360 px fails, naming the widest element; the viewport is restored', async () => {
    await page.setContent(`${STYLE}<main><p id="ok">fine</p></main>`);
    await page.locator('#ok').waitFor();
    await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const code = doc.createElement('code');
      code.id = 'hash';
      code.textContent = 'sha256:' + 'f'.repeat(64);
      doc.querySelector('main').append(code);
    });
    await expect(page.locator('#hash').waitFor()).rejects.toThrow(/at 360 px, after waitFor\(.*#hash.*the page is \d+ px wide.*widest: main > code#hash \(right edge \d+ px, text "sha256:fff/);
    await expect(page.waitForSelector('#hash')).rejects.toThrow(/after waitForSelector\(#hash\)/);
    expect(page.viewportSize()).toEqual({ width: 1280, height: 800 });
  });

  it('text running out of a narrower box names the box it runs out of', async () => {
    await page.setContent(`${STYLE}<main><div class="card"><p id="long" style="width:200px">acct_${'0'.repeat(60)}</p></div></main>`);
    await expect(page.locator('#long').waitFor()).rejects.toThrow(/widest: main > div\.card > p#long \(right edge \d+ px, text "acct_000/);
  });

  it('a wide table inside a scroll container and a wrapped hash pass', async () => {
    await page.setContent(`${STYLE}<main><div style="overflow-x:auto"><table><tr><td style="white-space:nowrap">${'x'.repeat(200)}</td></tr></table></div>`
      + `<code id="hash" style="overflow-wrap:anywhere">sha256:${'f'.repeat(64)}</code></main>`);
    await page.locator('#hash').waitFor();
    await measureNarrow(page, 'explicit');
    expect(page.viewportSize()).toEqual({ width: 1280, height: 800 });
    expect(errors).toEqual([]);
  });
});
