/**
 * The package URLs' service worker (issue 25 item 1; SPEC "What the service does" item 2: the
 * player resolves the package exactly as an unprotected one; threat model item 5: nothing
 * decrypted is written anywhere).
 *
 * A request for `<scope>/../package/<license>/<open-id>/<path>` (the base is
 * `new URL('package/', registration.scope)`) from a page this worker controls is answered by
 * asking *that page* over a fresh `MessageChannel` (`package-urls.ts` answers on the page):
 * the worker holds no package, no key, no map of open copies and nothing between requests, so
 * it has nothing to lose when the browser stops it and nothing another client could reach.
 *
 * - Only the requesting client is asked (`FetchEvent.clientId`), and only a window: a tab
 *   that did not open the copy does not know the open id, a page that went away is no
 *   client any more (404), and a closed copy answers 410 from its page.
 * - Textures arrive as a PNG the page had encoded off its main thread (the license worker's
 *   WASM answers this worker's port directly, package-png.ts), or, from a page with no such
 *   encoder, as `rgba8` pixels encoded here (`png-stored.ts`) and zero-filled once encoded.
 * - `Server-Timing` says how long the answer took to arrive (`answer`) and to encode here
 *   (`encode`, 0 when it came encoded): no content, only the two durations.
 * - Every answer carries `Cache-Control: no-store`; this worker uses no Cache Storage, no
 *   IndexedDB, no storage of any kind, and makes no `blob:` or `data:` URL.
 * - Any other request is not touched (no `respondWith`): the browser fetches it as usual.
 */
import { encodePngStored } from './png-stored.js';

/** The message a page receives for one request, with the port to answer on. */
export interface PackageRequest {
  type: 'iki-package-request';
  licenseId: string;
  openId: string;
  /** The path under `<license>/<open-id>/`, still percent-encoded, without query or fragment. */
  path: string;
  method: 'GET' | 'HEAD';
}

/** A page's answer to a {@link PackageRequest}. */
export type PackageAnswer =
  | { status: 200; contentType: string; body: ArrayBuffer }
  | { status: 200; rgba8: { width: number; height: number }; body: ArrayBuffer }
  | { status: 404 | 410 | 500; reason: string };

/** How long a page has to answer one request (an answer from memory takes milliseconds). */
export const PAGE_ANSWER_TIMEOUT_MS = 10_000;

/** The few service-worker types used here (the DOM lib has no WebWorker globals). */
interface SwClient { id: string; type: string; postMessage(message: unknown, transfer: Transferable[]): void }
interface SwFetchEvent extends Event {
  request: Request;
  clientId: string;
  respondWith(answer: Promise<Response>): void;
}
interface SwExtendableEvent extends Event { waitUntil(work: Promise<unknown>): void }
/** What the worker needs of its global scope. */
export interface PackageWorkerScope {
  registration: { scope: string };
  clients: { get(id: string): Promise<SwClient | undefined>; claim(): Promise<void> };
  skipWaiting(): Promise<void>;
  addEventListener(type: string, listener: (event: Event) => void): void;
}

const ID = /^[A-Za-z0-9_-]{1,128}$/;

function plain(status: number, reason: string): Response {
  return new Response(`iki: ${reason}\n`, { status, headers: {
    'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff',
  } });
}

/** Asks `client` for one file; rejects after {@link PAGE_ANSWER_TIMEOUT_MS}. */
function ask(client: SwClient, request: PackageRequest): Promise<PackageAnswer> {
  return new Promise((resolve, reject) => {
    const channel = new MessageChannel();
    const timer = setTimeout(() => {
      channel.port1.close();
      reject(new Error('the page did not answer'));
    }, PAGE_ANSWER_TIMEOUT_MS);
    channel.port1.onmessage = (event: MessageEvent<PackageAnswer>) => {
      clearTimeout(timer);
      channel.port1.close();
      resolve(event.data);
    };
    client.postMessage(request, [channel.port2]);
  });
}

/** Turns a page's answer into the response; the pixels are wiped once they are a PNG. */
function respond(answer: PackageAnswer, method: string, answerMs: number): Response {
  if (answer.status !== 200) return plain(answer.status, answer.reason);
  const started = performance.now();
  let body: Uint8Array;
  let type: string;
  if ('rgba8' in answer) {
    const pixels = new Uint8Array(answer.body);
    try {
      body = encodePngStored(answer.rgba8.width, answer.rgba8.height, pixels);
    } finally {
      pixels.fill(0);
    }
    type = 'image/png';
  } else {
    body = new Uint8Array(answer.body);
    type = answer.contentType;
  }
  const headers = {
    'content-type': type, 'content-length': String(body.length), 'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'server-timing': `answer;dur=${answerMs.toFixed(1)}, encode;dur=${(performance.now() - started).toFixed(1)}`,
  };
  return new Response(method === 'HEAD' ? null : body as Uint8Array<ArrayBuffer>, { status: 200, headers });
}

/** Answers one package request (`rest` is the URL path below the package base). */
async function answer(scope: PackageWorkerScope, event: SwFetchEvent, rest: string): Promise<Response> {
  const method = event.request.method;
  if (method !== 'GET' && method !== 'HEAD') return plain(405, `the package is read-only (${method})`);
  const [licenseId = '', openId = '', ...path] = rest.split('/');
  if (!ID.test(licenseId) || !ID.test(openId) || path.length === 0) return plain(404, 'not a package URL');
  const client = event.clientId === '' ? undefined : await scope.clients.get(event.clientId);
  // Only a page can hold an opened copy; a worker, another tab or a closed page gets nothing.
  if (client === undefined || client.type !== 'window') return plain(404, 'no opened copy answers here');
  try {
    const asked = performance.now();
    const answered = await ask(client, { type: 'iki-package-request', licenseId, openId, path: path.join('/'), method });
    return respond(answered, method, performance.now() - asked);
  } catch (err) {
    return plain(504, err instanceof Error ? err.message : 'the page did not answer');
  }
}

/** Installs the handlers on a service worker's global scope. */
export function servePackageUrls(scope: PackageWorkerScope): void {
  // A new version takes over at once, and pages opened before it are claimed, so the page that
  // registers it can use its package URLs without a reload.
  scope.addEventListener('install', (event) => (event as SwExtendableEvent).waitUntil(scope.skipWaiting()));
  scope.addEventListener('activate', (event) => (event as SwExtendableEvent).waitUntil(scope.clients.claim()));
  scope.addEventListener('message', (event) => {
    if ((event as MessageEvent).data === 'iki-claim') (event as unknown as SwExtendableEvent).waitUntil(scope.clients.claim());
  });
  scope.addEventListener('fetch', (e) => {
    const event = e as SwFetchEvent;
    const base = new URL('package/', scope.registration.scope);
    const url = new URL(event.request.url);
    if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) return;
    event.respondWith(answer(scope, event, url.pathname.slice(base.pathname.length)));
  });
}
