/**
 * Issue 23 item 8 "Must show": two service processes (`server/dist/main.js`, the real crypto)
 * on one PostgreSQL and one S3 bucket (moto's server, one of this file's own so that stopping
 * it touches no other file), each with a data directory of its own. A master uploaded on A
 * (a multipart upload) is copied by B byte for byte with one ETag; the same bytes uploaded on B
 * share A's object and nothing stays under pending/, nor of an upload that fails its check;
 * deleting the last master of an object deletes the object. kill -9 during an upload leaves an unfinished multipart upload,
 * which the restarted instance aborts. The S3 server stopped: a copy and an upload answer 503
 * STORAGE_UNAVAILABLE with Retry-After and `/readyz` answers 503.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64Url, loadWasm } from '@iki/core';
import { startChildService, type ChildService } from './helpers/child-service.js';
import { freshPostgres, postgresServer } from './helpers/databases.js';
import { buildModel, client, modelPackage, registeredKey, verifiedUser, type Call, type User } from './helpers/flow.js';
import { startS3Server, type S3Server } from './helpers/global-s3.js';
import { freshBucket, keysIn, s3Endpoint, s3Env, uploadsIn } from './helpers/s3.js';

const skip = postgresServer() === '' || s3Endpoint() === '';
const MIB = 1024 * 1024;

describe.skipIf(skip)('two service processes on one PostgreSQL and one S3 bucket', () => {
  let s3: S3Server;
  let admin: S3Client;
  let bucket: string;
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  const dirs: string[] = [];
  let envA: Record<string, string>;
  let envB: Record<string, string>;
  let a: ChildService;
  let b: ChildService;
  let callA: Call;
  let callB: Call;
  let seller: User;
  let buyer: User;
  let master: Uint8Array;
  const keys = (prefix: string) => keysIn(admin, bucket, `iki/${prefix}`);
  const count = async (sql: string) => Number((await pg.db.query<{ n: string }>(sql)).rows[0]?.n);

  beforeAll(async () => {
    s3 = await startS3Server();
    const fresh = await freshBucket(s3.endpoint, { partBytes: 5 * MIB });
    admin = fresh.admin;
    bucket = fresh.settings.bucket;
    pg = await freshPostgres();
    const shared = { DATABASE_URL: pg.url, IKI_ROOT_SECRET: randomBytes(32).toString('base64url'),
      IKI_PUBLIC_URL: 'http://iki.test', IKI_WORKERS: '1', ...s3Env(fresh.settings) };
    for (let i = 0; i < 2; i += 1) dirs.push(await mkdtemp(join(tmpdir(), 'iki-s3-instances-')));
    envA = { ...shared, IKI_DATA_DIR: dirs[0] as string, IKI_INSTANCE_ID: 'a' };
    envB = { ...shared, IKI_DATA_DIR: dirs[1] as string, IKI_INSTANCE_ID: 'b' };
    [a, b] = await Promise.all([startChildService(envA), startChildService(envB)]);
    callA = client(a.url);
    callB = client(b.url);
    await loadWasm();
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.kill9(), b?.kill9()]);
    admin?.destroy();
    await s3?.stop();
    await pg?.drop();
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('share masters through the bucket: copies, dedupe, deletes', async () => {
    seller = await verifiedUser(callA, a.logs, 'Seller');
    buyer = await verifiedUser(callB, b.logs, 'Buyer');
    const { key, signer } = await registeredKey(callA, seller);
    const service = (await callA('GET', '/api/keys/service')).body as Record<string, string>;
    const pkg = await modelPackage(await mkdtemp(join(dirs[0] as string, 'model-')));
    // Past one 5 MiB part: the upload is a multipart upload.
    pkg.files.set('noise.bin', new Uint8Array(randomBytes(6 * MIB)));
    master = await buildModel(pkg, { key, signer, recipients: [fromBase64Url(service['x25519PublicKey'] as string, 32)] });
    const upload = (call: Call) => call('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: master });

    const first = await upload(callA);
    expect(first.status).toBe(201);
    const firstId = first.body.masterId as string;
    expect(await keys('masters/')).toEqual([`iki/masters/${firstId}.ikm`]);
    expect(await keys('pending/')).toEqual([]);
    // A master that fails its check leaves nothing in the bucket: no master object, no pending one.
    const bad = master.slice();
    bad[bad.length - 200] = (bad[bad.length - 200] as number) ^ 1;
    const refused = await callB('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: bad });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(await keys('')).toEqual([`iki/masters/${firstId}.ikm`]);
    expect(await uploadsIn(admin, bucket)).toEqual([]);
    // The same bytes on B: a second master sharing A's object.
    const second = await upload(callB);
    expect(second.status).toBe(201);
    const secondId = second.body.masterId as string;
    expect(second.body.duplicateOf.map((m: { masterId: string }) => m.masterId)).toEqual([firstId]);
    expect(await keys('masters/')).toEqual([`iki/masters/${firstId}.ikm`]);
    expect(await keys('pending/')).toEqual([]);
    expect(await uploadsIn(admin, bucket)).toEqual([]);

    // A license of the second master; A and B copy it byte for byte under one ETag.
    const made = await callB('POST', `/api/licenses/masters/${secondId}/licenses`, { token: seller.token,
      json: { accountId: buyer.accountId } });
    expect(made.status).toBe(201);
    const licenseId = made.body.licenseId as string;
    const [copyA, copyB] = await Promise.all([callA, callB].map((call) =>
      call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token })));
    expect([copyA?.status, copyB?.status]).toEqual([200, 200]);
    expect(copyB?.headers.get('etag')).toBe(copyA?.headers.get('etag'));
    expect(copyA!.bytes.length).toBeGreaterThan(6 * MIB);
    expect(Buffer.from(copyB!.bytes).equals(Buffer.from(copyA!.bytes))).toBe(true);

    // Deleting the first master keeps the object (the second uses it) and its copies go on.
    expect((await callA('DELETE', `/api/licenses/masters/${firstId}`, { token: seller.token })).status).toBe(204);
    expect(await keys('masters/')).toEqual([`iki/masters/${firstId}.ikm`]);
    const after = await callA('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token });
    expect(Buffer.from(after.bytes).equals(Buffer.from(copyA!.bytes))).toBe(true);

    // Other bytes (one PUT, below a part) get an object of their own, which goes with their
    // only master.
    pkg.files.delete('noise.bin');
    const other = await callB('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model',
      body: await buildModel(pkg, { key, signer, recipients: [fromBase64Url(service['x25519PublicKey'] as string, 32)] }) });
    expect(other.status).toBe(201);
    expect(await keys('masters/')).toEqual([`iki/masters/${firstId}.ikm`, `iki/masters/${other.body.masterId}.ikm`].sort());
    expect((await callA('DELETE', `/api/licenses/masters/${other.body.masterId}`, { token: seller.token })).status).toBe(204);
    expect(await keys('masters/')).toEqual([`iki/masters/${firstId}.ikm`]);
    expect(await count('SELECT count(*) AS n FROM masters')).toBe(1);
  }, 180_000);

  it('kill -9 during an upload: the restarted instance aborts the unfinished multipart upload', async () => {
    expect(master).toBeDefined();
    const masters = await count('SELECT count(*) AS n FROM masters');
    const upload = request(`${a.url}/api/licenses/masters`, { method: 'POST', headers: {
      authorization: `Bearer ${seller.token}`, 'content-type': 'application/vnd.iki.model', 'content-length': master.length } });
    upload.on('error', () => {});
    upload.write(master.subarray(0, master.length - 1000));
    await expect.poll(() => uploadsIn(admin, bucket), { timeout: 20_000 }).toEqual([expect.stringMatching(/^iki\/pending\/a\./)]);
    await a.kill9();
    a = await startChildService(envA);
    callA = client(a.url);
    expect(await uploadsIn(admin, bucket)).toEqual([]);
    expect(await keys('pending/')).toEqual([]);
    expect(await count('SELECT count(*) AS n FROM masters')).toBe(masters);
  }, 120_000);

  it('answer 503 STORAGE_UNAVAILABLE with Retry-After, and /readyz 503, while the S3 server is down', async () => {
    const licensed = await callA('GET', '/api/licenses', { token: buyer.token });
    const licenseId = (licensed.body.licenses as { licenseId: string }[])[0]?.licenseId;
    expect(licenseId).toBeDefined();
    expect((await fetch(`${b.url}/readyz`)).status).toBe(200);
    await s3.stop();
    const copy = await callB('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token });
    expect(copy.status).toBe(503);
    expect(copy.headers.get('retry-after')).toBe('5');
    expect(copy.body.error.code).toBe('STORAGE_UNAVAILABLE');
    const upload = await callA('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: master });
    expect(upload.status).toBe(503);
    expect(upload.body.error.code).toBe('STORAGE_UNAVAILABLE');
    const ready = await fetch(`${b.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toContain('blobs');
  }, 60_000);
});
