/**
 * Managing masters through the real app (issue 14 item 4): an upload of a file the seller
 * already stored says so (`duplicateOf`), a master is renamed (PATCH) and deleted (DELETE,
 * refused while any license of it exists, revoked ones included), and the seller, only the
 * seller, sees each licensee's e-mail address. Item 7: without IKI_PUBLIC_URL a mailed link
 * points to the address the request was sent to when that is a loopback name (issue 22 item 4).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeMaster } from './helpers/fake-crypto.js';
import { license, newUser, registerKey, startApp, uploadMaster, type TestApp } from './helpers/app.js';

let app: TestApp;

beforeAll(async () => {
  app = await startApp({ config: { mailLimits: { perAddress: 3, perIp: 1000, windowSeconds: 3600 } } });
});
afterAll(async () => {
  await app.close();
});

const MODEL = 'application/vnd.iki.model';

/** POSTs JSON with a chosen Host header (fetch sets its own); resolves to the status. */
function postWithHost(url: string, path: string, host: string, json: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(json);
    const req = request(`${url}${path}`, { method: 'POST', headers: { host, 'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('managing masters', () => {
  it('an upload of the same bytes again is kept and names the earlier masters in duplicateOf', async () => {
    const seller = await newUser(app, 'Dupe Seller');
    const key = await registerKey(app, seller);
    const bytes = fakeMaster({ name: 'Twin', signer: key.publicKey });
    const first = await app.call('POST', '/api/licenses/masters', { token: seller.token, type: MODEL, body: bytes });
    expect(first.status).toBe(201);
    expect(first.body.duplicateOf).toEqual([]);
    const second = await app.call('POST', '/api/licenses/masters', { token: seller.token, type: MODEL, body: bytes });
    expect(second.status).toBe(201);
    expect(second.body.sha256).toBe(first.body.sha256);
    expect(second.body.duplicateOf).toEqual([{ masterId: first.body.masterId, name: 'Twin', createdAt: first.body.createdAt }]);
    // Identical masters share their stored bytes: deleting the first leaves the second whole.
    expect((await app.call('DELETE', `/api/licenses/masters/${first.body.masterId}`, { token: seller.token })).status).toBe(204);
    const buyer = await newUser(app, 'Dupe Buyer');
    const licenseId = await license(app, seller, second.body.masterId, buyer);
    expect((await app.call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token })).status).toBe(200);
    // Another file is no duplicate, and another seller's same file is none of this seller's business.
    const other = await app.call('POST', '/api/licenses/masters', { token: seller.token, type: MODEL,
      body: fakeMaster({ name: 'Other', signer: key.publicKey, dataChunks: 2 }) });
    expect(other.body.duplicateOf).toEqual([]);
  });

  it('PATCH renames a master of the caller; blank, too long or control characters are refused and change nothing', async () => {
    const seller = await newUser(app, 'Rena Seller');
    const stranger = await newUser(app, 'Stranger');
    const masterId = await uploadMaster(app, seller, await registerKey(app, seller), 'Old name');
    const path = `/api/licenses/masters/${masterId}`;
    const renamed = await app.call('PATCH', path, { token: seller.token, json: { name: '  New name ' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ masterId, name: 'New name', licenseCount: 0 });
    for (const [name, status, code] of [[' ', 400, 'VALIDATION_FAILED'], ['a\u0007b', 400, 'VALIDATION_FAILED'],
      ['é'.repeat(129), 422, 'MASTER_NAME_TOO_LONG']] as const) {
      const refused = await app.call('PATCH', path, { token: seller.token, json: { name } });
      expect([refused.status, refused.body.error.code]).toEqual([status, code]);
    }
    expect((await app.call('PATCH', path, { token: stranger.token, json: { name: 'Mine' } })).status).toBe(404);
    expect((await app.call('GET', path, { token: seller.token })).body.name).toBe('New name');
    // 256 bytes exactly is allowed.
    expect((await app.call('PATCH', path, { token: seller.token, json: { name: 'é'.repeat(128) } })).status).toBe(200);
  });

  it('DELETE removes a master without licenses and frees its bytes; one with a license, even revoked, is kept', async () => {
    const seller = await newUser(app, 'Del Seller');
    const buyer = await newUser(app, 'Del Buyer');
    const key = await registerKey(app, seller);
    const licensed = await uploadMaster(app, seller, key, 'Licensed');
    const spare = await uploadMaster(app, seller, key, 'Spare');
    const licenseId = await license(app, seller, licensed, buyer);
    await app.call('POST', `/api/licenses/${licenseId}/revoke`, { token: seller.token, json: {} });
    const refused = await app.call('DELETE', `/api/licenses/masters/${licensed}`, { token: seller.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'MASTER_HAS_LICENSES', details: { licenses: 1 } });
    expect((await app.call('GET', `/api/licenses/masters/${licensed}`, { token: seller.token })).status).toBe(200);
    expect((await app.call('DELETE', `/api/licenses/masters/${spare}`, { token: buyer.token })).status).toBe(404);

    const before = await app.repo.storedMasterBytes(seller.accountId);
    const size = (await app.call('GET', `/api/licenses/masters/${spare}`, { token: seller.token })).body.size as number;
    const deleted = await app.call('DELETE', `/api/licenses/masters/${spare}`, { token: seller.token });
    expect(deleted.status).toBe(204);
    expect((await app.call('GET', `/api/licenses/masters/${spare}`, { token: seller.token })).status).toBe(404);
    expect((await app.call('DELETE', `/api/licenses/masters/${spare}`, { token: seller.token })).status).toBe(404);
    expect(await app.repo.storedMasterBytes(seller.accountId)).toBe(before - size);
    const list = await app.call('GET', '/api/licenses/masters', { token: seller.token });
    expect(list.body.masters.map((m: { masterId: string }) => m.masterId)).toEqual([licensed]);
    const allow = await app.call('PUT', `/api/licenses/masters/${spare}`, { token: seller.token });
    expect(allow.headers.get('allow')).toBe('GET, HEAD, PATCH, DELETE');
  });

  it('PATCH archived: no new license, the licenses go on; restoring allows licenses again', async () => {
    const seller = await newUser(app, 'Arch Seller');
    const buyer = await newUser(app, 'Arch Buyer');
    const masterId = await uploadMaster(app, seller, await registerKey(app, seller), 'Retired');
    const licenseId = await license(app, seller, masterId, buyer);
    const path = `/api/licenses/masters/${masterId}`;
    const archived = await app.call('PATCH', path, { token: seller.token, json: { archived: true } });
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({ masterId, name: 'Retired', licenseCount: 1 });
    expect(Date.parse(archived.body.archivedAt)).not.toBeNaN();
    const again = await app.call('PATCH', path, { token: seller.token, json: { archived: true, name: 'Retired 2019' } });
    expect(again.body).toMatchObject({ archivedAt: archived.body.archivedAt, name: 'Retired 2019' });
    const refused = await app.call('POST', `${path}/licenses`, { token: seller.token, json: { accountId: buyer.accountId } });
    expect([refused.status, refused.body.error.code]).toEqual([409, 'MASTER_ARCHIVED']);
    // The buyer's license goes on: the copy downloads.
    expect((await app.call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token })).status).toBe(200);
    expect((await app.call('GET', '/api/licenses/masters', { token: seller.token })).body.masters[0].archivedAt)
      .toBe(archived.body.archivedAt);
    expect((await app.call('PATCH', path, { token: buyer.token, json: { archived: true } })).status).toBe(404);
    expect((await app.call('PATCH', path, { token: seller.token, json: {} })).status).toBe(400);
    const restored = await app.call('PATCH', path, { token: seller.token, json: { archived: false } });
    expect(restored.body.archivedAt).toBeNull();
    expect((await app.call('POST', `${path}/licenses`, { token: seller.token, json: { accountId: buyer.accountId } })).status).toBe(201);
  });

  it('the seller sees the address they licensed by; the licensee\'s own view has none of the seller\'s', async () => {
    const seller = await newUser(app, 'Mail Seller');
    const buyer = await newUser(app, 'Mail Buyer');
    const masterId = await uploadMaster(app, seller, await registerKey(app, seller));
    const created = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token, json: { email: buyer.email } });
    const licenseId = created.body.licenseId as string;
    const listed = await app.call('GET', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token });
    expect(listed.body.licenses[0].licensee).toEqual({ accountId: buyer.accountId, name: 'Mail Buyer', email: buyer.email });
    const own = await app.call('GET', `/api/licenses/${licenseId}`, { token: buyer.token });
    expect(own.body.licensee.email).toBeUndefined();
    expect(own.body.seller.email).toBeUndefined();
  });
});

