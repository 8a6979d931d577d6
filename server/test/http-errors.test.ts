/**
 * Malformed requests: bad JSON, unknown fields, oversize bodies, bad base64, wrong content
 * types. Each is a 4xx with the error body, and nothing changes in storage.
 */
import { readdir } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeMaster } from './helpers/fake-crypto.js';
import { newUser, playerKey, registerKey, scenario, startApp, type TestApp } from './helpers/app.js';

let app: TestApp;
let s: Awaited<ReturnType<typeof scenario>>;

async function state() {
  const files = await readdir(join(app.config.dataDir, 'masters')).catch(() => []);
  const incoming = await readdir(join(app.config.dataDir, 'masters', '.incoming')).catch(() => []);
  return {
    license: await app.repo.findLicense(s.licenseId),
    licenses: (await app.repo.listLicensesByMaster(s.masterId)).length,
    masters: await app.repo.listMastersBySeller(s.seller.accountId),
    events: (await app.repo.listEvents(s.licenseId, { limit: 1000, before: undefined })).length,
    files, incoming,
  };
}

beforeAll(async () => {
  app = await startApp({ config: { bodyLimits: { jsonBytes: 2048, masterBytes: 20_000, imageBytes: 4096 } } });
  s = await scenario(app);
});
afterAll(async () => {
  await app.close();
});

const keyPath = () => `/api/licenses/${s.licenseId}/key`;
const licensesPath = () => `/api/licenses/masters/${s.masterId}/licenses`;

