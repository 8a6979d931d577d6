/**
 * The web route (`src/routes/web.ts`) through the real app: pages and assets with their media
 * types and security headers, 404 for anything not served, and no way out of the asset
 * directories (raw request paths, so nothing normalizes `..` or `%2e%2e` before the server).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler, notFoundHandler } from '../src/errors.js';
import { silentLogger } from '../src/logger.js';
import { webRoutes } from '../src/routes/web.js';
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

describe('pages', () => {
  it.each([['/', 'index.html'], ['/seller', 'seller.html'], ['/player', 'player.html'],
    ['/verify-email', 'verify-email.html']])('GET %s serves %s as HTML with a strict CSP', async (path, file) => {
    const answer = await app.call('GET', path);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(answer.bytes.equals(await readFile(repo(`server/public/${file}`)))).toBe(true);
    const csp = answer.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'self' 'wasm-unsafe-eval'( 'sha256-[A-Za-z0-9+/=]+')?;/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
    expect(answer.headers.get('set-cookie')).toBeNull();
  });

  it('allows exactly the player page\'s inline import map by its hash', async () => {
    const html = (await readFile(repo('server/public/player.html'), 'utf8'));
    const map = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    expect(JSON.parse(map)).toEqual({ imports: { '@iki/core': '/assets/iki/dist/index.js' } });
    const answer = await app.call('GET', '/player');
    const hash = createHash('sha256').update(map).digest('base64');
    expect(answer.headers.get('content-security-policy')).toContain(`'sha256-${hash}'`);
    // No other inline script on any page: the hash is the only way an inline script runs.
    for (const file of ['index.html', 'seller.html', 'player.html', 'verify-email.html']) {
      const text = await readFile(repo(`server/public/${file}`), 'utf8');
      const inline = [...text.matchAll(/<script(?![^>]*\bsrc=)([^>]*)>/g)].map((m) => m[1]);
      expect(inline.every((attrs) => attrs === ' type="importmap"')).toBe(true);
      expect(text).not.toMatch(/\son[a-z]+=|style=|https?:\/\//);
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
    ['/assets/app/common.js', 'server/public/assets/common.js', 'text/javascript; charset=utf-8'],
    ['/assets/app/icon.svg', 'server/public/assets/icon.svg', 'image/svg+xml'],
    ['/assets/pkg/iki_wasm.js', 'pkg/iki_wasm.js', 'text/javascript; charset=utf-8'],
    ['/assets/pkg/iki_wasm_bg.wasm', 'pkg/iki_wasm_bg.wasm', 'application/wasm'],
    ['/assets/iki/dist/wasm.js', 'ts/dist/wasm.js', 'text/javascript; charset=utf-8'],
    ['/assets/iki/dist/errors.js', 'ts/dist/errors.js', 'text/javascript; charset=utf-8'],
  ])('GET %s serves %s as %s', async (path, file, type) => {
    const answer = await app.call('GET', path);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe(type);
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    const expected = await readFile(repo(file));
    expect(answer.headers.get('content-length')).toBe(String(expected.length));
    expect(answer.bytes.equals(expected)).toBe(true);
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

  it('serves the .wasm the server itself loads (ts/dist resolves ../../pkg like the page does)', async () => {
    const fromLibrary = new URL('../../pkg/iki_wasm_bg.wasm', repo('ts/dist/wasm.js'));
    const answer = await app.call('GET', new URL('../../pkg/iki_wasm_bg.wasm', 'http://x/assets/iki/dist/wasm.js').pathname);
    expect(answer.bytes.equals(await readFile(fromLibrary))).toBe(true);
  });

  it.each([
    '/assets/app/missing.js', '/assets/app/', '/assets/app', '/assets/pkg/iki_wasm.d.ts', '/assets/pkg/package.json',
    '/assets/iki/dist/wasm.d.ts', '/assets/iki/dist/wasm.js.map', '/assets/iki/dist/cli/main.js',
    '/assets/iki/dist/package/index.js',
    '/assets/iki/wasm.js', '/assets/other/x.js', '/assets/app/.hidden.js', '/index.html', '/seller.html',
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
    '/assets/iki/dist/%2e%2e/%2e%2e/node_modules/express/index.js',
    '/assets/iki/dist/%2e%2e/dist/wasm.js',
    '/assets/iki/dist/%2e%2e/%2e%2e/server/public/assets/common.js',
    '/assets/iki/dist/%2fwasm.js',
    '/assets/iki/dist//wasm.js',
    '/assets/iki/dist/%2e/cli/main.js',
    '/assets/iki/dist/./cli/main.js',
    '/assets/iki/dist/CLI/main.js',
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
    await mkdir(join(dir, 'public', 'assets'), { recursive: true });
    await writeFile(join(dir, 'secret.js'), 'export const secret = 1;\n');
    await writeFile(join(dir, 'public', 'assets', 'ok.js'), 'export const ok = 1;\n');
    await symlink(join(dir, 'secret.js'), join(dir, 'public', 'assets', 'link.js'));
    await symlink(dir, join(dir, 'public', 'assets', 'up'));
    const web = express();
    web.use(webRoutes({ publicDir: join(dir, 'public'), coreDir: join(dir, 'none'), pkgDir: join(dir, 'none') }));
    web.use(notFoundHandler);
    web.use(errorHandler(silentLogger));
    const server: Server = web.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await raw(base, '/assets/app/ok.js')).status).toBe(200);
      expect((await raw(base, '/assets/app/link.js')).status).toBe(404);
      expect((await raw(base, '/assets/app/up/secret.js')).status).toBe(404);
      expect((await raw(base, '/assets/pkg/x.js')).status).toBe(404);
      expect((await raw(base, '/')).status).toBe(404);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });
});
