/**
 * The web route (`src/routes/web.ts`) through the real app: pages and the bundles of
 * `server/dist/web` (make build) with their media types and security headers, 404 for anything
 * not served, and no way out of the asset directories (raw request paths, so nothing
 * normalizes `..` or `%2e%2e` before the server).
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler, notFoundHandler } from '../src/errors.js';
import { silentLogger } from '../src/logger.js';
import {
  EXPORT_WORKER_SECURITY_POLICY, PAGE_SECURITY_POLICY, SERVICE_WORKER_SECURITY_POLICY, WORKER_SECURITY_POLICY, webRoutes,
} from '../src/routes/web.js';
import { startApp, type TestApp } from './helpers/app.js';

const repo = (path: string): URL => new URL(`../../${path}`, import.meta.url);

/** GET (or another method) with the path sent exactly as given. */
function raw(base: string, path: string, method = 'GET'): Promise<{ status: number; type: string | undefined; body: Buffer }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body: Buffer.concat(parts) }));
    });
    req.on('error', reject);
    req.end();
  });
}

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(async () => {
  await app.close();
});

const PAGE_FILES = ['index.html', 'seller.html', 'player.html', 'verify-email.html'];

describe('pages', () => {
  it.each([['/', 'index.html', 'home'], ['/seller', 'seller.html', 'seller'], ['/player', 'player.html', 'player'],
    ['/verify-email', 'verify-email.html', 'verify-email'], ['/account', 'account.html', 'account'],
    ['/reset-password', 'reset-password.html', 'reset-password']])('GET %s serves %s as HTML with a strict CSP, loading its bundle', async (path, file, bundle) => {
    const answer = await app.call('GET', path);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(answer.bytes.equals(await readFile(repo(`server/public/${file}`)))).toBe(true);
    expect(answer.bytes.toString('utf8')).toContain(`<script type="module" src="/assets/js/${bundle}.js"></script>`);
    expect((await app.call('GET', `/assets/js/${bundle}.js`)).status).toBe(200);
    // Every style sheet it links is served (the page's own bundled one too, where it has one).
    for (const [, href] of answer.bytes.toString('utf8').matchAll(/<link rel="stylesheet" href="([^"]+)">/g)) {
      expect((await app.call('GET', href!)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    }
    const csp = answer.headers.get('content-security-policy') ?? '';
    expect(csp).toBe(PAGE_SECURITY_POLICY);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("worker-src 'self';");
    expect(csp).toContain("img-src 'self';");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("require-trusted-types-for 'script'; trusted-types iki-worker-url");
    // No inline script may run, no eval, and no WebAssembly on the page's main thread.
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|sha256-|blob:|data:/);
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
    expect(answer.headers.get('set-cookie')).toBeNull();
  });

  it('has no inline script, import map, handler or style on any page', async () => {
    for (const file of PAGE_FILES) {
      const text = await readFile(repo(`server/public/${file}`), 'utf8');
      const scripts = [...text.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]);
      expect(scripts).toHaveLength(1);
      expect(scripts[0]).toMatch(/^ type="module" src="\/assets\/js\/[a-z-]+\.js"$/);
      expect(text).not.toMatch(/\son[a-z]+=|style=|https?:\/\/|importmap/);
    }
  });

  it('answers HEAD with the headers only', async () => {
    const answer = await raw(app.url, '/seller', 'HEAD');
    expect(answer.status).toBe(200);
    expect(answer.type).toBe('text/html; charset=utf-8');
    expect(answer.body.length).toBe(0);
  });
});

