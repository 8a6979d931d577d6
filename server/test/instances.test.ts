/**
 * Issue 13 "Must show": two service processes (`server/dist/main.js`) on one throwaway
 * PostgreSQL database, sharing the root secret, the public URL and the masters' directory
 * (IKI_BLOB_DIR_SHARED=1). A token from one works on the other; 50 concurrent key releases for
 * one license split across both give exactly 20 successes; a revocation on one is refused by
 * the other on the next request; both serve byte-identical copies with one ETag. Then kill -9
 * during a master upload and during a copy download (no partial master, no temporary file,
 * exact counts, the retries succeed) and SIGTERM during a download (it completes).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64Url, loadWasm, PlayerSession, toBase64Url } from '@iki/core';
import { freshPostgres, postgresServer } from './helpers/databases.js';
import { buildModel, client, modelPackage, registeredKey, verifiedUser, type Call, type User } from './helpers/flow.js';
import { startChildService, type ChildService } from './helpers/child-service.js';

const skip = postgresServer() === '';
const NOISE_BYTES = 24 * 1024 * 1024;

/** A download that stops after its first piece until `resume()`. */
function pausedDownload(url: string, token: string): { started: Promise<void>; resume(): void; done: Promise<Buffer> } {
  let response: IncomingMessage | undefined;
  let started!: () => void;
  const first = new Promise<void>((resolve) => { started = resolve; });
  const done = new Promise<Buffer>((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      response = res;
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => {
        if (parts.length === 0) {
          res.pause();
          started();
        }
        parts.push(part);
      });
      res.on('end', () => (res.complete ? resolve(Buffer.concat(parts)) : reject(new Error('cut short'))));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('aborted')));
    });
    req.on('error', reject);
    req.end();
  });
  done.catch(() => {});
  return { started: first, resume: () => response?.resume(), done };
}

