/**
 * The example app of docs/examples/embed-player (issue 25 items 3 and 4), as an app developer
 * would run it: `@iki/core` installed with npm from the service's `/downloads/iki-core.tgz`
 * (registry unreachable, empty cache) into a folder outside the repository, the example's
 * files beside it, all served by a plain static server on another origin (`localhost`, the
 * service being `127.0.0.1`). In Chromium the app signs in with a bearer token, opens a copy
 * in the library's worker and draws its textures with `<img>` from package URLs; the pixels
 * are the master's. With the service's IKI_CORS_ORIGINS listing the app it works; against a
 * service that does not list it, the browser is refused at the first call.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newPage } from './chromium.js';
import { EMPTY_STORAGE, countObjectUrls, expectOpaque, licensedCopy, storage, type LicensedCopy } from './player-copy.js';
import { PASSWORD, startService, type Service } from './setup.js';

const run = promisify(execFile);
const EXAMPLE = new URL('../../../docs/examples/embed-player/', import.meta.url);
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

let app: { dir: string; server: Server; origin: string };
let copy: LicensedCopy;
let closed: Service;
let browser: Browser;

/** A static file server for `dir` on an ephemeral port of localhost. */
async function staticServer(dir: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(dir, path.endsWith('/') ? `${path}index.html` : path);
    readFile(file).then((bytes) => {
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
      res.end(bytes);
    }, () => {
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, origin: `http://localhost:${port}` };
}

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'iki-embed-app-'));
  app = { dir, ...(await staticServer(dir)) };
  copy = await licensedCopy(1, { corsOrigins: [app.origin] });
  closed = await startService({ perLicense: 5, perUser: 5, windowSeconds: 3600 });
  // Installed from the service alone: the public registry is a closed port, the cache empty.
  const tarball = await fetch(`${copy.service.url}/downloads/iki-core.tgz`);
  expect(tarball.status).toBe(200);
  const body = new Uint8Array(await tarball.arrayBuffer());
  expect(tarball.headers.get('etag')).toBe(`"${createHash('sha256').update(body).digest('hex')}"`);
  await run('npm', ['install', '--no-save', '--no-package-lock', `${copy.service.url}/downloads/iki-core.tgz`], { cwd: dir, timeout: 120_000,
    env: { ...process.env, npm_config_registry: 'http://127.0.0.1:9/', npm_config_cache: join(dir, '.npm-cache'),
      npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } });
  for (const file of await readdir(EXAMPLE)) await copyFile(new URL(file, EXAMPLE), join(dir, file));
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await copy?.service.close();
  await closed?.close();
  app?.server.close();
  if (app !== undefined) await rm(app.dir, { recursive: true, force: true });
});

describe('the example app, installed from /downloads/iki-core.tgz, on another origin', () => {
  it('the installed package is the versioned ESM library with its types, worker, service worker and .wasm', async () => {
    const manifest = JSON.parse(await readFile(join(app.dir, 'node_modules/@iki/core/package.json'), 'utf8'));
    const version = JSON.parse(await readFile(new URL('../../../ts/package.json', import.meta.url), 'utf8')).version;
    expect(manifest).toMatchObject({ name: '@iki/core', version, type: 'module', types: './types/browser/index.d.ts' });
    expect(manifest.dependencies).toBeUndefined();
    for (const file of ['dist/iki-core.js', 'dist/license-worker.js', 'dist/package-sw.js', 'dist/iki_wasm_bg.wasm',
      'types/browser/index.d.ts', 'types/browser/package-urls.d.ts']) {
      await expect(readFile(join(app.dir, 'node_modules/@iki/core', file)), file).resolves.toBeInstanceOf(Buffer);
    }
  });

  it('with IKI_CORS_ORIGINS listing the app: signs in, opens the copy and draws its textures by URL', async () => {
    const errors: string[] = [];
    const { context, page } = await newPage(browser, errors);
    await countObjectUrls(context);
    await page.goto(`${app.origin}/index.html?service=${encodeURIComponent(copy.service.url)}`);
    await page.fill('#email', copy.buyer.email);
    await page.fill('#password', PASSWORD);
    await page.click('#signin button');
    await page.click(`button[data-license-id="${copy.licenses[0]}"]`);
    await expect.poll(() => page.textContent('#status'), { timeout: 30_000 }).toBe('Opened in memory.');
    expect(await page.textContent('#model-url')).toMatch(new RegExp(`^${app.origin}/package/${copy.licenses[0]}/`));
    for (const texture of copy.master.textures) {
      const drawn = await page.evaluate((path) => {
        const img = (globalThis as any).document.querySelector(`#textures img[data-path="${path}"]`);
        const canvas = (globalThis as any).document.createElement('canvas');
        canvas.width = img.naturalWidth;
        canvas.height = img.naturalHeight;
        const c2d = canvas.getContext('2d');
        c2d.drawImage(img, 0, 0);
        return Array.from(c2d.getImageData(0, 0, canvas.width, canvas.height).data as number[]);
      }, texture.path);
      expectOpaque(copy.master, drawn, texture.path);
    }
    expect(await storage(page)).toEqual(EMPTY_STORAGE);
    // The worker downloaded the copy from the service across origins; the page's own requests went to the app.
    const worker = page.workers().find((w) => w.url() === `${app.origin}/node_modules/@iki/core/dist/license-worker.js`);
    const fetched = await worker!.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name));
    expect(fetched).toEqual(expect.arrayContaining([`${copy.service.url}/api/licenses/${copy.licenses[0]}/model`,
      `${app.origin}/node_modules/@iki/core/dist/iki_wasm_bg.wasm`]));
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it('against a service whose IKI_CORS_ORIGINS does not list the app, the first call is refused', async () => {
    const { context, page } = await newPage(browser, []);
    const refused: string[] = [];
    page.on('requestfailed', (r) => refused.push(new URL(r.url()).pathname));
    await page.goto(`${app.origin}/index.html?service=${encodeURIComponent(closed.url)}`);
    await page.fill('#email', copy.buyer.email);
    await page.fill('#password', PASSWORD);
    await page.click('#signin button');
    await page.locator('#status', { hasText: 'Failed:' }).waitFor();
    expect(refused).toContain('/api/sessions');
    expect(await page.locator('#licenses button').count()).toBe(0);
    await context.close();
  });
});