describe('links follow the address the user opened (issue 14 item 7), loopback names only (issue 22 item 4)', () => {
  it('without IKI_PUBLIC_URL a link uses a loopback Host; any other Host (a forged one) gets the default base', async () => {
    const open = await startApp({ config: { publicUrlConfigured: false, mailLimits: { perAddress: 100, perIp: 1000, windowSeconds: 3600 } } });
    try {
      const port = new URL(open.url).port;
      const linkOf = (email: string) => String(open.logs.filter((l) => l.fields['to'] === email).at(-1)?.fields['link']);
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
        const email = `origin-${Math.random().toString(36).slice(2)}@example.com`;
        expect(await postWithHost(open.url, '/api/accounts', host, { email, password: 'correct horse battery', name: 'O' })).toBe(202);
        expect(linkOf(email), host).toMatch(new RegExp(`^http://${host.toLowerCase().replace(/[[\].]/g, '\\$&')}/verify-email\\?token=`));
      }
      // The attack: a reset asked for with a forged Host. The link must not point there.
      const user = await newUser(open, 'Reset Origin');
      for (const host of ['attacker.example:8443', `iki.lan:${port}`, '10.0.0.7', '127.0.0.1.attacker.example', 'localhost.attacker.example']) {
        expect(await postWithHost(open.url, '/api/accounts/password-reset', host, { email: user.email }), host).toBe(202);
        await open.services.accounts.settled();
        const reset = linkOf(user.email);
        expect(reset, host).toMatch(/^http:\/\/iki\.test\/reset-password\?token=/);
        expect(reset).not.toContain('attacker');
        const email = `forged-${Math.random().toString(36).slice(2)}@example.com`;
        expect(await postWithHost(open.url, '/api/accounts', host, { email, password: 'correct horse battery', name: 'O' })).toBe(202);
        expect(linkOf(email), host).toMatch(/^http:\/\/iki\.test\/verify-email\?token=/);
      }
      // A Host header that is not a plain host[:port] is not used.
      const odd = `odd-${Date.now()}@example.com`;
      expect(await postWithHost(open.url, '/api/accounts', 'evil.example/x?', { email: odd, password: 'correct horse battery', name: 'O' }))
        .toBe(202);
      expect(linkOf(odd)).not.toContain('evil');
      // The OpenAPI document names a loopback server it was asked at, and never a forged one.
      const doc = (host: string) => new Promise<string>((resolve, reject) => {
        request(`${open.url}/api/openapi.json`, { headers: { host } }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (t: string) => { text += t; }).on('end', () => resolve(text));
        }).on('error', reject).end();
      });
      expect(JSON.parse(await doc('localhost:8080')).servers).toEqual([{ url: 'http://localhost:8080' }]);
      expect(JSON.parse(await doc('iki.lan:8080')).servers).toEqual([{ url: 'http://iki.test' }]);
    } finally {
      await open.close();
    }
    expect((await app.call('GET', '/api/openapi.json')).body.servers).toEqual([{ url: 'http://iki.test' }]);
    const email = `fixed-${Date.now()}@example.com`;
    await postWithHost(app.url, '/api/accounts', 'evil.example', { email, password: 'correct horse battery', name: 'F' });
    expect(String(app.logs.find((l) => l.fields['to'] === email)?.fields['link'])).toMatch(/^http:\/\/iki\.test\/verify-email\?token=/);
  });
});
