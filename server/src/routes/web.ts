/**
 * The service's web pages and the bundles they load (SPEC "What the service does", item 3;
 * threat model item 5: the player never writes decrypted bytes anywhere).
 *
 * Pages: `/` (sign up, sign in), `/verify-email` (the target of the verification link),
 * `/account` (account id, sessions, password), `/reset-password` (the target of the reset link),
 * `/seller` (masters, licenses, revocation, identify) and `/player` (open a license copy in
 * memory). Each is a static HTML file of `server/public/` that loads one script bundle; the
 * bundles are built from the typed sources in `server/web/` (page views over the modules of
 * `@iki/core/browser`) by esbuild into `server/dist/web/` (`make build`; scripts/build-web.mjs).
 *
 * Assets, read-only, GET and HEAD only:
 * - `/assets/app/<file>` → `server/public/assets/` (the style sheet and the icon)
 * - `/assets/js/<file>`  → `server/dist/web/` (page bundles `<page>.js`, worker bundles
 *   `<name>-worker.js`, their source maps, and `<page>.css`: the style sheets the page's
 *   libraries bring, bundled with it)
 * - `/assets/pkg/<file>` → `pkg/`, the `.wasm` only: the very module the server uses, which
 *   each worker instantiates for itself (the glue is bundled into the workers)
 *
 * Path safety: a request path is percent-decoded once, split into segments, and every segment
 * must be a plain name (letters, digits, `_`, `-`, `.`, not starting with a dot), so `..`,
 * `%2e%2e`, backslashes, NUL and hidden files never reach the file system. The resolved real
 * path (symbolic links followed) must still lie inside the mount's real directory, and the
 * extension must be one the mount serves. Anything else is the API's ordinary 404.
 *
 * Pages carry a Content-Security-Policy: scripts and workers from this origin only, no inline
 * code, no eval, no external origin, no framing, Trusted Types required, so no script can
 * reach an HTML-injection sink (the one policy allowed only makes same-origin worker URLs).
 * Pages compile no WebAssembly: the workers do, and a dedicated worker runs under the policy
 * its script is delivered with, so worker bundles carry their own, which allows
 * `'wasm-unsafe-eval'` (never `'unsafe-eval'`) and nothing beyond this origin.
 */
import { createReadStream } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response, type Router } from 'express';
import { ApiError } from '../errors.js';

/** Where the pages and their bundles come from (tests point these at temp dirs). */
export interface WebOptions {
  /** `server/public`: the HTML pages and `assets/` (style sheet, icon). */
  publicDir?: string;
  /** `server/dist/web`: the bundles scripts/build-web.mjs writes. */
  webDir?: string;
  /** `pkg`: the `.wasm`. */
  pkgDir?: string;
}

/** Media types by extension; `application/wasm` lets browsers compile while streaming. */
export const WEB_MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** Page paths and their files under `publicDir`. */
const PAGES: Readonly<Record<string, string>> = {
  '/': 'index.html',
  '/verify-email': 'verify-email.html',
  '/seller': 'seller.html',
  '/player': 'player.html',
  '/project': 'project.html',
  '/account': 'account.html',
  '/reset-password': 'reset-password.html',
};

interface Mount {
  prefix: string;
  dir: string;
  extensions: readonly string[];
}

/** One plain file or directory name: no leading dot, no separators. */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;
const MAX_SEGMENTS = 8;

const here = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));

/** The path segments of a request below a mount, or undefined when it is not a plain path. */
function segmentsOf(rest: string): string[] | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    return undefined;
  }
  if (!decoded.startsWith('/')) return undefined;
  const segments = decoded.slice(1).split('/');
  if (segments.length > MAX_SEGMENTS || !segments.every((s) => SEGMENT.test(s))) return undefined;
  return segments;
}

