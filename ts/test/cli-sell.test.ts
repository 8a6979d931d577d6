// `iki api-keys` and `iki licenses` (issue 26 items 1 to 3) against a real licensing service
// (server/src `serve()`, embedded storage): a key is made with the session and printed once,
// then used as --token to create a license with a reference, an expiry and an idempotency key
// (run twice: one license), to list and search, to suspend and reinstate and revoke it; the
// key cannot make keys; revoking it stops it. `iki webhooks` (item 4) registers an endpoint on a
// loopback receiver (the service runs with the development opt-in), and the service's own
// delivery loop sends it the license's events, signed; the log, resend, disable and delete.
// `iki shops` (item 6 for item 5) connects Gumroad (a ping to the printed URL makes a license)
// and Stripe (secret from a file, set and rolled), lists and disconnects.
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { writeModelPackage } from '../../tests/fixtures/packages.mjs';
import { expectFailure, iki, startService, type LogLine } from './cli-helpers.js';
import { verifyWebhookSignature } from '../src/index.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const PASSWORD = 'correct horse battery staple';

let root: string;
let service: { url: string; close(): Promise<void> };
const logs: LogLine[] = [];
let receiver: Server;
const received: { body: string; signature: string }[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'iki-cli-sell-'));
  service = await startService(join(root, 'data'), logs,
    { webhooks: { allowPrivate: true, timeoutMs: 2000, pollMs: 20, retryHours: 72 } });
  receiver = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (p: Buffer) => parts.push(p));
    req.on('end', () => {
      received.push({ body: Buffer.concat(parts).toString('utf8'), signature: String(req.headers['iki-signature']) });
      res.end();
    });
  }).listen(0, '127.0.0.1');
  await once(receiver, 'listening');
});
afterAll(async () => {
  receiver?.close();
  await service?.close();
  await rm(root, { recursive: true, force: true });
});

async function call(method: string, path: string, json?: unknown, token?: string, type = 'application/json', body?: Uint8Array):
Promise<{ status: number; body: Record<string, any> }> {
  const sent: BodyInit | undefined = body === undefined ? (json === undefined ? undefined : JSON.stringify(json)) : Buffer.from(body);
  const response = await fetch(`${service.url}${path}`, { method, ...(sent === undefined ? {} : { body: sent }),
    headers: { 'content-type': type, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) } });
  return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, any> };
}

