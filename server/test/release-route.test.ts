/**
 * The key release route keeps every check it has (issue 28 item 1), now that it is answered in
 * front of Express (routes/release-fast.ts). On embedded PGlite and on PostgreSQL, two services
 * started with `serve()` run the same script: one with the release's own handler (the default)
 * and one with Express alone (the path as it was). The script goes through every outcome: an
 * ended session, an unverified address, a license of someone else and one of the caller's own
 * sales, revoked, suspended and expired licenses, both limits (per license and per account),
 * bad tokens and bodies, a body too large, a stalled body (the transfer guard's 408), the
 * per-client cap behind a trusted proxy (503), and the drain (503). Each answer is checked
 * for what it must say, and the two services' answers must be the same in status, headers
 * and body (request ids, sealed bytes and clock-dependent numbers aside). Then each service
 * must have counted the granted releases on the licenses, written one event per release, one
 * access-log line per request with its request id and code, and the same key-release metrics.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type RunningServer } from '../src/main.js';
import { captureLogger, deviceKey, playerKey, proofFor, TEST_HASHING, type LogLine } from './helpers/app.js';
import { freshPostgres, postgresServer, preparedDataDir } from './helpers/databases.js';
import { fakeCrypto, fakeMaster } from './helpers/fake-crypto.js';
import { rawRequest } from './helpers/raw-http.js';

const SERVICE = 'http://iki.test';
const ROUTE = '/api/licenses/:licenseId/key';
/** Response headers compared between the two paths (Date and the request id's value aside). */
const IGNORED = new Set(['date', 'x-request-id']);

interface Reply { status: number; headers: Record<string, string>; body: any; text: string }
interface User { accountId: string; token: string }

/** One step of the script and what came back, normalised for the comparison. */
interface Step { name: string; status: number; headers: Record<string, string>; body: unknown }

const engines = [
  { name: 'PGlite', skip: false, env: async () => ({ env: {} as Record<string, string>, drop: async () => {} }) },
  { name: 'PostgreSQL', skip: postgresServer() === '', env: async () => {
    const pg = await freshPostgres();
    return { env: { DATABASE_URL: pg.url, IKI_ROOT_SECRET: randomBytes(32).toString('base64url'), IKI_BLOB_STORE: 'postgres' },
      drop: () => pg.drop() };
  } },
];

/** A service of one engine, its own database, the script's users and licenses. */
class Subject {
  logs: LogLine[] = [];
  running!: RunningServer;
  drop!: () => Promise<void>;
  dir!: string;
  steps: Step[] = [];

  async start(engine: (typeof engines)[number], fast: boolean): Promise<void> {
    const database = await engine.env();
    this.dir = await preparedDataDir(await mkdtemp(join(tmpdir(), 'iki-release-route-')), database.env);
    this.drop = database.drop;
    this.running = await serve({ port: 0, dataDir: this.dir, logger: captureLogger(this.logs), releaseFastPath: fast,
      crypto: async () => fakeCrypto(),
      env: { ...database.env, IKI_PUBLIC_URL: SERVICE, IKI_RELEASES_PER_LICENSE_PER_HOUR: '3', IKI_RELEASES_PER_USER_PER_HOUR: '5',
        IKI_BODY_TIMEOUT_SECONDS: '1', IKI_MAX_CONNECTIONS_PER_CLIENT: '2', IKI_TRUST_PROXY: 'loopback', IKI_WORKERS: '1' },
      config: { passwordHashing: TEST_HASHING } });
  }

  async stop(): Promise<void> {
    await this.running.close();
    await this.drop();
    await rm(this.dir, { recursive: true, force: true });
  }