async function waitFor(what: string, test: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(skip)('two service processes on one PostgreSQL', () => {
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  let dataDir: string;
  let env: Record<string, string>;
  let a: ChildService;
  let b: ChildService;
  let callA: Call;
  let callB: Call;
  let seller: User;
  let buyer: User;
  let master: Uint8Array;
  let masterId: string;
  const count = async (sql: string, params: unknown[] = []) =>
    Number((await pg.db.query<{ n: string }>(sql, params)).rows[0]?.n);
  const newLicense = async (): Promise<string> => {
    const made = await callB('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token,
      json: { accountId: buyer.accountId } });
    expect(made.status).toBe(201);
    return made.body.licenseId as string;
  };

  beforeAll(async () => {
    pg = await freshPostgres();
    dataDir = await mkdtemp(join(tmpdir(), 'iki-instances-'));
    env = { DATABASE_URL: pg.url, IKI_ROOT_SECRET: randomBytes(32).toString('base64url'),
      IKI_PUBLIC_URL: 'http://iki.test', IKI_DATA_DIR: dataDir, IKI_BLOB_DIR_SHARED: '1', IKI_WORKERS: '1',
      IKI_DRAIN_SECONDS: '30' };
    [a, b] = await Promise.all([startChildService(env), startChildService(env)]);
    callA = client(a.url);
    callB = client(b.url);
    await loadWasm();
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.kill9(), b?.kill9()]);
    await pg?.drop();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('share tokens, key-release limits, revocations and copies', async () => {
    seller = await verifiedUser(callA, a.logs, 'Seller');
    buyer = await verifiedUser(callB, b.logs, 'Buyer');
    // A token issued by A works on B, and B's on A.
    expect((await callB('GET', '/api/me', { token: seller.token })).body.accountId).toBe(seller.accountId);
    expect((await callA('GET', '/api/me', { token: buyer.token })).body.accountId).toBe(buyer.accountId);

    const { key, signer } = await registeredKey(callB, seller);
    const keys = (await callA('GET', '/api/keys/service')).body as Record<string, string>;
    expect((await callB('GET', '/api/keys/service')).body).toEqual(keys);
    const pkg = await modelPackage(await mkdtemp(join(dataDir, 'model-')));
    // Incompressible bytes, so that a copy is larger than what the loopback's socket buffers
    // hold: a paused download then really holds the service mid-stream.
    pkg.files.set('noise.bin', new Uint8Array(randomBytes(NOISE_BYTES)));
    master = await buildModel(pkg, { key, signer, recipients: [fromBase64Url(keys['x25519PublicKey'] as string, 32)] });
    const upload = await callA('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: master });
    expect(upload.status).toBe(201);
    masterId = upload.body.masterId as string;
    const licenseId = await newLicense();

    const [copyA, copyB] = await Promise.all([callA, callB].map((call) =>
      call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token })));
    expect([copyA?.status, copyB?.status]).toEqual([200, 200]);
    expect(copyA?.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
    expect(copyB?.headers.get('etag')).toBe(copyA?.headers.get('etag'));
    expect(Buffer.from(copyB!.bytes).equals(Buffer.from(copyA!.bytes))).toBe(true);

    // 50 releases at once, alternating between the instances: exactly the 20 of the limit.
    const session = PlayerSession.create();
    const publicKey = toBase64Url(session.publicKey);
    session.free();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      (i % 2 === 0 ? callA : callB)('POST', `/api/licenses/${licenseId}/key`, { token: buyer.token, json: { publicKey } })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    expect(answers.filter((r) => r.status === 429).every((r) => r.body.error.code === 'RATE_LIMITED')).toBe(true);
    expect(await count('SELECT count(*) AS n FROM key_releases WHERE license_id = $1', [licenseId])).toBe(20);
    // The metrics of the two instances add up to the same: 20 released, 30 refused.
    const released = await Promise.all([a, b].map(async (s) => {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      const value = (outcome: string) => Number(new RegExp(`^iki_key_releases_total\\{outcome="${outcome}"\\} ([0-9]+)$`, 'm')
        .exec(text)?.[1] ?? 0);
      return [value('released'), value('RATE_LIMITED')];
    }));
    expect(released.reduce((sum, [r = 0]) => sum + r, 0)).toBe(20);
    expect(released.reduce((sum, [, l = 0]) => sum + l, 0)).toBe(30);

    // A revocation on A is refused by B on the very next request, also when B released that
    // license's key before (and keeps the license's master in memory since).
    const other = await newLicense();
    expect((await callB('POST', `/api/licenses/${other}/key`, { token: buyer.token, json: { publicKey } })).status).toBe(200);
    expect((await callA('POST', `/api/licenses/${other}/revoke`, { token: seller.token, json: {} })).status).toBe(200);
    const refused = await callB('POST', `/api/licenses/${other}/key`, { token: buyer.token, json: { publicKey } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('LICENSE_REVOKED');
    expect((await callB('GET', `/api/licenses/${other}/model`, { token: buyer.token })).body.error.code).toBe('LICENSE_REVOKED');

    // A session ended on A stops key releases on B at once: the release checks the session in
    // its own statement, with a still unexpired access token.
    const third = await newLicense();
    const signIn = await callA('POST', '/api/sessions',
      { json: { email: buyer.email, password: 'correct horse battery staple', refreshTokenIn: 'body' } });
    expect(signIn.status).toBe(201);
    const ended = { token: String(signIn.body.accessToken), json: { publicKey } };
    expect((await callB('POST', `/api/licenses/${third}/key`, ended)).status).toBe(200);
    expect((await callA('POST', '/api/sessions/sign-out', { json: { refreshToken: signIn.body.refreshToken } })).status).toBe(200);
    const signedOut = await callB('POST', `/api/licenses/${third}/key`, ended);
    expect(signedOut.status).toBe(401);
    expect(signedOut.body.error.code).toBe('UNAUTHENTICATED');
  }, 180_000);

  it('leave nothing behind after kill -9 during an upload and a download, and the retries succeed', async () => {
    expect(masterId).toBeDefined();
    const incoming = join(dataDir, 'masters', '.incoming');
    const pending = async () => (await readdir(incoming).catch(() => [] as string[])).length;
    // kill -9 while A receives a master: half the body sent, its temporary file exists.
    const upload = request(`${a.url}/api/licenses/masters`, { method: 'POST', headers: {
      authorization: `Bearer ${seller.token}`, 'content-type': 'application/vnd.iki.model', 'content-length': master.length } });
    upload.on('error', () => {});
    upload.write(master.subarray(0, master.length >> 1));
    await waitFor('the upload to reach its temporary file', async () => (await pending()) > 0);
    await a.kill9();
    a = await startChildService(env);
    callA = client(a.url);
    expect(await pending()).toBe(0);
    expect(await count('SELECT count(*) AS n FROM masters')).toBe(1);
    const listed = await callB('GET', '/api/licenses/masters', { token: seller.token });
    expect(listed.body.masters.map((m: { masterId: string }) => m.masterId)).toEqual([masterId]);
    const retried = await callA('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: master });
    expect(retried.status).toBe(201);
    expect(await count('SELECT count(*) AS n FROM masters')).toBe(2);

    // kill -9 while B streams a copy: the download counts once, the retry gets the same bytes.
    const licenseId = await newLicense();
    const whole = await callA('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token });
    expect(whole.status).toBe(200);
    const cut = pausedDownload(`${b.url}/api/licenses/${licenseId}/model`, buyer.token);
    await cut.started;
    await b.kill9();
    cut.resume();
    await expect(cut.done).rejects.toThrow();
    b = await startChildService(env);
    callB = client(b.url);
    const again = await callB('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token });
    expect(again.status).toBe(200);
    expect(Buffer.from(again.bytes).equals(Buffer.from(whole.bytes))).toBe(true);
    expect(again.headers.get('etag')).toBe(whole.headers.get('etag'));
    expect(await count(`SELECT count(*) AS n FROM usage_actions WHERE kind = 'copy' AND license_id = $1`, [licenseId])).toBe(3);
    expect(await count('SELECT count(*) AS n FROM key_releases WHERE license_id = $1', [licenseId])).toBe(0);
  }, 180_000);

  it('finish a running download on SIGTERM: /readyz 503 and new requests refused for the delay, then closed', async () => {
    // Issue 23 item 3: B drains with a load balancer's delay.
    await b.kill9();
    b = await startChildService({ ...env, IKI_DRAIN_DELAY_SECONDS: '2' });
    callB = client(b.url);
    const licenseId = await newLicense();
    const whole = await callA('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token });
    expect(whole.status).toBe(200);
    const running = pausedDownload(`${b.url}/api/licenses/${licenseId}/model`, buyer.token);
    await running.started;
    const exit = b.term();
    await waitFor('B to log the signal', async () => b.logs.some((l) => l.message === 'SIGTERM: stopping'));
    // During the delay the port is open: /readyz says draining, new work is refused cleanly.
    const ready = await fetch(`${b.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('connection')).toBe('close');
    expect(await ready.json()).toMatchObject({ status: 'draining' });
    const refused = await fetch(`${b.url}/api/licenses/${licenseId}`, { headers: { authorization: `Bearer ${buyer.token}` } });
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, '5']);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('SERVICE_DRAINING');
    await waitFor('B to stop accepting', async () => fetch(`${b.url}/healthz`).then(() => false, () => true));
    running.resume();
    expect((await running.done).equals(Buffer.from(whole.bytes))).toBe(true);
    expect(await exit).toBe(0);
    expect(b.logs.find((l) => l.message === 'iki service stopped')?.fields).toMatchObject({ drained: true });
    // The answer was logged once, whole, with its request id.
    const line = b.logs.find((l) => l.message === 'request' && l.fields['path'] === `/api/licenses/${licenseId}/model`);
    expect(line?.fields).toMatchObject({ status: 200, route: '/api/licenses/:licenseId/model', bytesOut: whole.bytes.length });
    expect(line?.fields['aborted']).toBeUndefined();
    b = await startChildService(env);
  }, 120_000);
});