/** The real path of a servable file inside `mount`, or undefined. */
async function resolveAsset(mount: Mount, rest: string): Promise<string | undefined> {
  const segments = segmentsOf(rest);
  if (segments === undefined) return undefined;
  if (!mount.extensions.includes(extname(segments.at(-1) ?? ''))) return undefined;
  try {
    const root = await realpath(mount.dir);
    const file = await realpath(join(mount.dir, ...segments));
    if (!file.startsWith(root + sep)) return undefined;
    return (await stat(file)).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}

function notFound(): ApiError {
  return new ApiError('NOT_FOUND', 'no such page or asset');
}

/**
 * Sends a file with its media type; HEAD gets the headers only. Assets are public code, so
 * the browser may keep them, but must revalidate (`no-cache` + `Last-Modified`, RFC 9111
 * §5.2.2.4, RFC 9110 §13.1.3): a rebuilt `pkg/` or `ts/dist` is picked up at the next load.
 */
async function sendFile(req: Request, res: Response, file: string): Promise<void> {
  const type = WEB_MEDIA_TYPES[extname(file)];
  if (type === undefined) throw notFound();
  const { size, mtime } = await stat(file);
  const modified = new Date(Math.floor(mtime.getTime() / 1000) * 1000);
  res.setHeader('Cache-Control', 'no-cache');
  if (file.endsWith(WORKER_SUFFIX)) {
    res.setHeader('Content-Security-Policy', STARTING_WORKERS.some((w) => file.endsWith(w)) ? EXPORT_WORKER_SECURITY_POLICY : WORKER_SECURITY_POLICY);
  }
  if (file.endsWith(SERVICE_WORKER_SUFFIX)) {
    res.setHeader('Content-Security-Policy', SERVICE_WORKER_SECURITY_POLICY);
    // The player registers it for its own page (scope `/player`); package URLs are `/package/…`.
    res.setHeader('Service-Worker-Allowed', '/player');
  }
  res.setHeader('Last-Modified', modified.toUTCString());
  const since = Date.parse(req.get('if-modified-since') ?? '');
  if (!Number.isNaN(since) && modified.getTime() <= since) {
    res.status(304).end();
    return;
  }
  res.status(200).setHeader('Content-Type', type);
  res.setHeader('Content-Length', String(size));
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  try {
    await pipeline(createReadStream(file), res);
  } catch (err) {
    // The client went away: nothing to answer and nothing worth logging.
    if (res.destroyed) return;
    throw err;
  }
}

/** Worker bundles are named `<name>-worker.js`, service workers `<name>-sw.js` (scripts/build-web.mjs). */
const WORKER_SUFFIX = '-worker.js';
const SERVICE_WORKER_SUFFIX = '-sw.js';

/**
 * The Content-Security-Policy of every page. Trusted Types allow one policy,
 * `iki-worker-url` (`@iki/core/browser` trusted-worker.ts), which only turns same-origin
 * `.js` URLs into worker script URLs; no policy may create HTML or script.
 */
export const PAGE_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types iki-worker-url",
].join('; ');

/**
 * The Content-Security-Policy a worker script is delivered with, which the worker runs
 * under: it may compile WebAssembly (`'wasm-unsafe-eval'`, not `'unsafe-eval'`), import
 * scripts and call the API of this origin only.
 */
export const WORKER_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "connect-src 'self'",
  "base-uri 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

/**
 * The workers that start workers of their own: the seller page's export worker (its deflate
 * workers) and the project page's worker (its digest worker, issue 28 item 4).
 */
const STARTING_WORKERS = ['/export-worker.js', '/project-worker.js'];

/**
 * The policy of the workers that start workers ({@link STARTING_WORKERS}):
 * {@link WORKER_SECURITY_POLICY}, plus their workers (`@iki/core/browser` deflate-pool.ts,
 * digest-worker.ts): same-origin worker scripts, started through the one Trusted Types policy
 * the page has, `iki-worker-url`.
 */
export const EXPORT_WORKER_SECURITY_POLICY = WORKER_SECURITY_POLICY
  .replace("trusted-types 'none'", 'trusted-types iki-worker-url')
  .concat("; worker-src 'self'");

/**
 * The policy of the package URLs' service worker (`@iki/core/browser` package-sw.ts): it runs
 * no WebAssembly, imports nothing and fetches nothing itself (it answers from the page that
 * opened a copy; requests it does not answer are not its own).
 */
export const SERVICE_WORKER_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "base-uri 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

/** Sends a page with its security headers (Express answers HEAD without the body). */
async function sendPage(res: Response, file: string): Promise<void> {
  const html = await readFile(file, 'utf8').catch(() => {
    throw notFound();
  });
  res.status(200).setHeader('Content-Type', WEB_MEDIA_TYPES['.html'] as string);
  res.setHeader('Content-Security-Policy', PAGE_SECURITY_POLICY);
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()');
  res.send(html);
}

/** The router serving the pages and the read-only asset mounts. */
export function webRoutes(options: WebOptions = {}): Router {
  const publicDir = options.publicDir ?? here('../../public');
  const mounts: Mount[] = [
    { prefix: '/assets/app', dir: join(publicDir, 'assets'), extensions: ['.css', '.svg'] },
    // From src/routes (tests) and dist/routes alike: server/dist/web. `.css`: the style sheets
    // of libraries a page bundles (uPlot's), which esbuild writes beside the page's script.
    { prefix: '/assets/js', dir: options.webDir ?? here('../../dist/web'), extensions: ['.js', '.map', '.css'] },
    { prefix: '/assets/pkg', dir: options.pkgDir ?? here('../../../pkg'), extensions: ['.wasm'] },
  ];
  const router = express.Router({ caseSensitive: true, strict: false });
  for (const [path, file] of Object.entries(PAGES)) {
    router.get(path, async (_req, res) => sendPage(res, join(publicDir, file)));
  }
  for (const mount of mounts) {
    router.use(mount.prefix, async (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        next();
        return;
      }
      const file = await resolveAsset(mount, req.path);
      if (file === undefined) throw notFound();
      await sendFile(req, res, file);
    });
  }
  return router;
}
