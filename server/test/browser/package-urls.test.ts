/**
 * Package URLs in Chromium against a real service (issue 25 item 1): the buyer opens a license
 * on `/player`, and its files answer at `/package/<license>/<open-id>/…` through the package
 * service worker, which asks the page for each request. Unmodified loaders get the right
 * bytes and types: `fetch` (GET and HEAD), `XMLHttpRequest`, `new Image()`, `<img>`,
 * `createImageBitmap(await fetch())`, and every `FileReferences` path of model3.json resolved
 * against its URL as a Cubism loader resolves it; textures come as PNGs made in memory. Then
 * the faults: another tab, another browser profile and a page that did not open the copy get
 * nothing; the URLs fail after close, after the page went away, after sign-out in another tab
 * and after the seller revoked the license. Throughout, no object URL is made and Cache
 * Storage, IndexedDB, OPFS, local and session storage stay empty, but for the one documented
 * local storage item, the player's device seed (issue 29; ts/src/browser/device-id.ts).
 *
 * A real runtime's loader (issue 25 item 2): PixiJS 8 from npm, bundled as it is, runs on the
 * buyer's `/player` page after a copy was opened there, loads a texture with
 * `Assets.load(url)` and draws it with a `Sprite`; the pixels it drew must equal the decoded
 * copy's (the player's own canvas of the same texture). Its only setting changed is
 * `loadTextures.config.preferWorkers = false`: by default it decodes images in a worker it
 * makes from a `blob:` URL, which the player's CSP forbids and which is not the page that
 * opened the copy (the package worker answers only that page). That page is opened with
 * `bypassCSP`, because the test injects PixiJS as an inline script; the pages' CSP itself is
 * tested in web.test.ts.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePng } from '../../../tests/fixtures/png.mjs';
import { launchChromium, newPage } from './chromium.js';
import {
  EMPTY_STORAGE as EMPTY, api, copyPixels, countObjectUrls, expectOpaque, licensedCopy, openCopy as open, signInToPlayer, statusFrom,
  storage,
} from './player-copy.js';
import type { Account, BuiltMaster, Service } from './setup.js';

let service: Service;
let browser: Browser;
let seller: Account;
let buyer: Account;
let master: BuiltMaster;
let licenses: string[];
/** Chromium with software WebGL, for PixiJS (closed after all). */
let webgl: Browser | undefined;
const errors: string[] = [];
const signIn = (page: Page, account: Account) => signInToPlayer(page, service, account);
const openCopy = (page: Page, licenseId: string) => open(page, service, licenseId);

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The texture pixels equal the master's: alpha exactly, colour within the watermark's ±2. */
function expectTexture(rgba: Uint8Array, path: string): void {
  const source = master.textures.find((t) => t.path === path)!.rgba;
  expect(rgba.length).toBe(source.length);
  let maxDelta = 0;
  for (let p = 0; p < source.length; p += 4) {
    if (rgba[p + 3] !== source[p + 3]) throw new Error(`${path}: alpha differs at pixel ${p / 4}`);
    if (source[p + 3] === 255) for (let c = 0; c < 3; c++) maxDelta = Math.max(maxDelta, Math.abs(rgba[p + c]! - source[p + c]!));
  }
  expect(maxDelta).toBeLessThanOrEqual(2);
}

beforeAll(async () => {
  ({ service, seller, buyer, master, licenses } = await licensedCopy(3));
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await webgl?.close();
  await browser?.close();
  await service?.close();
});