describe('JSON bodies', () => {
  it.each([
    ['bad JSON', '{"publicKey": ', 'application/json', 400, 'MALFORMED_JSON'],
    ['bad UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), 'application/json', 400, 'MALFORMED_JSON'],
    ['wrong content type', JSON.stringify({ publicKey: 'x' }), 'text/plain', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['form body', 'publicKey=x', 'application/x-www-form-urlencoded', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['latin-1 charset', '{}', 'application/json; charset=iso-8859-1', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['oversize', JSON.stringify({ publicKey: 'A'.repeat(5000) }), 'application/json', 413, 'PAYLOAD_TOO_LARGE'],
    ['array', '[]', 'application/json', 400, 'VALIDATION_FAILED'],
    ['empty', '', 'application/json', 400, 'VALIDATION_FAILED'],
  ])('%s is refused on key release', async (_name, body, type, status, code) => {
    const before = await state();
    const answer = await app.call('POST', keyPath(), { token: s.buyer.token, body, type: type as string });
    expect(answer.status).toBe(status);
    expect(answer.body.error.code).toBe(code);
    expect(answer.body.error.requestId).toBe(answer.headers.get('x-request-id'));
    expect(await state()).toEqual(before);
  });

  it.each([
    ['unknown field', { publicKey: playerKey(), extra: 1 }],
    ['missing field', {}],
    ['wrong type', { publicKey: 42 }],
    ['bad base64 characters', { publicKey: `${'A'.repeat(42)}*` }],
    ['base64 with padding', { publicKey: `${'A'.repeat(43)}=` }],
    ['too short key', { publicKey: 'A'.repeat(42) }],
    ['non-canonical last character', { publicKey: `${'A'.repeat(42)}B` }],
  ])('%s fails validation on key release', async (_name, json) => {
    const before = await state();
    const answer = await app.call('POST', keyPath(), { token: s.buyer.token, json });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('VALIDATION_FAILED');
    expect(answer.body.error.details.errors.length).toBeGreaterThan(0);
    expect(await state()).toEqual(before);
  });

  it('accepts a JSON body of exactly the limit and refuses one byte more', async () => {
    const pad = (n: number) => JSON.stringify({ publicKey: playerKey() }).padEnd(n, ' ');
    const atLimit = await app.call('POST', keyPath(), { token: s.buyer.token, body: pad(2048), type: 'application/json' });
    expect(atLimit.status).toBe(200);
    const past = await app.call('POST', keyPath(), { token: s.buyer.token, body: pad(2049), type: 'application/json' });
    expect(past.status).toBe(413);
  });

  it('names the unknown field', async () => {
    const answer = await app.call('POST', '/api/accounts', { json: { email: 'x@example.com', password: 'long enough pw', name: 'X', admin: true } });
    expect(answer.body.error.details.errors).toContainEqual(expect.objectContaining({ field: 'admin' }));
    expect(await app.repo.findAccountByEmail('x@example.com')).toBeUndefined();
  });

  it.each([
    ['both buyer fields', { accountId: 'acct_' + '0'.repeat(32), email: 'a@example.com' }],
    ['no buyer field', {}],
    ['bad account id', { accountId: 'root' }],
    ['bad e-mail', { email: 'not an address' }],
  ])('license creation refuses %s', async (_name, json) => {
    const before = await state();
    const answer = await app.call('POST', licensesPath(), { token: s.seller.token, json });
    expect(answer.status).toBe(400);
    expect(await state()).toEqual(before);
  });

  it('unwrap refuses a blob that is not canonical base64url', async () => {
    const answer = await app.call('POST', '/api/keys/unwrap', { token: s.buyer.token,
      json: { accountId: s.buyer.accountId, blob: 'AQJ', publicKey: playerKey() } });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('revoke refuses unknown fields and changes nothing', async () => {
    const before = await state();
    const answer = await app.call('POST', `/api/licenses/${s.licenseId}/revoke`, { token: s.seller.token, json: { reason: 'x', force: true } });
    expect(answer.status).toBe(400);
    expect(await state()).toEqual(before);
  });
});

describe('raw bodies', () => {
  it.each([
    ['wrong content type', 'application/octet-stream', fakeMaster({ name: 'A', signer: new Uint8Array(32) }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['oversize master', 'application/vnd.iki.model', Buffer.alloc(30_000, 1), 413, 'PAYLOAD_TOO_LARGE'],
    ['empty master', 'application/vnd.iki.model', Buffer.alloc(0), 400, 'VALIDATION_FAILED'],
    ['not a model', 'application/vnd.iki.model', Buffer.from('hello, world'), 422, 'BAD_MAGIC'],
  ])('master upload: %s leaves nothing', async (_name, type, body, status, code) => {
    const before = await state();
    const answer = await app.call('POST', '/api/licenses/masters', { token: s.seller.token, type, body });
    expect(answer.status).toBe(status);
    expect(answer.body.error.code).toBe(code);
    expect(await state()).toEqual(before);
  });

  it('accepts a master of exactly the limit and refuses one byte more (streamed)', async () => {
    const exact = fakeMaster({ name: 'Edge', signer: s.key.publicKey, dataChunks: 1, chunkBytes: 1000 });
    const limit = exact.length;
    const edge = await startApp({ config: { bodyLimits: { jsonBytes: 2048, masterBytes: limit, imageBytes: 4096 } } });
    try {
      const seller = await newUser(edge, 'Edge');
      const key = await registerKey(edge, seller);
      const master = (extra: number) => fakeMaster({ name: 'Edge', signer: key.publicKey, dataChunks: 1, chunkBytes: 1000 + extra });
      const streamed = (bytes: Buffer) => new ReadableStream<Uint8Array>({ start(c) { c.enqueue(bytes); c.close(); } });
      const send = (bytes: Buffer) => fetch(`${edge.url}/api/licenses/masters`, { method: 'POST', body: streamed(bytes), duplex: 'half',
        headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/vnd.iki.model' } } as RequestInit);
      expect((await send(master(0))).status).toBe(201);
      expect((await send(master(1))).status).toBe(413);
    } finally {
      await edge.close();
    }
  });

  it('a tampered or truncated master fails the check and leaves nothing', async () => {
    const before = await state();
    const good = fakeMaster({ name: 'T', signer: s.key.publicKey });
    const flipped = Buffer.from(good);
    flipped[40] = (flipped[40] as number) ^ 1;
    for (const [body, code] of [[flipped, 'BAD_SIGNATURE'], [good.subarray(0, good.length - 5), 'TRUNCATED']] as const) {
      const answer = await app.call('POST', '/api/licenses/masters', { token: s.seller.token, type: 'application/vnd.iki.model', body });
      expect(answer.status).toBe(422);
      expect(answer.body.error.code).toBe(code);
    }
    expect(await state()).toEqual(before);
  });

  it('a chunked master without Content-Length is cut off at the limit and leaves nothing', async () => {
    const before = await state();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 30; i += 1) controller.enqueue(new Uint8Array(1000).fill(i));
        controller.close();
      },
    });
    const response = await fetch(`${app.url}/api/licenses/masters`, { method: 'POST', body, duplex: 'half',
      headers: { authorization: `Bearer ${s.seller.token}`, 'content-type': 'application/vnd.iki.model' } } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await state()).toEqual(before);
  });

  it('an upload aborted by the client leaves nothing', async () => {
    const before = await state();
    const url = new URL(`${app.url}/api/licenses/masters`);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST',
      headers: { authorization: `Bearer ${s.seller.token}`, 'content-type': 'application/vnd.iki.model', 'content-length': '15000' } });
    req.on('error', () => {});
    req.write(fakeMaster({ name: 'Cut', signer: s.key.publicKey }).subarray(0, 500));
    await new Promise((resolve) => setTimeout(resolve, 100));
    req.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await state()).toEqual(before);
  });

  it.each([
    ['text/plain', Buffer.from('LIC:0000000000000000'), 415],
    ['image/gif', Buffer.from('GIF89a'), 415],
    ['image/png', Buffer.alloc(5000, 1), 413],
  ])('identify refuses %s', async (type, body, status) => {
    const before = await state();
    const answer = await app.call('POST', `/api/licenses/masters/${s.masterId}/identify`, { token: s.seller.token, type, body });
    expect(answer.status).toBe(status);
    expect(await state()).toEqual(before);
  });
});

describe('unexpected errors', () => {
  it('are answered as INTERNAL without internals and logged with the request id', async () => {
    const repo = app.repo as unknown as { findLicenseAndMaster: (id: string) => Promise<unknown> };
    const original = repo.findLicenseAndMaster;
    repo.findLicenseAndMaster = async () => { throw new Error('database exploded: secret detail'); };
    try {
      const answer = await app.call('GET', `/api/licenses/${s.licenseId}`, { token: s.buyer.token });
      expect(answer.status).toBe(500);
      expect(answer.body.error).toEqual({ code: 'INTERNAL', message: 'internal error', requestId: answer.headers.get('x-request-id') });
      expect(answer.bytes.toString()).not.toContain('exploded');
      const logged = app.logs.find((l) => l.level === 'error' && l.fields['requestId'] === answer.body.error.requestId);
      expect(String((logged?.fields['error'] as Error).message)).toContain('exploded');
    } finally {
      repo.findLicenseAndMaster = original;
    }
  });
});
