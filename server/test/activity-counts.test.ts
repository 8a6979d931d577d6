/**
 * What the activity counts (issue 29 item 1) through HTTP on both SQL engines: a refusal of
 * each reason (rate limited, revoked, suspended, expired, not the licensee) of a key release
 * and of a copy download; downloads and a resumed download apart; and then the address
 * hashing: no column of any table (text, bytea, json) holds a client address or its prefix in
 * any form, and no answer or log line shows one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { postgresServer, sqlEngines, type SqlStore } from './helpers/databases.js';
import { gatedCrypto } from './helpers/fake-crypto.js';
import { license, newUser, playerKey, scenario, startApp, type TestApp, type User } from './helpers/app.js';

/** The client addresses the test's requests come from (through a trusted loopback proxy). */
const ADDRESSES = ['203.0.113.77', '2001:db8:abcd:12::5', '::ffff:198.51.100.23'];
/** Every text form of them and their prefixes that must appear nowhere. */
const NEEDLES = ['203.0.113', '2001:db8:abcd', '2001:0db8:abcd', '198.51.100', 'ffff:198', 'cb0071', '20010db8abcd', 'c63364'];
/** In a bytea (hex): the IPv4 /24s' and the IPv6 /48's bytes, and every text form above as ASCII. */
const BYTE_NEEDLES = ['cb0071', '20010db8abcd', 'c63364', ...NEEDLES.map((n) => Buffer.from(n).toString('hex'))];