describe('assets', () => {
  it.each([
    ['/assets/app/style.css', 'server/public/assets/style.css', 'text/css; charset=utf-8'],
    ['/assets/app/icon.svg', 'server/public/assets/icon.svg', 'image/svg+xml'],
    ['/assets/js/player.js', 'server/dist/web/player.js', 'text/javascript; charset=utf-8'],
    ['/assets/js/player.js.map', 'server/dist/web/player.js.map', 'application/json; charset=utf-8'],
    // The style sheet of the libraries the page bundles (uPlot's, issue 29).
    ['/assets/js/seller.css', 'server/dist/web/seller.css', 'text/css; charset=utf-8'],
    ['/assets/js/license-worker.js', 'server/dist/web/license-worker.js', 'text/javascript; charset=utf-8'],
    ['/assets/pkg/iki_wasm_bg.wasm', 'pkg/iki_wasm_bg.wasm', 'application/wasm'],
  ])('GET %s serves %s as %s', async (path, file, type) => {
    const answer = await app.call('GET', path);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe(type);
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    const expected = await readFile(repo(file));
    expect(answer.headers.get('content-length')).toBe(String(expected.length));
    expect(answer.bytes.equals(expected)).toBe(true);
  });

  it('gives worker bundles their own CSP (WebAssembly allowed there) and page bundles none', async () => {
    const worker = await app.call('GET', '/assets/js/license-worker.js');
    expect(worker.headers.get('content-security-policy')).toBe(WORKER_SECURITY_POLICY);
    expect(WORKER_SECURITY_POLICY).toContain("script-src 'self' 'wasm-unsafe-eval';");
    expect(WORKER_SECURITY_POLICY).not.toMatch(/unsafe-eval'(?<!wasm-unsafe-eval')|unsafe-inline|blob:|data:/);
    expect((await app.call('GET', '/assets/js/player.js')).headers.get('content-security-policy')).toBeNull();
  });

  it('lets the export worker and the project worker, and only them, start their workers (deflate, digest)', async () => {
    const exporter = await app.call('GET', '/assets/js/export-worker.js');
    expect(exporter.headers.get('content-security-policy')).toBe(EXPORT_WORKER_SECURITY_POLICY);
    const project = await app.call('GET', '/assets/js/project-worker.js');
    expect(project.headers.get('content-security-policy')).toBe(EXPORT_WORKER_SECURITY_POLICY);
    const digester = await app.call('GET', '/assets/js/digest-worker.js');
    expect(digester.status).toBe(200);
    expect(digester.headers.get('content-security-policy')).toBe(WORKER_SECURITY_POLICY);
    expect(EXPORT_WORKER_SECURITY_POLICY).toBe(`${WORKER_SECURITY_POLICY.replace("trusted-types 'none'", 'trusted-types iki-worker-url')}; `
      + "worker-src 'self'");
    const deflater = await app.call('GET', '/assets/js/deflate-worker.js');
    expect(deflater.status).toBe(200);
    expect(deflater.headers.get('content-security-policy')).toBe(WORKER_SECURITY_POLICY);
  });

  it('serves the package service worker with its own CSP, allowed to control /player only', async () => {
    const sw = await app.call('GET', '/assets/js/package-sw.js');
    expect(sw.status).toBe(200);
    expect(sw.headers.get('content-security-policy')).toBe(SERVICE_WORKER_SECURITY_POLICY);
    expect(SERVICE_WORKER_SECURITY_POLICY).not.toMatch(/wasm-unsafe-eval|unsafe-inline|connect-src|blob:|data:/);
    expect(sw.headers.get('service-worker-allowed')).toBe('/player');
    expect(sw.headers.get('cache-control')).toBe('no-cache');
    for (const other of ['/assets/js/license-worker.js', '/assets/js/player.js']) {
      expect((await app.call('GET', other)).headers.get('service-worker-allowed'), other).toBeNull();
    }
  });

  it('bundles the WebAssembly glue into the worker only, never a page, and no Node module anywhere', async () => {
    const bundles = await readdir(repo('server/dist/web'));
    // Pages share chunks (`chunk-<hash>.js`) and load the activity plots lazily (`seller-activity-plots-<hash>.js`).
    const chunk = (f: string) => /^(chunk|seller-activity-plots)-[A-Z0-9]{8}\.js$/.test(f);
    expect(bundles.filter((f) => f.endsWith('.js') && !chunk(f)).sort())
      .toEqual(['account.js', 'deflate-worker.js', 'digest-worker.js', 'export-worker.js', 'home.js', 'license-worker.js', 'package-sw.js', 'player.js', 'project-worker.js',
        'project.js', 'reset-password.js', 'seller.js', 'verify-email.js']);
    expect(bundles.filter((f) => f.startsWith('seller-activity-plots-') && f.endsWith('.js'))).toHaveLength(1);
    for (const file of bundles.filter((f) => f.endsWith('.js'))) {
      const text = await readFile(repo(`server/dist/web/${file}`), 'utf8');
      // wasm-bindgen's glue calls the module's allocator by this name.
      expect(text.includes('__wbindgen_malloc'), file).toBe(file.endsWith('-worker.js'));
      expect(text, file).not.toMatch(/(from|import)\s*\(?\s*["'](node:[a-z_/]+|fs|path|crypto|os)["']|require\(/);
    }
  });

  it('lets the browser keep an asset only after revalidating it; pages are never stored', async () => {
    const first = await app.call('GET', '/assets/pkg/iki_wasm_bg.wasm');
    expect(first.headers.get('cache-control')).toBe('no-cache');
    const modified = first.headers.get('last-modified') ?? '';
    expect(Date.parse(modified)).not.toBeNaN();
    const again = await app.call('GET', '/assets/pkg/iki_wasm_bg.wasm', { headers: { 'if-modified-since': modified } });
    expect(again.status).toBe(304);
    expect(again.bytes.length).toBe(0);
    const older = new Date(Date.parse(modified) - 1000).toUTCString();
    const stale = await app.call('GET', '/assets/pkg/iki_wasm_bg.wasm', { headers: { 'if-modified-since': older } });
    expect(stale.status).toBe(200);
    expect(stale.bytes.length).toBe(first.bytes.length);
    expect((await app.call('GET', '/player')).headers.get('cache-control')).toBe('no-store');
  });

  it('serves the .wasm the server itself loads (the file ts/dist/wasm.js instantiates in Node)', async () => {
    const fromLibrary = new URL('../../pkg/iki_wasm_bg.wasm', repo('ts/dist/wasm.js'));
    const answer = await app.call('GET', '/assets/pkg/iki_wasm_bg.wasm');
    expect(answer.bytes.equals(await readFile(fromLibrary))).toBe(true);
  });

  it.each([
    '/assets/app/missing.css', '/assets/app/', '/assets/app', '/assets/app/home.js', '/assets/pkg/iki_wasm.d.ts',
    '/assets/pkg/package.json', '/assets/pkg/iki_wasm.js', '/assets/js/missing.js', '/assets/js/.built',
    '/assets/js/', '/assets/iki/dist/wasm.js', '/assets/iki/dist/cli/main.js',
    '/assets/other/x.js', '/assets/app/.hidden.css', '/assets/js/.hidden.js', '/index.html', '/seller.html',
  ])('GET %s is 404 NOT_FOUND', async (path) => {
    const answer = await app.call('GET', path);
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatchObject({ code: 'NOT_FOUND' });
    expect(answer.body.error.requestId).toMatch(/^req_/);
  });

  it('does not accept other methods', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const answer = await raw(app.url, '/assets/app/style.css', method);
      expect(answer.status).toBe(404);
    }
  });
});