  async call(method: string, path: string, opts: { token?: string; json?: unknown; body?: string;
    headers?: Record<string, string> } = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`;
    let body = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${this.running.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const text = await response.text();
    return { status: response.status, headers: Object.fromEntries(response.headers), text,
      body: text.startsWith('{') ? JSON.parse(text) : undefined };
  }

  async user(name: string): Promise<User> {
    const email = `${name.toLowerCase()}-${randomBytes(3).toString('hex')}@example.com`;
    const password = 'correct horse battery staple';
    expect((await this.call('POST', '/api/accounts', { json: { email, password, name } })).status).toBe(202);
    const link = this.logs.filter((l) => l.fields['to'] === email).at(-1)?.fields['link'];
    const token = new URL(String(link)).searchParams.get('token');
    expect((await this.call('POST', '/api/accounts/verify', { json: { token, password } })).status).toBe(200);
    const session = await this.call('POST', '/api/sessions', { json: { email, password } });
    expect(session.status).toBe(201);
    return { accountId: session.body.accountId, token: session.body.accessToken };
  }

  /** An account an earlier version left unverified, with a session (as test/helpers/app.ts `newUser`). */
  async unverifiedUser(): Promise<User> {
    const accountId = `acct_${randomBytes(16).toString('hex')}`;
    await this.running.repo.createAccount({ id: accountId, email: `${accountId}@example.com`, name: 'U', passwordHash: 'x',
      createdAt: new Date() });
    const session = await this.running.services.sessions.open(accountId, 'test');
    return { accountId, token: session.accessToken };
  }

  /** A release, recorded as a step of the script. */
  async release(name: string, licenseId: string, opts: Parameters<Subject['call']>[2] = {}, method = 'POST'): Promise<Reply> {
    const reply = await this.call(method, `/api/licenses/${licenseId}/key`, opts);
    this.record(name, reply);
    return reply;
  }

  record(name: string, reply: Pick<Reply, 'status' | 'headers' | 'body'>): void {
    // A refusal before the body is read closes the connection unless the body had arrived
    // whole by then (errors.ts): a race with the client's second packet on either path.
    const racy = name === 'bad token' || name === 'wrong media type' ? new Set(['connection', 'keep-alive']) : new Set();
    const headers = Object.fromEntries(Object.entries(reply.headers).filter(([k]) => !IGNORED.has(k) && !racy.has(k))
      .map(([k, v]) => [k, k === 'ratelimit-reset' || k === 'retry-after' ? 'n' : v]));
    const requestId = reply.headers['x-request-id'];
    expect(requestId, name).toMatch(/^req_[0-9a-f]{24}$/);
    const body = JSON.parse(JSON.stringify(reply.body ?? null, (k, v: unknown) => {
      if (k === 'requestId') {
        expect(v, name).toBe(requestId);
        return 'REQ';
      }
      if (k === 'ephemeralPublicKey' || k === 'nonce' || k === 'sealedKey') return `${String(v).length} chars`;
      if (k === 'retryAfterSeconds') return 'n';
      if (k === 'expiresAt') return 'DATE';
      if (k === 'licenseId') return 'ID';
      return v;
    }));
    this.steps.push({ name, status: reply.status, headers, body });
  }
}

describe.each(engines)('the key release route on $name', (engine) => {
  const fast = new Subject();
  const express = new Subject();

  beforeAll(async () => {
    if (engine.skip) return;
    await fast.start(engine, true);
    await express.start(engine, false);
  }, 120_000);
  afterAll(async () => {
    if (engine.skip) return;
    await fast.stop();
    await express.stop();
  });

  /** The script: every outcome of the route, in one order, on one service. */
  async function script(s: Subject): Promise<Record<string, string>> {
    const seller = await s.user('Seller');
    const buyer = await s.user('Buyer');
    const stranger = await s.user('Stranger');
    const leaver = await s.user('Leaver');
    const unverified = await s.unverifiedUser();
    const key = deviceKey();
    expect((await s.call('POST', '/api/keys/signing', { token: seller.token,
      json: { publicKey: key.b64, proof: proofFor(key, seller.accountId), name: 'laptop' } })).status).toBe(201);
    const upload = await fetch(`${s.running.url}/api/licenses/masters`, { method: 'POST',
      headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/vnd.iki.model' },
      body: fakeMaster({ name: 'Haru', signer: key.publicKey }) });
    expect(upload.status).toBe(201);
    const { masterId } = await upload.json() as { masterId: string };
    const make = async (to: User, extra: Record<string, unknown> = {}) => {
      const made = await s.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token,
        json: { accountId: to.accountId, ...extra } });
      expect(made.status, made.text).toBe(201);
      return made.body.licenseId as string;
    };
    const ids = { a: await make(buyer), b: await make(buyer), revoked: await make(buyer), suspended: await make(buyer),
      leaver: await make(leaver), expired: '' };
    const expiresAt = Date.now() + 2000;
    ids.expired = await make(buyer, { expiresAt: new Date(expiresAt).toISOString() });
    expect((await s.call('POST', `/api/licenses/${ids.revoked}/revoke`, { token: seller.token, json: { reason: 'refund' } })).status).toBe(200);
    expect((await s.call('POST', `/api/licenses/${ids.suspended}/suspend`, { token: seller.token })).status).toBe(200);
    const apiKey = (await s.call('POST', '/api/api-keys', { token: seller.token,
      json: { name: 'shop', scopes: ['licenses:write', 'licenses:read'] } })).body.secret as string;
    const pk = () => ({ publicKey: playerKey() });
    const code = async (name: string, id: string, opts: Parameters<Subject['call']>[2], status: number, expected: string) => {
      const reply = await s.release(name, id, opts);
      expect([reply.status, reply.body?.error?.code], name).toEqual([status, expected]);
      return reply;
    };

    // Granted: counted, with the RateLimit headers of the binding limit, sealed to the key.
    const first = await s.release('granted 1', ids.a, { token: buyer.token, json: pk(),
      headers: { 'x-iki-device': 'dEvIcE_iD-0123456789ab' } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ licenseId: ids.a, algorithm: 'X25519-HKDF-SHA256-XChaCha20Poly1305', releaseCount: 1 });
    expect(Object.keys(first.body)).toEqual(['licenseId', 'algorithm', 'ephemeralPublicKey', 'nonce', 'sealedKey', 'releaseCount']);
    expect(first.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store',
      'x-content-type-options': 'nosniff', vary: 'Origin', 'ratelimit-limit': '3', 'ratelimit-remaining': '2',
      'ratelimit-policy': '3;w=3600;comment="per license", 5;w=3600;comment="per user"' });
    expect(first.headers['content-length']).toBe(String(Buffer.byteLength(first.text)));
    // The service's own origin is same-origin; a charset parameter is taken.
    expect((await s.release('granted 2, own origin', ids.a, { token: buyer.token, json: pk(),
      headers: { origin: SERVICE, 'content-type': 'application/json; charset=utf-8' } })).body.releaseCount).toBe(2);
    expect((await s.release('granted 3', ids.a, { token: buyer.token, json: pk() })).body.releaseCount).toBe(3);
    // Issue 29: the release counts its client's address prefix and the player's device on either path.
    const activity = (await s.call('GET', `/api/licenses/${ids.a}/activity`, { token: seller.token })).body as
      { series: { releases: number; addresses: number; devices: number }[] };
    const sum = (k: 'releases' | 'addresses' | 'devices') => activity.series.reduce((n, b) => n + b[k], 0);
    expect([sum('releases'), sum('addresses'), sum('devices')]).toEqual([3, 1, 1]);
    const limited = await code('per-license limit', ids.a, { token: buyer.token, json: pk() }, 429, 'RATE_LIMITED');
    expect(limited.body.error.details.scope).toBe('license');
    expect(limited.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect((await s.release('granted 4', ids.b, { token: buyer.token, json: pk() })).body.releaseCount).toBe(1);
    expect((await s.release('granted 5', ids.b, { token: buyer.token, json: pk() })).body.releaseCount).toBe(2);
    expect((await code('per-account limit', ids.b, { token: buyer.token, json: pk() }, 429, 'RATE_LIMITED')).body.error.details.scope).toBe('user');

    // The license's state, in the order iki_release checks it.
    await code('revoked', ids.revoked, { token: buyer.token, json: pk() }, 403, 'LICENSE_REVOKED');
    await code('suspended', ids.suspended, { token: buyer.token, json: pk() }, 403, 'LICENSE_SUSPENDED');
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now() + 50)));
    await code('expired', ids.expired, { token: buyer.token, json: pk() }, 403, 'LICENSE_EXPIRED');
    await code('another buyer\'s license', ids.a, { token: stranger.token, json: pk() }, 404, 'LICENSE_NOT_FOUND');
    await code('the seller', ids.a, { token: seller.token, json: pk() }, 403, 'FORBIDDEN');
    await code('no such license', '0123456789abcdef', { token: buyer.token, json: pk() }, 404, 'LICENSE_NOT_FOUND');

    // The caller: session, verified address, token.
    expect((await s.call('POST', '/api/sessions/revoke-all', { token: leaver.token })).status).toBeLessThan(300);
    const ended = await code('ended session', ids.leaver, { token: leaver.token, json: pk() }, 401, 'UNAUTHENTICATED');
    expect(ended.headers['www-authenticate']).toBe('Bearer realm="iki", error="invalid_token"');
    await code('unverified address', ids.a, { token: unverified.token, json: pk() }, 403, 'EMAIL_NOT_VERIFIED');
    const bad = await code('bad token', ids.a, { token: 'abc.def.ghi', json: pk() }, 401, 'UNAUTHENTICATED');
    expect(bad.headers['www-authenticate']).toBe('Bearer realm="iki", error="invalid_token"');
    expect((await code('no token', ids.a, { json: pk() }, 401, 'UNAUTHENTICATED')).headers['www-authenticate']).toBe('Bearer realm="iki"');
    await code('an API key', ids.a, { token: apiKey, json: pk() }, 403, 'API_KEY_NOT_ALLOWED');

    // The body.
    await code('no body', ids.a, { token: buyer.token }, 400, 'VALIDATION_FAILED');
    await code('not JSON', ids.a, { token: buyer.token, body: '{"publicKey":', headers: { 'content-type': 'application/json' } }, 400, 'MALFORMED_JSON');
    await code('wrong media type', ids.a, { token: buyer.token, body: 'x', headers: { 'content-type': 'text/plain' } }, 415, 'UNSUPPORTED_MEDIA_TYPE');
    await code('short key', ids.a, { token: buyer.token, json: { publicKey: 'A'.repeat(42) } }, 400, 'VALIDATION_FAILED');
    await code('extra field', ids.a, { token: buyer.token, json: { ...pk(), extra: 1 } }, 400, 'VALIDATION_FAILED');
    const large = await code('body too large', ids.a, { token: buyer.token, json: { publicKey: 'A'.repeat(70_000) } }, 413, 'PAYLOAD_TOO_LARGE');
    expect(large.headers['connection']).toBe('close');

    // What Express still answers: other shapes, other sites, other methods.
    await code('malformed id', 'xyz', { token: buyer.token, json: pk() }, 404, 'LICENSE_NOT_FOUND');
    await code('another site', ids.a, { token: buyer.token, json: pk(), headers: { origin: 'https://evil.example' } }, 403, 'ORIGIN_NOT_ALLOWED');
    const get = await s.release('GET', ids.a, { token: buyer.token }, 'GET');
    expect([get.status, get.headers['allow']]).toEqual([405, 'POST']);

    // The transfer guard: a body that stops is cut (408); behind a trusted proxy, a third
    // request in flight from one client is refused (503), here while two stall.
    const stalled = (forwardedFor: string) => rawRequest(s.running.url, { method: 'POST', path: `/api/licenses/${ids.b}/key`,
      headers: { authorization: `Bearer ${buyer.token}`, 'content-type': 'application/json', 'content-length': '60',
        'x-forwarded-for': forwardedFor }, first: Buffer.from('{"publicKey":'), waitMs: 4000 });
    const held = [stalled('203.0.113.7'), stalled('203.0.113.7')];
    await new Promise((r) => setTimeout(r, 200));
    const third = await s.release('third in flight', ids.b, { token: buyer.token, json: pk(), headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect([third.status, third.body?.error?.code]).toEqual([503, 'TOO_MANY_CONNECTIONS']);
    for (const answer of await Promise.all(held)) {
      expect([answer.status, answer.body?.error?.code, answer.closed]).toEqual([408, 'REQUEST_TIMEOUT', true]);
      s.record('stalled body', answer);
    }
    return ids;
  }

  it.skipIf(engine.skip)('answers every outcome as the Express path did, and counts, records, logs and measures each', async () => {
    const idsFast = await script(fast);
    await script(express);
    expect(fast.steps.map((x) => x.name)).toEqual(express.steps.map((x) => x.name));
    for (const [i, step] of fast.steps.entries()) expect(step, step.name).toEqual(express.steps[i]);
    // The fast service answered the plain releases itself; the other never did.
    expect(fast.running.fastReleases()).toBeGreaterThanOrEqual(20);
    expect(express.running.fastReleases()).toBe(0);

    for (const s of [fast, express]) {
      const lines = s.logs.filter((l) => l.message === 'request' && l.fields['method'] === 'POST' && l.fields['route'] === ROUTE);
      // One access-log line per POST of the script with its id and code. The 405 GET, and the
      // refusals made before routing (another site's origin, the per-client cap), are `other`.
      const other = new Set(['GET', 'another site', 'third in flight']);
      expect(lines.length).toBe(s.steps.filter((x) => !other.has(x.name)).length);
      const others = s.logs.filter((l) => l.message === 'request' && l.fields['route'] === 'other'
        && [403, 405, 503].includes(Number(l.fields['status'])) && String(l.fields['path']).endsWith('/key'));
      expect(others.map((l) => l.fields['code']).sort()).toEqual(['METHOD_NOT_ALLOWED', 'ORIGIN_NOT_ALLOWED', 'TOO_MANY_CONNECTIONS']);
      const byId = new Map(lines.map((l) => [l.fields['requestId'], l.fields]));
      for (const step of s.steps) expect(step.status, step.name).toBeGreaterThan(0);
      for (const line of byId.values()) {
        expect(line['path']).toMatch(/^\/api\/licenses\/[0-9a-z]+\/key$/);
        expect(JSON.stringify(line)).not.toContain('Bearer');
      }
      const statuses = lines.map((l) => `${String(l.fields['status'])} ${String(l.fields['code'] ?? '')}`).sort();
      expect(statuses.filter((x) => x === '200 ').length).toBe(5);
      expect(statuses.filter((x) => x === '429 RATE_LIMITED').length).toBe(2);
      expect(statuses).toContain('403 LICENSE_REVOKED');
      expect(statuses).toContain('408 REQUEST_TIMEOUT');
      const metric = await s.running.metrics.keyReleases.get();
      const outcomes = Object.fromEntries(metric.values.map((v) => [String(v.labels['outcome']), v.value]));
      expect(outcomes).toMatchObject({ released: 5, RATE_LIMITED: 2, LICENSE_REVOKED: 1, LICENSE_SUSPENDED: 1,
        LICENSE_EXPIRED: 1, EMAIL_NOT_VERIFIED: 1, FORBIDDEN: 1, REQUEST_TIMEOUT: 2 });
    }
    const fastMetric = (await fast.running.metrics.keyReleases.get()).values;
    const expressMetric = (await express.running.metrics.keyReleases.get()).values;
    const sorted = (v: typeof fastMetric) => v.map((x) => `${String(x.labels['outcome'])}=${x.value}`).sort();
    expect(sorted(fastMetric)).toEqual(sorted(expressMetric));

    // Counted on the license, and one event per granted release.
    const buyerToken = (await fast.running.services.sessions.open(
      (await fast.running.repo.findLicense(idsFast['a'] as string))?.licenseeId as string, 'check')).accessToken;
    expect((await fast.call('GET', `/api/licenses/${idsFast['a']}`, { token: buyerToken })).body.releaseCount).toBe(3);
    expect((await fast.call('GET', `/api/licenses/${idsFast['b']}`, { token: buyerToken })).body.releaseCount).toBe(2);
    const events = (await fast.call('GET', `/api/licenses/${idsFast['a']}/events`, { token: buyerToken })).body.events as { kind: string }[];
    expect(events.filter((e) => e.kind === 'release').length).toBe(3);
  }, 120_000);

  it.skipIf(engine.skip)('refuses new releases while the instance drains (Express answers them)', async () => {
    const closing = fast.running.close({ delayMs: 1000, graceMs: 500 });
    fast.running.close = async () => {};
    await new Promise((r) => setTimeout(r, 150));
    // On a new connection: the drain closes idle keep-alive ones.
    const body = JSON.stringify({ publicKey: playerKey() });
    const reply = await rawRequest(fast.running.url, { method: 'POST', path: '/api/licenses/0123456789abcdef/key',
      headers: { authorization: 'Bearer abc.def.ghi', 'content-type': 'application/json', 'content-length': String(body.length) },
      first: Buffer.from(body), waitMs: 600 });
    expect([reply.status, reply.body?.error?.code, reply.headers['retry-after']]).toEqual([503, 'SERVICE_DRAINING', '5']);
    await closing;
  });
});