describe.each(sqlEngines)('activity counts on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let store: SqlStore;
  let app: TestApp;
  const { crypto, control } = gatedCrypto();
  let clock = new Date('2032-02-01T10:00:00Z');
  let base: Awaited<ReturnType<typeof scenario>>;
  const bodies: string[] = [];

  beforeAll(async () => {
    if (skip) return;
    store = await engine.open();
    app = await startApp({ repo: new SqlRepository(store.db), blobs: new PgBlobStore(store.db), crypto, now: () => clock,
      config: { accessTokenTtlSeconds: 30 * 86_400, trustProxy: ['loopback'],
        releaseLimits: { perLicense: 2, perUser: 1000, windowSeconds: 3600 } } });
    base = await scenario(app);
  }, 60_000);
  afterAll(async () => {
    if (skip) return;
    control.release();
    await app.close();
    await store.close();
  });

  const headers = (i: number) => ({ 'x-forwarded-for': ADDRESSES[i % ADDRESSES.length] as string });
  const release = async (token: string, licenseId: string, i = 0) => {
    const answer = await app.call('POST', `/api/licenses/${licenseId}/key`, { token, json: { publicKey: playerKey() }, headers: headers(i) });
    bodies.push(answer.bytes.toString('utf8'));
    return answer.status;
  };
  const download = async (token: string, licenseId: string, extra: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${app.url}/api/licenses/${licenseId}/model`, { headers: { authorization: `Bearer ${token}`, ...headers(1), ...extra },
      ...(signal ? { signal } : {}) });
  const today = async (licenseId: string) => {
    const answer = await app.call('GET', `/api/licenses/${licenseId}/activity?bucket=day&from=2032-02-01T00:00:00Z`
      + '&to=2032-02-02T00:00:00Z', { token: base.seller.token });
    bodies.push(answer.bytes.toString('utf8'));
    expect(answer.status).toBe(200);
    return answer.body.series[0];
  };
  const fresh = async (): Promise<{ buyer: User; licenseId: string }> => {
    const buyer = await newUser(app, 'Buyer');
    return { buyer, licenseId: await license(app, base.seller, base.masterId, buyer) };
  };

  it.skipIf(skip)('counts each refusal of a key release by its reason', async () => {
    const { buyer, licenseId } = await fresh();
    expect([await release(buyer.token, licenseId, 0), await release(buyer.token, licenseId, 1)]).toEqual([200, 200]);
    expect(await release(buyer.token, licenseId, 2)).toBe(429);
    // The seller asking for the key of a license they sold, and a stranger.
    expect(await release(base.seller.token, licenseId)).toBe(403);
    expect(await release((await newUser(app, 'Stranger')).token, licenseId)).toBe(404);
    expect((await app.call('POST', `/api/licenses/${licenseId}/suspend`, { token: base.seller.token, json: {} })).status).toBe(200);
    expect(await release(buyer.token, licenseId)).toBe(403);
    expect((await app.call('POST', `/api/licenses/${licenseId}/reinstate`, { token: base.seller.token, json: {} })).status).toBe(200);
    await store.db.query('UPDATE licenses SET expires_at = $2 WHERE id = $1', [licenseId, new Date(clock.getTime() - 1000)]);
    expect(await release(buyer.token, licenseId)).toBe(403);
    await store.db.query('UPDATE licenses SET expires_at = NULL WHERE id = $1', [licenseId]);
    expect((await app.call('POST', `/api/licenses/${licenseId}/revoke`, { token: base.seller.token, json: {} })).status).toBe(200);
    expect(await release(buyer.token, licenseId)).toBe(403);
    expect(await release(buyer.token, licenseId)).toBe(403);
    expect(await today(licenseId)).toMatchObject({ releases: 2, downloads: 0, resumes: 0, addresses: 2, devices: 0,
      refusals: { rate_limited: 1, revoked: 2, expired: 1, suspended: 1, not_licensee: 2 } });
  });

  it.skipIf(skip)('counts downloads, a resumed one apart, and the refusals of a download', async () => {
    const { buyer, licenseId } = await fresh();
    const whole = await download(buyer.token, licenseId);
    expect(whole.status).toBe(200);
    await whole.arrayBuffer();
    // A cut download, then its resume.
    control.hold();
    const leave = new AbortController();
    const cut = await download(buyer.token, licenseId, {}, leave.signal);
    const first = await cut.body?.getReader().read();
    leave.abort();
    await expect.poll(async () => (await store.db.query(`SELECT sent_to::float8 AS s FROM usage_actions WHERE license_id = $1
      ORDER BY id DESC LIMIT 1`, [licenseId])).rows[0]?.['s']).toBe(first?.value?.length);
    control.release();
    const got = first?.value?.length ?? 0;
    const resumed = await download(buyer.token, licenseId, { range: `bytes=${got}-`, 'if-range': cut.headers.get('etag') as string });
    expect(resumed.status).toBe(206);
    await resumed.arrayBuffer();
    // The seller downloading the copy, and the buyer while it is suspended.
    expect((await download(base.seller.token, licenseId)).status).toBe(403);
    await app.call('POST', `/api/licenses/${licenseId}/suspend`, { token: base.seller.token, json: {} });
    expect((await download(buyer.token, licenseId)).status).toBe(403);
    expect(await today(licenseId)).toMatchObject({ releases: 0, downloads: 2, resumes: 1, addresses: 1,
      refusals: { rate_limited: 0, revoked: 0, expired: 0, suspended: 1, not_licensee: 1 } });
  });

  it.skipIf(skip)('keeps no client address or prefix in any column, answer or log line', async () => {
    // The third address (IPv4-mapped IPv6) on a granted release too.
    const { buyer, licenseId } = await fresh();
    expect(await release(buyer.token, licenseId, 2)).toBe(200);
    const { rows: columns } = await store.db.query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public'
        AND data_type IN ('text', 'character varying', 'bytea', 'jsonb', 'json', 'inet', 'cidr', 'ARRAY')`);
    expect(columns.length).toBeGreaterThan(50);
    expect(columns.map((c) => `${c.table_name}.${c.column_name}`)).toContain('activity_addresses.addr_hash');
    for (const c of columns) {
      const col = `"${c.table_name}"."${c.column_name}"`;
      const asText = c.data_type === 'bytea' ? `encode(${col}, 'hex')` : `${col}::text`;
      const needles = c.data_type === 'bytea' ? BYTE_NEEDLES : NEEDLES;
      const { rows } = await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${c.table_name}"
        WHERE ${needles.map((_, i) => `position($${i + 1}::text IN lower(${asText})) > 0`).join(' OR ')}`, needles);
      expect(rows[0]?.n, col).toBe(0);
    }
    // The prefixes were counted: two /24s and a /48 behind the releases and downloads.
    const { rows } = await store.db.query<{ n: number }>('SELECT count(DISTINCT addr_hash)::int AS n FROM activity_addresses');
    expect(rows[0]?.n).toBe(3);
    const shown = [...bodies, ...app.logs.map((l) => JSON.stringify(l))].join('\n').toLowerCase();
    for (const needle of NEEDLES) expect(shown).not.toContain(needle);
  });
});