describe('path escapes', () => {
  // Targets that exist and carry a served extension (node_modules/express/index.js, the CLI),
  // so only the path checks stand between the request and the file.
  const express3 = 'node_modules%2fexpress%2findex.js';
  const escapes = [
    '/assets/app/../../../node_modules/express/index.js',
    '/assets/app/%2e%2e/%2e%2e/%2e%2e/node_modules/express/index.js',
    '/assets/app/%2E%2E/%2E%2E/%2E%2E/node_modules/express/index.js',
    `/assets/app/..%2f..%2f..%2f${express3}`,
    '/assets/app/%2e%2e%2f%2e%2e%2f%2e%2e%2fnode_modules/express/index.js',
    '/assets/app/%252e%252e/%252e%252e/%252e%252e/node_modules/express/index.js',
    '/assets/app/..%5c..%5c..%5cnode_modules%5cexpress%5cindex.js',
    '/assets/app/..\\..\\..\\node_modules\\express\\index.js',
    '/assets/app/%c0%ae%c0%ae/%c0%ae%c0%ae/%c0%ae%c0%ae/node_modules/express/index.js',
    '/assets/app/common.js%00.js',
    '/assets/app/%',
    '/assets/pkg/../node_modules/express/index.js',
    '/assets/pkg/%2e%2e/node_modules/express/index.js',
    `/assets/pkg/..%2f${express3}`,
    '/assets/pkg/./iki_wasm.js',
    '/assets/js/../../../node_modules/express/index.js',
    '/assets/js/%2e%2e/%2e%2e/%2e%2e/node_modules/express/index.js',
    `/assets/js/..%2f..%2f..%2f${express3}`,
    '/assets/js/%2e%2e/%2e%2e/%2e%2e/ts/dist/cli/main.js',
    '/assets/js/%2e%2e/routes/web.js',
    '/assets/js/%2e%2e%2froutes%2fweb.js',
    '/assets/js/%2fplayer.js',
    '/assets/js//player.js',
    '/assets/js/./player.js',
    '/assets/js/%2e/player.js',
    '/assets/js/PLAYER.js',
    '/assets/js/player.js%00.js',
  ];

  it.each(escapes)('%s is 404 and leaks nothing', async (path) => {
    const answer = await raw(app.url, path);
    expect(answer.status).toBe(404);
    expect(answer.type).toMatch(/^application\/json/);
    const text = answer.body.toString('utf8');
    expect(text).toContain('NOT_FOUND');
    expect(text).not.toMatch(/module\.exports|require\(|import /);
  });

  it('does not follow a symbolic link out of a mount', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'iki-web-'));
    await mkdir(join(dir, 'web'), { recursive: true });
    await writeFile(join(dir, 'secret.js'), 'export const secret = 1;\n');
    await writeFile(join(dir, 'web', 'ok.js'), 'export const ok = 1;\n');
    await symlink(join(dir, 'secret.js'), join(dir, 'web', 'link.js'));
    await symlink(dir, join(dir, 'web', 'up'));
    const web = express();
    web.use(webRoutes({ publicDir: join(dir, 'public'), webDir: join(dir, 'web'), pkgDir: join(dir, 'none') }));
    web.use(notFoundHandler);
    web.use(errorHandler(silentLogger));
    const server: Server = web.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await raw(base, '/assets/js/ok.js')).status).toBe(200);
      expect((await raw(base, '/assets/js/link.js')).status).toBe(404);
      expect((await raw(base, '/assets/js/up/secret.js')).status).toBe(404);
      expect((await raw(base, '/assets/pkg/x.wasm')).status).toBe(404);
      expect((await raw(base, '/')).status).toBe(404);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });
});
