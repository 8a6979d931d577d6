/**
 * The webhook sender's SSRF guard and HTTP hygiene (issue 26 item 4, "Safe to point anywhere"),
 * with real sockets: 127.0.0.1, 10/8, 169.254.169.254, ::1, an IPv4-mapped loopback and a name
 * resolving to loopback (localhost, and a public-looking name whose DNS answer is 127.0.0.1)
 * are refused before any byte reaches the receiver; with the development opt-in the same
 * receiver gets the body; a redirect is not followed; a receiver that stalls is cut at the
 * deadline; an endless answer is read only up to the bound.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBlockedAddress, postWebhook, type WebhookPostOptions } from '../src/services/webhook-http.js';

let receiver: Server;
let port: number;
const received: { path: string; body: string; signature: string | undefined }[] = [];

beforeAll(async () => {
  receiver = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (p: Buffer) => parts.push(p));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: Buffer.concat(parts).toString('utf8'), signature: req.headers['iki-signature'] as string | undefined });
      if (req.url === '/redirect') res.writeHead(302, { location: `http://127.0.0.1:${port}/landed` }).end();
      else if (req.url === '/stall') res.writeHead(200); // never ends
      else if (req.url === '/endless') {
        res.writeHead(200);
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        const pump = () => { while (res.write(chunk)) { /* fill */ } };
        res.on('drain', pump);
        pump();
      } else if (req.url === '/fail') res.writeHead(500).end('no');
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  port = (receiver.address() as AddressInfo).port;
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});

const BODY = new TextEncoder().encode('{"type":"license.created"}');
const STRICT: WebhookPostOptions = { allowPrivate: false, timeoutMs: 2000, maxResponseBytes: 1024 };
const DEV: WebhookPostOptions = { ...STRICT, allowPrivate: true };
/** A resolver that answers `address` for every name, as a hostile DNS server would. */
const answering = (address: string, family: 4 | 6): NonNullable<WebhookPostOptions['resolve']> =>
  ((_name: string, _options: unknown, callback: (err: null, addresses: LookupAddress[]) => void) => {
    callback(null, [{ address, family }]);
  }) as never;

describe('webhook destinations', () => {
  it('refuses loopback, private, link-local and metadata addresses, literal or resolved, before anything is sent', async () => {
    const before = received.length;
    const targets = [
      `http://127.0.0.1:${port}/hook`, 'http://10.1.2.3/hook', 'http://169.254.169.254/latest/meta-data/',
      `http://[::1]:${port}/hook`, `http://[::ffff:127.0.0.1]:${port}/hook`, `http://localhost:${port}/hook`,
      'http://192.168.1.1/hook', 'http://172.16.0.1/hook', 'http://100.64.0.1/hook', 'http://[fd00::1]/hook',
    ];
    for (const target of targets) {
      expect(await postWebhook(target, BODY, {}, STRICT), target).toMatchObject({ kind: 'failed', reason: 'refused_destination' });
    }
    // A public-looking name whose DNS answer is loopback (rebinding) is checked on the connection's own look-up.
    const rebound = await postWebhook(`http://shop.example:${port}/hook`, BODY, {}, { ...STRICT, resolve: answering('127.0.0.1', 4) });
    expect(rebound).toMatchObject({ kind: 'failed', reason: 'refused_destination' });
    expect(await postWebhook(`http://shop.example:${port}/hook`, BODY, {}, { ...STRICT, resolve: answering('::1', 6) }))
      .toMatchObject({ kind: 'failed', reason: 'refused_destination' });
    expect(received.length).toBe(before);
    for (const bad of ['ftp://example.com/x', 'http://user:pw@example.com/x', 'not a url']) {
      expect(await postWebhook(bad, BODY, {}, STRICT), bad).toMatchObject({ kind: 'failed', reason: 'bad_url' });
    }
    expect(isBlockedAddress('93.184.216.34')).toBe(false);
    expect(isBlockedAddress('2606:2800:220:1:248:1893:25c8:1946')).toBe(false);
  });

  it('with the development opt-in delivers the body and headers; a documentation-range answer is refused', async () => {
    const result = await postWebhook(`http://127.0.0.1:${port}/hook`, BODY, { 'Iki-Signature': 't=1,v1=ab' }, DEV);
    expect(result).toEqual({ kind: 'delivered', status: 200, body: 'ok' });
    expect(received.at(-1)).toEqual({ path: '/hook', body: '{"type":"license.created"}', signature: 't=1,v1=ab' });
    // Documentation ranges are refused too. (A public answer passes the guard: checked by isBlockedAddress above,
    // without connecting anywhere, since tests send traffic to loopback only.)
    const before = received.length;
    const outcome = await postWebhook(`http://shop.example:${port}/hook`, BODY, {}, { ...STRICT, timeoutMs: 300, resolve: answering('192.0.2.1', 4) });
    expect(outcome).toMatchObject({ kind: 'failed', reason: 'refused_destination' });
    expect(received.length).toBe(before);
    expect(await postWebhook(`http://127.0.0.1:${port}/fail`, BODY, {}, DEV)).toEqual({ kind: 'failed', reason: 'http_status', status: 500 });
  });

  it('does not follow a redirect, cuts a stalled receiver at the deadline and reads a bounded answer', async () => {
    const before = received.length;
    expect(await postWebhook(`http://127.0.0.1:${port}/redirect`, BODY, {}, DEV)).toEqual({ kind: 'failed', reason: 'redirect', status: 302 });
    expect(received.slice(before).map((r) => r.path)).toEqual(['/redirect']);
    const started = Date.now();
    expect(await postWebhook(`http://127.0.0.1:${port}/stall`, BODY, {}, { ...DEV, timeoutMs: 300 })).toEqual({ kind: 'failed', reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2000);
    const endless = await postWebhook(`http://127.0.0.1:${port}/endless`, BODY, {}, { ...DEV, maxResponseBytes: 1024 });
    expect(endless).toMatchObject({ kind: 'delivered', status: 200 });
    expect(endless.kind === 'delivered' ? endless.body.length : -1).toBe(1024);
  });
});