async function account(name: string): Promise<{ email: string; accountId: string; token: string }> {
  const email = `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  expect((await call('POST', '/api/accounts', { email, password: PASSWORD, name })).status).toBe(202);
  const link = String(logs.filter((l) => l.fields['to'] === email).at(-1)?.fields['link']);
  // The link opened without the sign-up's browser cookie: the password is chosen there (issue 22 item 3).
  expect((await call('POST', '/api/accounts/verify', { token: new URL(link).searchParams.get('token'), password: PASSWORD })).status).toBe(200);
  const session = await call('POST', '/api/sessions', { email, password: PASSWORD });
  return { email, accountId: String(session.body['accountId']), token: String(session.body['accessToken']) };
}

/** A verified seller with a registered key and one uploaded master. */
async function sellerWithMaster(name: string): Promise<{ seller: Awaited<ReturnType<typeof account>>; masterId: string }> {
  const seller = await account(name);
  const at = (file: string) => join(root, `${name}-${file}`);
  const model = await writeModelPackage(at('model'));
  expect((await iki(['keygen', '-o', at('seller.key')])).code).toBe(0);
  const registered = await iki(['register-key', '-k', at('seller.key'), '--service', service.url, '--token', seller.token]);
  expect(registered.code, registered.err).toBe(0);
  const packed = await iki(['pack', model.dir, '-k', at('seller.key'), '--service', service.url, '-o', at('m.ikm')]);
  expect(packed.code, packed.err).toBe(0);
  const upload = await call('POST', '/api/licenses/masters', undefined, seller.token, 'application/vnd.iki.model', await readFile(at('m.ikm')));
  expect(upload.status).toBe(201);
  return { seller, masterId: String(upload.body['masterId']) };
}

describe('iki api-keys and iki licenses', () => {
  it('makes a key once, sells with it idempotently, searches, suspends, reinstates and revokes; a revoked key stops', async () => {
    const { seller, masterId } = await sellerWithMaster('sella');
    const buyer = await account('bram');

    const made = await iki(['api-keys', 'create', '--name', 'shop server', '--service', service.url, '--token', seller.token]);
    expect(made.code, made.err).toBe(0);
    const secret = made.out.split('\n')[0] as string;
    expect(secret).toMatch(/^iki_sk_[A-Za-z0-9_-]{43}$/);
    expect(made.out).toContain('shown only this once');
    const listed = await iki(['api-keys', 'list', '--service', service.url, '--token', seller.token, '--json']);
    const key = JSON.parse(listed.out).apiKeys[0];
    expect(key).toMatchObject({ name: 'shop server', scopes: ['licenses:write', 'licenses:read', 'masters:read'] });
    expect(listed.out).not.toContain(secret);
    expectFailure(await iki(['api-keys', 'create', '--name', 'x', '--service', service.url, '--token', secret]), 'API_KEY_NOT_ALLOWED');

    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const hooked = await iki(['webhooks', 'create', '--url', hookUrl, '--event', 'license.created', '--event', 'license.suspended',
      '--service', service.url, '--token', seller.token]);
    expect(hooked.code, hooked.err).toBe(0);
    const hookSecret = hooked.out.split('\n')[0] as string;
    expect(hookSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(hooked.out).toContain('shown only this once');
    const webhookId = /created (we_[0-9a-f]{24})  enabled/u.exec(hooked.out)?.[1] as string;
    expect(webhookId).toBeDefined();

    const sell = ['licenses', 'create', masterId, '--buyer', buyer.email, '--ref', 'order-42', '--expires', '2031-01-31T00:00:00Z',
      '--idempotency-key', 'evt_42', '--service', service.url, '--json'];
    const first = await iki(sell, { env: { IKI_TOKEN: secret } });
    expect(first.code, first.err).toBe(0);
    const license = JSON.parse(first.out);
    expect(license).toMatchObject({ externalRef: 'order-42', expiresAt: '2031-01-31T00:00:00.000Z', state: 'active', replayed: false });
    const again = await iki(sell, { env: { IKI_TOKEN: secret } });
    expect(JSON.parse(again.out)).toMatchObject({ licenseId: license.licenseId, replayed: true });
    expectFailure(await iki(sell.map((a) => (a === 'order-42' ? 'order-43' : a)), { env: { IKI_TOKEN: secret } }),
      'IDEMPOTENCY_KEY_REUSED');

    const found = await iki(['licenses', 'list', '--ref', 'order-42', '--service', service.url, '--token', secret]);
    expect(found.out).toMatch(new RegExp(`^${license.licenseId as string}  active .* ${buyer.email}  ref order-42  until 2031-01-31T00:00:00.000Z\n$`, 'u'));
    const base = ['--service', service.url, '--token', secret];
    expect((await iki(['licenses', 'suspend', license.licenseId, '--reason', 'refund', ...base])).out).toContain('suspended');
    expect((await iki(['licenses', 'list', '--state', 'suspended', ...base])).out).toContain(license.licenseId);
    expect((await iki(['licenses', 'reinstate', license.licenseId, ...base])).out).toContain(' active ');
    expect((await iki(['licenses', 'revoke', license.licenseId, ...base])).out).toContain('revoked');
    expectFailure(await iki(['licenses', 'reinstate', license.licenseId, ...base]), 'LICENSE_STATE_CONFLICT');

    // The service's delivery loop sent the two subscribed events, signed with the endpoint's secret.
    const hook = ['--service', service.url, '--token', seller.token];
    for (let i = 0; i < 200 && received.length < 2; i += 1) await new Promise((r) => setTimeout(r, 25));
    expect(received.map((r) => JSON.parse(r.body).type).sort()).toEqual(['license.created', 'license.suspended']);
    for (const r of received) expect((await verifyWebhookSignature(hookSecret, r.signature, r.body)).valid).toBe(true);
    const log = await iki(['webhooks', 'deliveries', webhookId, ...hook]);
    expect(log.out).toMatch(/^[0-9]+  delivered  license\.(created|suspended)  evt_[0-9a-f]{32}  attempts 1  last \S+ 200$/mu);
    const deliveryId = log.out.split('  ')[0] as string;
    expect((await iki(['webhooks', 'resend', webhookId, deliveryId, ...hook])).out).toContain(`${deliveryId}  pending`);
    for (let i = 0; i < 200 && received.length < 3; i += 1) await new Promise((r) => setTimeout(r, 25));
    expect(received).toHaveLength(3);
    expect((await iki(['webhooks', 'disable', webhookId, ...hook])).out).toContain('disabled (disabled by the seller)');
    expect((await iki(['webhooks', 'list', ...hook])).out).toContain(`${webhookId}  disabled`);
    expect((await iki(['webhooks', 'delete', webhookId, ...hook])).out).toBe(`deleted webhook endpoint ${webhookId}\n`);
    expect((await iki(['webhooks', 'list', ...hook])).out).toBe('no webhook endpoints\n');

    const revoked = await iki(['api-keys', 'revoke', key.apiKeyId, '--service', service.url, '--token', seller.token]);
    expect(revoked.out).toContain(`revoked API key ${key.apiKeyId as string} "shop server"`);
    expectFailure(await iki(['licenses', 'list', ...base]), 'UNAUTHENTICATED');
  });

  it('iki shops connects Gumroad (its ping URL, shown once, makes a license) and Stripe, sets a secret, lists and disconnects', async () => {
    const { seller, masterId } = await sellerWithMaster('shopper');
    const auth = ['--service', service.url, '--token', seller.token];
    const gumroad = await iki(['shops', 'create', '--kind', 'gumroad', '--product', `pack-01=${masterId}`, '--on-refund', 'revoke', ...auth]);
    expect(gumroad.code, gumroad.err).toBe(0);
    expect(gumroad.out).toContain('shown only this once');
    const ping = /(http:\/\/\S+\/api\/shops\/(shop_[0-9a-f]{24})\/gumroad\/[A-Za-z0-9_-]{43})\n/u.exec(gumroad.out);
    expect(ping, gumroad.out).not.toBeNull();
    const [, pingUrl, gumroadId] = ping as unknown as [string, string, string];
    const fan = await account('fan');
    const sale = await fetch(pingUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ sale_id: 'S-1', product_id: 'pack-01', email: fan.email }).toString() });
    expect(sale.status, await sale.clone().text()).toBe(200);
    expect((await sale.json() as { action: string }).action).toBe('license_created');
    expect((await call('GET', '/api/licenses', undefined, fan.token)).body['licenses']).toMatchObject([{ masterId }]);

    const secretFile = join(root, 'stripe-secret');
    await writeFile(secretFile, 'whsec_test_one\n');
    const stripe = await iki(['shops', 'create', '--kind', 'stripe', '--product', `price_1=${masterId}`, '--product', `prod_2=${masterId}`,
      '--signing-secret-file', secretFile, ...auth, '--json']);
    expect(stripe.code, stripe.err).toBe(0);
    const made = JSON.parse(stripe.out);
    expect(made).toMatchObject({ kind: 'stripe', onRefund: 'suspend', signingSecretSet: true,
      products: { price_1: masterId, prod_2: masterId }, endpointPath: `/api/shops/${made.shopId as string}/stripe` });
    expect(stripe.out).not.toContain('whsec_test_one');
    await writeFile(secretFile, 'whsec_test_two\n');
    const rolled = await iki(['shops', 'set-secret', made.shopId, '--signing-secret-file', secretFile, ...auth]);
    expect(rolled.out).toContain(`${made.shopId as string}  stripe  on refund suspend`);
    expect(rolled.out).toContain('secret set');

    const listed = await iki(['shops', 'list', ...auth]);
    expect(listed.out).toContain(`${gumroadId}  gumroad  on refund revoke  pack-01=${masterId}`);
    expect(listed.out).toContain(`${service.url}/api/shops/${made.shopId as string}/stripe`);
    expect(listed.out).not.toMatch(/gumroad\/[A-Za-z0-9_-]{43}/u);
    expect((await iki(['shops', 'delete', gumroadId, ...auth])).out).toBe(`disconnected shop ${gumroadId}\n`);
    expect((await iki(['shops', 'delete', made.shopId, ...auth])).code).toBe(0);
    expect((await iki(['shops', 'list', ...auth])).out).toBe('no shops connected\n');
    expectFailure(await iki(['shops', 'delete', gumroadId, ...auth]), 'SHOP_NOT_FOUND');
  });

  it('refuses malformed arguments before any request', async () => {
    const nowhere = ['--service', 'http://127.0.0.1:9', '--token', 't'];
    const master = `mst_${'0'.repeat(32)}`;
    expectFailure(await iki(['shops', 'create', '--kind', 'etsy', '--product', `p=${master}`, ...nowhere]), 'USAGE', 2);
    expectFailure(await iki(['shops', 'create', '--kind', 'stripe', ...nowhere]), 'USAGE', 2);
    expectFailure(await iki(['shops', 'create', '--kind', 'stripe', '--product', 'p=mst_1', ...nowhere]), 'USAGE', 2);
    expectFailure(await iki(['shops', 'create', '--kind', 'stripe', '--product', `p=${master}`, '--product', `p=${master}`, ...nowhere]), 'USAGE', 2);
    expectFailure(await iki(['shops', 'create', '--kind', 'stripe', '--product', `p=${master}`, '--on-refund', 'refund', ...nowhere]), 'USAGE', 2);
    expectFailure(await iki(['shops', 'create', '--kind', 'gumroad', '--product', `p=${master}`, '--signing-secret-file', '/dev/null',
      ...nowhere]), 'USAGE', 2);
    const many = Array.from({ length: 101 }, (_, i) => ['--product', `p${i}=${master}`]).flat();
    expectFailure(await iki(['shops', 'create', '--kind', 'stripe', ...many, ...nowhere]), 'USAGE', 2);
    expectFailure(await iki(['shops', 'set-secret', `shop_${'0'.repeat(24)}`, ...nowhere]), 'USAGE', 2);
    expectFailure(await iki(['shops', 'set-secret', `shop_${'0'.repeat(24)}`, '--signing-secret-file', join(root, 'absent'), ...nowhere]), 'USAGE', 2);
    expectFailure(await iki(['shops', 'delete', 'shop_1', ...nowhere]), 'USAGE', 2);
    expectFailure(await iki(['licenses', 'create', 'nope', '--buyer', 'a@b.cd', '--service', 'http://127.0.0.1:9']), 'USAGE', 2);
    expectFailure(await iki(['licenses', 'create', `mst_${'0'.repeat(32)}`, '--buyer', 'a@b.cd', '--expires', 'tomorrow',
      '--service', 'http://127.0.0.1:9', '--token', 't']), 'USAGE', 2);
    expectFailure(await iki(['api-keys', 'create', '--name', 'x', '--scope', 'admin', '--service', 'http://127.0.0.1:9', '--token', 't']), 'USAGE', 2);
    expectFailure(await iki(['licenses', 'suspend', 'xyz', '--service', 'http://127.0.0.1:9', '--token', 't']), 'USAGE', 2);
    expectFailure(await iki(['licenses', 'frobnicate']), 'USAGE', 2);
    expectFailure(await iki(['webhooks', 'create', '--url', 'https://shop.example/hook', '--event', 'sale.made',
      '--service', 'http://127.0.0.1:9', '--token', 't']), 'USAGE', 2);
    expectFailure(await iki(['webhooks', 'create', '--url', 'https://shop.example/hook', '--service', 'http://127.0.0.1:9', '--token', 't']), 'USAGE', 2);
    expectFailure(await iki(['webhooks', 'resend', 'we_1', '5', '--service', 'http://127.0.0.1:9', '--token', 't']), 'USAGE', 2);
  });
});
