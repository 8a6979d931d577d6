/**
 * A real runtime's loader against the package URLs (issue 25 item 2): PixiJS 8 from npm,
 * bundled as it is, runs on the buyer's `/player` page after a copy was opened there, loads a
 * texture with `Assets.load(url)` and draws it with a `Sprite`; the pixels it drew must equal
 * the decoded copy's (the player's own canvas of the same texture), and no object URL is made.
 *
 * PixiJS's only setting changed is `loadTextures.config.preferWorkers = false`: by default it
 * decodes images in a worker it makes from a `blob:` URL, which the player's CSP forbids and
 * which is not the page that opened the copy (the package worker answers only that page).
 * The page is opened with `bypassCSP`, because the test injects PixiJS as an inline script;
 * the pages' CSP itself is tested in web.test.ts.
 */
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_STORAGE, copyPixels, countObjectUrls, expectOpaque, licensedCopy, openCopy, signInToPlayer, storage, type LicensedCopy } from './player-copy.js';

let copy: LicensedCopy;
let browser: Browser;
let pixi: string;

beforeAll(async () => {
  copy = await licensedCopy(1);
  // PixiJS as an app would bundle it (an IIFE exposing the module as `PIXI`).
  const bundled = await build({ stdin: { contents: "import * as PIXI from 'pixi.js'; globalThis.PIXI = PIXI;", resolveDir: process.cwd() },
    bundle: true, format: 'iife', write: false, platform: 'browser', target: 'chrome111', logLevel: 'silent' });
  pixi = bundled.outputFiles[0]!.text;
  // WebGL in software (SwiftShader), so PixiJS's default renderer runs headless.
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--no-first-run'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await copy?.service.close();
});

describe('PixiJS 8 loads the opened copy by URL', () => {
  it('Assets.load(url) + Sprite draws the texture with the decoded copy\'s pixels', async () => {
    const { service, buyer, master, licenses } = copy;
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    await countObjectUrls(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await signInToPlayer(page, service, buyer);
    const modelUrl = await openCopy(page, service, licenses[0]!);
    const texture = master.textures[0]!;
    await page.addScriptTag({ content: pixi });
    const drawn = await page.evaluate(async ({ url, path, width, height }) => {
      const { PIXI } = globalThis as any;
      PIXI.loadTextures.config.preferWorkers = false;
      const app = new PIXI.Application();
      await app.init({ width, height, preference: 'webgl', backgroundAlpha: 0, antialias: false, autoDensity: false, resolution: 1 });
      const loaded = await PIXI.Assets.load(new URL(path, url).href);
      const sprite = new PIXI.Sprite(loaded);
      app.stage.addChild(sprite);
      app.render();
      const { pixels } = app.renderer.extract.pixels({ target: app.stage, frame: new PIXI.Rectangle(0, 0, width, height) });
      const out = { renderer: app.renderer.name, width: loaded.width, height: loaded.height, rgba: Array.from(pixels as Uint8ClampedArray) };
      app.destroy(true, { children: true, texture: true, textureSource: true });
      return out;
    }, { url: modelUrl, path: texture.path, width: texture.width, height: texture.height });
    expect(errors).toEqual([]);
    expect([drawn.renderer, drawn.width, drawn.height]).toEqual(['webgl', texture.width, texture.height]);
    // The decoded copy (the player's canvas, drawn from the copy's pixels in memory): opaque
    // pixels exactly equal; both within the watermark's ±2 of the master.
    const decoded = await copyPixels(page, texture.path);
    expect(decoded.rgba.length).toBe(drawn.rgba.length);
    let opaque = 0;
    for (let p = 0; p < decoded.rgba.length; p += 4) {
      if (decoded.rgba[p + 3] !== 255) continue;
      opaque += 1;
      const a = drawn.rgba.slice(p, p + 4).join();
      const b = decoded.rgba.slice(p, p + 4).join();
      if (a !== b) throw new Error(`pixel ${p / 4}: PixiJS drew ${a}, the copy holds ${b}`);
    }
    expect(opaque).toBeGreaterThan(1000);
    expectOpaque(master, drawn.rgba, texture.path);
    expect(await storage(page)).toEqual(EMPTY_STORAGE);
    await context.close();
  }, 60_000);
});
