/**
 * Issue 22 item 5 through HTTP on PGlite and PostgreSQL: a resumed license-copy download must
 * continue a download the service recorded as cut (same ETag, from no further than it got), at
 * most `RESUMES_PER_DOWNLOAD` times; anything else is a download. Ten fresh `Range: bytes=1-`
 * requests after one whole download are counted as downloads (then refused); a cut download is
 * resumed four times without counting and the fifth resume is counted; a range past how far a
 * cut download got is counted; and how far it got is recorded on the download.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CopyLimits } from '../src/config.js';
import { QUOTA_DEFAULTS } from '../src/quota-config.js';
import { RESUMES_PER_DOWNLOAD } from '../src/storage/usage-window.js';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { postgresServer, sqlEngines, type SqlStore } from './helpers/databases.js';
import { gatedCrypto } from './helpers/fake-crypto.js';
import { scenario, startApp, type TestApp } from './helpers/app.js';

describe.each(sqlEngines)('resumed license-copy downloads on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let store: SqlStore;
  const apps: TestApp[] = [];
  const { crypto, control } = gatedCrypto();

  beforeAll(async () => {
    if (!skip) store = await engine.open();
  });
  afterAll(async () => {
    if (skip) return;
    control.release();
    await Promise.all(apps.map((a) => a.close()));
    await store.close();
  });

  async function app(copies: Partial<CopyLimits>): Promise<TestApp> {
    const started = await startApp({ repo: new SqlRepository(store.db), blobs: new PgBlobStore(store.db), crypto,
      config: { quotas: { ...QUOTA_DEFAULTS, copies: { ...QUOTA_DEFAULTS.copies, concurrentPerLicense: 10, ...copies } } } });
    apps.push(started);
    return started;
  }

  const get = (a: TestApp, token: string, licenseId: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${a.url}/api/licenses/${licenseId}/model`, { headers: { authorization: `Bearer ${token}`, ...headers },
      ...(signal ? { signal } : {}) });
  const rows = async (licenseId: string) => (await store.db.query(`SELECT resumed, sent_to::float8 AS sent_to, complete
    FROM usage_actions WHERE license_id = $1 ORDER BY id`, [licenseId])).rows as { resumed: boolean; sent_to: number; complete: boolean }[];
  const downloads = async (licenseId: string) => (await rows(licenseId)).filter((r) => !r.resumed).length;
  const resumes = async (licenseId: string) => (await rows(licenseId)).filter((r) => r.resumed).length;

  /** Starts a download, takes its first piece, and goes away: a cut download. */
  async function cutDownload(a: TestApp, token: string, licenseId: string): Promise<{ etag: string; got: number }> {
    control.hold();
    const leave = new AbortController();
    const answer = await get(a, token, licenseId, {}, leave.signal);
    expect(answer.status).toBe(200);
    const first = await answer.body?.getReader().read();
    leave.abort();
    // The download ends (its slot freed, how far it got recorded) once the service sees the client gone.
    await expect.poll(async () => (await rows(licenseId)).at(-1)?.sent_to).toBe(first?.value?.length);
    control.release();
    return { etag: answer.headers.get('etag') as string, got: first?.value?.length ?? 0 };
  }

  it.skipIf(skip)('counts ten fresh Range: bytes=1- requests after one whole download as downloads', async () => {
    const a = await app({ perLicense: 3 });
    const { buyer, licenseId } = await scenario(a);
    const whole = await get(a, buyer.token, licenseId);
    const etag = whole.headers.get('etag') as string;
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect((await rows(licenseId))[0]).toMatchObject({ resumed: false, sent_to: bytes.length, complete: true });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const ranged = await get(a, buyer.token, licenseId, { range: 'bytes=1-', 'if-range': etag });
      statuses.push(ranged.status);
      if (ranged.status === 206) expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(1))).toBe(true);
      else expect(((await ranged.json()) as { error: { code: string } }).error.code).toBe('COPY_RATE_LIMITED');
    }
    expect(statuses).toEqual([206, 206, ...Array<number>(8).fill(429)]);
    expect(await downloads(licenseId)).toBe(3);
    expect(await resumes(licenseId)).toBe(0);
  });

  it.skipIf(skip)(`resumes a cut download from where it got ${RESUMES_PER_DOWNLOAD} times; the next resume is a download`, async () => {
    const a = await app({ perLicense: 2 });
    const { buyer, licenseId } = await scenario(a);
    const { etag, got } = await cutDownload(a, buyer.token, licenseId);
    expect(got).toBeGreaterThan(10);
    expect((await rows(licenseId))[0]).toMatchObject({ resumed: false, sent_to: got, complete: false });
    for (let i = 0; i < RESUMES_PER_DOWNLOAD; i += 1) {
      // From the last byte it got, ten bytes: the download stays cut.
      const resumed = await get(a, buyer.token, licenseId, { range: `bytes=${got - 1}-${got + 8}`, 'if-range': etag });
      expect(resumed.status).toBe(206);
      expect(resumed.headers.get('content-range')).toMatch(new RegExp(`^bytes ${got - 1}-${got + 8}/`));
      await resumed.arrayBuffer();
    }
    expect(await resumes(licenseId)).toBe(RESUMES_PER_DOWNLOAD);
    expect(await downloads(licenseId)).toBe(1);
    // How far it got, with its resumes.
    expect((await rows(licenseId))[0]).toMatchObject({ sent_to: got + 9, complete: false });
    // The fifth is a download (the second of two), and then there are none left.
    expect((await get(a, buyer.token, licenseId, { range: `bytes=${got}-`, 'if-range': etag })).status).toBe(206);
    expect(await downloads(licenseId)).toBe(2);
    expect((await get(a, buyer.token, licenseId, { range: `bytes=${got}-`, 'if-range': etag })).status).toBe(429);
  });

  it.skipIf(skip)('counts a range past how far the cut download got as a download', async () => {
    const a = await app({ perLicense: 2 });
    const { buyer, licenseId } = await scenario(a);
    const { etag, got } = await cutDownload(a, buyer.token, licenseId);
    const past = await get(a, buyer.token, licenseId, { range: `bytes=${got + 1}-`, 'if-range': etag });
    expect(past.status).toBe(206);
    await past.arrayBuffer();
    expect(await downloads(licenseId)).toBe(2);
    expect(await resumes(licenseId)).toBe(0);
    // The second download reached the end: nothing continues it, and the first is still cut.
    const resumed = await get(a, buyer.token, licenseId, { range: `bytes=${got}-`, 'if-range': etag });
    expect(resumed.status).toBe(206);
    await resumed.arrayBuffer();
    expect(await resumes(licenseId)).toBe(1);
    expect((await get(a, buyer.token, licenseId, { range: 'bytes=1-', 'if-range': etag })).status).toBe(429);
  });
});