describe('package URLs answered from the opening page\'s memory', () => {
  let context: BrowserContext;
  let page: Page;
  let modelUrl: string;

  it('unmodified loaders get every file by URL, with the right bytes and types; nothing is stored', async () => {
    ({ context, page } = await newPage(browser, errors));
    await countObjectUrls(context);
    await signIn(page, buyer);
    modelUrl = await openCopy(page, licenses[0]!);
    const model3 = master.model3 as { FileReferences: Record<string, unknown> };
    // What a Cubism loader asks for: every FileReferences path, relative to the model's URL.
    const refs = master.paths.filter((p) => p !== master.model3Path);
    const got = await page.evaluate(async ({ url, paths }) => {
      const out: Record<string, { status: number; type: string | null; cache: string | null; bytes: number[] }> = {};
      const json = await fetch(url);
      out['model3'] = { status: json.status, type: json.headers.get('content-type'), cache: json.headers.get('cache-control'),
        bytes: Array.from(new Uint8Array(await json.arrayBuffer())) };
      for (const path of paths) {
        const r = await fetch(new URL(path, url));
        out[path] = { status: r.status, type: r.headers.get('content-type'), cache: r.headers.get('cache-control'),
          bytes: Array.from(new Uint8Array(await r.arrayBuffer())) };
      }
      return out;
    }, { url: modelUrl, paths: refs });
    expect(JSON.parse(Buffer.from(got['model3']!.bytes).toString('utf8'))).toEqual(master.model3);
    expect(got['model3']).toMatchObject({ status: 200, type: 'application/json', cache: 'no-store' });
    for (const path of refs) {
      const answer = got[path]!;
      expect(answer.status, path).toBe(200);
      expect(answer.cache, path).toBe('no-store');
      const bytes = Uint8Array.from(answer.bytes);
      if (path.endsWith('.png')) {
        expect(answer.type, path).toBe('image/png');
        expectTexture(decodePng(bytes).rgba, path);
      } else {
        expect(answer.type, path).toBe(path.endsWith('.json') ? 'application/json' : path.endsWith('.wav') ? 'audio/wav' : 'application/octet-stream');
        expect(sha256(bytes), path).toBe(sha256(await readFile(join(service.dir, 'model', path))));
      }
    }
    // Every FileReferences entry of the model is among them (the contract a Cubism loader relies on).
    const referenced = JSON.stringify(model3.FileReferences).match(/"[^"]+\.(?:moc3|png|json|wav)"/g)!.map((s) => JSON.parse(s) as string);
    expect(referenced.length).toBeGreaterThanOrEqual(10);
    for (const ref of referenced) expect(refs).toContain(ref);

    const texture = master.textures[0]!.path;
    const loaders = await page.evaluate(async ({ url, texture }) => {
      // Browser globals (the server's tsconfig has no DOM lib).
      const g = globalThis as any;
      const textureUrl = new URL(texture, url).href;
      const pixels = (source: any): number[] => {
        const canvas = g.document.createElement('canvas');
        canvas.width = source.width;
        canvas.height = source.height;
        const c2d = canvas.getContext('2d');
        c2d.drawImage(source, 0, 0);
        return Array.from(c2d.getImageData(0, 0, source.width, source.height).data);
      };
      const xhr = await new Promise<{ status: number; type: string | null; length: number }>((resolve) => {
        const request = new g.XMLHttpRequest();
        request.open('GET', textureUrl);
        request.responseType = 'arraybuffer';
        request.onload = () => resolve({ status: request.status, type: request.getResponseHeader('content-type'), length: request.response.byteLength });
        request.send();
      });
      const image = new g.Image();
      image.src = textureUrl;
      await image.decode();
      const tag = g.document.createElement('img');
      tag.src = textureUrl;
      g.document.body.append(tag);
      await tag.decode();
      const bitmap = await g.createImageBitmap(await (await fetch(textureUrl)).blob(), { premultiplyAlpha: 'none' });
      const head = await fetch(textureUrl, { method: 'HEAD' });
      const post = await fetch(textureUrl, { method: 'POST', body: 'x' });
      tag.remove();
      return {
        xhr, image: pixels(image), tag: pixels(tag), bitmap: pixels(bitmap),
        head: { status: head.status, type: head.headers.get('content-type'), length: head.headers.get('content-length'), body: (await head.arrayBuffer()).byteLength },
        post: post.status,
        missing: (await fetch(new URL('no-such-file.png', url))).status,
        outside: (await fetch(new URL('../other/x.json', url))).status,
      };
    }, { url: modelUrl, texture });
    expect(loaders.xhr).toMatchObject({ status: 200, type: 'image/png' });
    expect(loaders.head).toMatchObject({ status: 200, type: 'image/png', length: String(loaders.xhr.length), body: 0 });
    expect([loaders.post, loaders.missing, loaders.outside]).toEqual([405, 404, 404]);
    // Drawn through a canvas, opaque pixels are exact (others are premultiplied by the canvas).
    for (const drawn of [loaders.image, loaders.tag, loaders.bitmap]) expectOpaque(master, drawn, texture);
    expect(await storage(page)).toEqual(EMPTY);
    // Local storage holds exactly one documented item: the player's device seed (issue 29).
    expect(await page.evaluate(() => Object.keys((globalThis as any).localStorage))).toEqual(['iki.playerDevice']);
    expect(errors).toEqual([]);
    // The page names the library an app embeds, with the SHA-256 of the served tarball.
    const tarball = new Uint8Array(await (await fetch(`${service.url}/downloads/iki-core.tgz`)).arrayBuffer());
    expect(await page.textContent('#embed-sha256')).toBe(sha256(tarball));
    expect(await page.textContent('#embed-command')).toBe(`npm install ${service.url}/downloads/iki-core.tgz`);
  }, 60_000);

  it('another tab, another browser profile and a page that did not open the copy get nothing', async () => {
    const other = await context.newPage();
    await other.goto(`${service.url}/player`);
    await other.waitForSelector('#license-list');
    expect(await statusFrom(other, modelUrl)).toBe(404);
    await other.goto(`${service.url}/seller`);
    expect(await statusFrom(other, modelUrl)).toBe(404);
    // Navigating to the URL itself (a new top-level page) is not answered either.
    expect((await other.goto(modelUrl))?.status()).toBe(404);
    await other.close();
    const { context: stranger, page: strangerPage } = await newPage(browser, errors);
    await signIn(strangerPage, buyer);
    expect(await statusFrom(strangerPage, modelUrl)).toBe(404);
    await stranger.close();
    // The opener still gets it.
    expect(await statusFrom(page, modelUrl)).toBe(200);
  }, 30_000);

  it('closing the model ends every URL of the copy (410), and the service worker keeps nothing', async () => {
    const urls = [modelUrl, ...master.paths.filter((p) => p !== master.model3Path).map((p) => new URL(p, modelUrl).href)];
    await page.click('#viewer-status button');
    for (const url of urls) expect(await statusFrom(page, url), url).toBe(410);
    expect(await storage(page)).toEqual(EMPTY);
  });

  it('the page going away ends the URLs', async () => {
    modelUrl = await openCopy(page, licenses[0]!);
    expect(await statusFrom(page, modelUrl)).toBe(200);
    await page.goto(`${service.url}/player`);
    await page.waitForSelector('#license-list');
    expect(await statusFrom(page, modelUrl)).toBe(404);
  });

  it('signing out in another tab ends the URLs', async () => {
    modelUrl = await openCopy(page, licenses[0]!);
    const other = await context.newPage();
    await other.goto(`${service.url}/player`);
    await other.waitForSelector('#session button');
    await other.click('#session button');
    await other.waitForURL(`${service.url}/`);
    // The page closes the model when its session ends (issue 24 item 6): the copy is gone from
    // the page and the sign-in gate is back.
    await page.waitForFunction('document.body.dataset.openLicense === undefined && !document.getElementById("viewer").checkVisibility()');
    expect(await statusFrom(page, modelUrl)).toBe(410);
    await other.close();
  });

  it('revoking the license ends the URLs at the next request', async () => {
    await signIn(page, buyer);
    modelUrl = await openCopy(page, licenses[1]!);
    expect(await statusFrom(page, modelUrl)).toBe(200);
    await api(service, 'POST', `/api/licenses/${licenses[1]}/revoke`, seller.token, { reason: 'test' });
    // The page asks the service again at most every 2 s before it answers.
    await expect.poll(() => statusFrom(page, modelUrl), { timeout: 10_000, interval: 250 }).toBe(410);
    await page.locator('#viewer-status .notice.error', { hasText: 'The model was closed' }).waitFor();
    expect(await storage(page)).toEqual(EMPTY);
    await context.close();
  }, 30_000);
});

describe('PixiJS 8 loads the opened copy by URL', () => {
  it('Assets.load(url) + Sprite draws the texture with the decoded copy\'s pixels', async () => {
    // PixiJS as an app would bundle it (an IIFE exposing the module as `PIXI`).
    const bundled = await build({ stdin: { contents: "import * as PIXI from 'pixi.js'; globalThis.PIXI = PIXI;", resolveDir: process.cwd() },
      bundle: true, format: 'iife', write: false, platform: 'browser', target: 'chrome111', logLevel: 'silent' });
    const pixi = bundled.outputFiles[0]!.text;
    // WebGL in software (SwiftShader), so PixiJS's default renderer runs headless.
    webgl = await chromium.launch({ executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--no-first-run'] });
    const context = await webgl.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    await countObjectUrls(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await signIn(page, buyer);
    const modelUrl = await openCopy(page, licenses[2]!);
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
    expect(await storage(page)).toEqual(EMPTY);
  }, 60_000);
});
