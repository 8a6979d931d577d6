/**
 * One repository contract, run against the in-memory fake, PGlite and a real PostgreSQL.
 * Includes the atomic release counting: exactly 20 of 50 concurrent attempts succeed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MemoryRepository } from '../src/storage/memory-repository.js';
import type { ReleaseAttempt, Repository } from '../src/storage/repository.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { migrate, MIGRATIONS } from '../src/storage/migrations.js';
import type { SqlDb } from '../src/storage/sql-db.js';
import { freshPglite, freshPostgres, postgresServer, truncateAll } from './helpers/databases.js';

interface Backend {
  name: string;
  open(): Promise<{ repo: Repository; reset(): Promise<void>; db?: SqlDb; close(): Promise<void> }>;
}

const backends: Backend[] = [
  { name: 'memory', async open() {
    const holder = { repo: new MemoryRepository() as Repository };
    return { get repo() { return holder.repo; }, async reset() { holder.repo = new MemoryRepository(); }, async close() {} };
  } },
  { name: 'pglite', async open() {
    const db = await freshPglite();
    return { repo: new SqlRepository(db), db, reset: () => truncateAll(db), close: () => db.close() };
  } },
  { name: 'postgres', async open() {
    const pg = await freshPostgres();
    return { repo: new SqlRepository(pg.db), db: pg.db, reset: () => truncateAll(pg.db), close: () => pg.drop() };
  } },
];

const T0 = new Date('2030-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

async function seed(repo: Repository): Promise<void> {
  for (const [id, email] of [['acct_seller', 's@example.com'], ['acct_buyer', 'b@example.com'], ['acct_other', 'o@example.com']]) {
    expect(await repo.createAccount({ id: id as string, email: email as string, passwordHash: 'h', name: id as string, createdAt: T0 })).toBe(true);
  }
  await repo.insertMaster({ id: 'mst_1', sellerId: 'acct_seller', name: 'Haru', sha256: 'a'.repeat(64), size: 10,
    entries: 3, textures: 1, signerPublicKey: 'k', createdAt: T0, textureBound: { maxSidePx: 64, maxPixels: 2048 } });
  for (const id of ['00000000000000a1', '00000000000000a2', '00000000000000a3', '00000000000000a4',
    '00000000000000a5', '00000000000000a6', '00000000000000a7']) {
    expect(await repo.createLicense({ license: { id, masterId: 'mst_1', licenseeId: 'acct_buyer', licenseeName: 'Buyer', issuedAt: T0 },
      actor: { accountId: 'acct_seller' } }))
      .toEqual({ kind: 'created' });
  }
}

const attempt = (licenseId: string, now: Date, accountId = 'acct_buyer'): ReleaseAttempt =>
  ({ licenseId, accountId, now, windowSeconds: 3600, perLicense: 20, perUser: 120 });

describe.each(backends)('repository on $name', (backend) => {
  let store: Awaited<ReturnType<Backend['open']>>;
  const skip = backend.name === 'postgres' && postgresServer() === '';

  beforeAll(async () => {
    if (!skip) store = await backend.open();
  });
  afterAll(async () => {
    if (!skip) await store.close();
  });
  beforeEach(async () => {
    if (skip) return;
    await store.reset();
    await seed(store.repo);
  });

  it.skipIf(skip)('keeps accounts with unique local e-mail addresses', async () => {
    const { repo } = store;
    expect(await repo.createAccount({ id: 'acct_x', email: 's@example.com', passwordHash: 'h', name: 'x', createdAt: T0 })).toBe(false);
    expect((await repo.findAccountByEmail('s@example.com'))?.id).toBe('acct_seller');
    expect(await repo.findAccountById('acct_missing')).toBeUndefined();
    await repo.updatePasswordHash('acct_seller', 'h2');
    expect((await repo.findAccountById('acct_seller'))?.passwordHash).toBe('h2');
  });

  it.skipIf(skip)('mirrors external accounts once per issuer and subject', async () => {
    const identity = { issuer: 'https://idp', subject: 'u1', email: 's@example.com', emailVerified: true, name: 'Ext' };
    const first = await store.repo.upsertExternalAccount(identity, 'acct_ext1', T0);
    const again = await store.repo.upsertExternalAccount({ ...identity, name: 'Renamed' }, 'acct_ext2', T0);
    expect(first.id).toBe('acct_ext1');
    expect(again).toMatchObject({ id: 'acct_ext1', name: 'Renamed', passwordHash: undefined });
    // A verified external account with the same address is preferred for e-mail look-ups.
    expect((await store.repo.findAccountByEmail('s@example.com'))?.id).toBe('acct_ext1');
  });

  it.skipIf(skip)('uses a verification token once and never after it expired', async () => {
    const { repo } = store;
    await repo.saveVerificationToken('t1', 'acct_buyer', at(60));
    await repo.saveVerificationToken('t2', 'acct_other', at(60));
    expect(await repo.consumeVerificationToken('t1', at(1))).toBe('acct_buyer');
    expect(await repo.consumeVerificationToken('t1', at(2))).toBeUndefined();
    expect(await repo.consumeVerificationToken('t2', at(60))).toBeUndefined();
    expect((await repo.findAccountById('acct_buyer'))?.emailVerified).toBe(true);
    expect((await repo.findAccountById('acct_other'))?.emailVerified).toBe(false);
  });

  it.skipIf(skip)('registers, refuses and revokes signing keys', async () => {
    const { repo } = store;
    const key = { publicKey: 'pk1', accountId: 'acct_seller', name: 'laptop', createdAt: T0 };
    expect(await repo.registerSigningKey(key)).toBe('created');
    expect(await repo.registerSigningKey(key)).toBe('exists');
    expect(await repo.registerSigningKey({ ...key, accountId: 'acct_buyer' })).toBe('taken');
    expect(await repo.revokeSigningKey('pk1', 'acct_buyer', at(1))).toBeUndefined();
    expect((await repo.revokeSigningKey('pk1', 'acct_seller', at(1)))?.revokedAt).toEqual(at(1));
    expect((await repo.revokeSigningKey('pk1', 'acct_seller', at(2)))?.revokedAt).toEqual(at(1));
    expect(await repo.registerSigningKey(key)).toBe('revoked');
    await repo.registerSigningKey({ ...key, publicKey: 'pk2', createdAt: at(3) });
    await repo.registerSigningKey({ ...key, publicKey: 'pk3', accountId: 'acct_buyer' });
    const listed = await repo.listSigningKeys('acct_seller');
    expect(listed.map((k) => [k.publicKey, k.revokedAt])).toEqual([['pk2', undefined], ['pk1', at(1)]]);
    expect(await repo.listSigningKeys('acct_other')).toEqual([]);
  });

  it.skipIf(skip)('lists masters and licenses', async () => {
    const { repo } = store;
    const masters = await repo.listMastersBySeller('acct_seller');
    expect(masters).toHaveLength(1);
    expect(masters[0]).toMatchObject({ id: 'mst_1', size: 10, licenseCount: 7 });
    expect(await repo.listMastersBySeller('acct_buyer')).toEqual([]);
    expect((await repo.listLicensesByMaster('mst_1')).map((l) => l.id)).toHaveLength(7);
    expect(await repo.listLicensesByLicensee('acct_other')).toEqual([]);
    expect(await repo.createLicense({ license: { id: '00000000000000a1', masterId: 'mst_1', licenseeId: 'acct_other', licenseeName: 'Other', issuedAt: T0 },
      actor: { accountId: 'acct_seller' } }))
      .toEqual({ kind: 'id_taken' });
  });

  it.skipIf(skip)('revokes idempotently and records one event', async () => {
    const { repo } = store;
    expect((await repo.revokeLicense('00000000000000a1', 'acct_seller', at(5), 'leak'))?.revokedAt).toEqual(at(5));
    expect((await repo.revokeLicense('00000000000000a1', 'acct_seller', at(9), undefined))?.revokedAt).toEqual(at(5));
    expect(await repo.revokeLicense('ffffffffffffffff', 'acct_seller', at(9), undefined)).toBeUndefined();
    const events = await repo.listEvents('00000000000000a1', { limit: 10, before: undefined });
    expect(events.map((e) => e.kind)).toEqual(['revoke', 'license_created']);
    expect(events[0]?.details).toEqual({ reason: 'leak' });
    expect(await repo.tryRecordRelease(attempt('00000000000000a1', at(10)))).toEqual({ kind: 'revoked' });
  });

  it.skipIf(skip)('refuses the 21st release of a license within the hour and frees a slot later', async () => {
    const { repo } = store;
    for (let i = 0; i < 20; i += 1) {
      const outcome = await repo.tryRecordRelease(attempt('00000000000000a1', at(i)));
      expect(outcome.kind).toBe('granted');
    }
    const refused = await repo.tryRecordRelease(attempt('00000000000000a1', at(100)));
    expect(refused).toMatchObject({ kind: 'limited', scope: 'license', retryAt: at(3600) });
    expect((await repo.tryRecordRelease(attempt('00000000000000a1', at(3599)))).kind).toBe('limited');
    // The window is (now - 1 h, now]: the release at t = 0 no longer counts at t = 3600.
    const later = await repo.tryRecordRelease(attempt('00000000000000a1', at(3600)));
    expect(later).toMatchObject({ kind: 'granted', releaseCount: 21 });
    expect((await repo.findLicense('00000000000000a1'))?.releaseCount).toBe(21);
  });

  it.skipIf(skip)('applies the per-user limit across licenses', async () => {
    const { repo } = store;
    const ids = ['00000000000000a1', '00000000000000a2', '00000000000000a3', '00000000000000a4', '00000000000000a5', '00000000000000a6'];
    for (const [n, id] of ids.entries()) {
      for (let i = 0; i < 20; i += 1) {
        expect((await repo.tryRecordRelease(attempt(id, at(n * 20 + i)))).kind).toBe('granted');
      }
    }
    const refused = await repo.tryRecordRelease(attempt('00000000000000a7', at(200)));
    expect(refused).toMatchObject({ kind: 'limited', scope: 'user', retryAt: at(3600) });
    expect(await repo.tryRecordRelease(attempt('00000000000000a7', at(200), 'acct_other'))).toEqual({ kind: 'not_found' });
  });

  it.skipIf(skip)('counts atomically: exactly 20 of 50 concurrent releases succeed', async () => {
    const outcomes = await Promise.all(Array.from({ length: 50 },
      (_, i) => store.repo.tryRecordRelease(attempt('00000000000000a1', at(i % 5)))));
    expect(outcomes.filter((o) => o.kind === 'granted')).toHaveLength(20);
    expect(outcomes.filter((o) => o.kind === 'limited')).toHaveLength(30);
    expect((await store.repo.findLicense('00000000000000a1'))?.releaseCount).toBe(20);
    const events = await store.repo.listEvents('00000000000000a1', { limit: 100, before: undefined });
    expect(events.filter((e) => e.kind === 'release')).toHaveLength(20);
  });

  it.skipIf(skip)('pages events newest first', async () => {
    const { repo } = store;
    for (let i = 0; i < 5; i += 1) await repo.tryRecordRelease(attempt('00000000000000a2', at(i)));
    const first = await repo.listEvents('00000000000000a2', { limit: 4, before: undefined });
    expect(first.map((e) => e.kind)).toEqual(['release', 'release', 'release', 'release']);
    const rest = await repo.listEvents('00000000000000a2', { limit: 4, before: first.at(-1)?.id });
    expect(rest.map((e) => e.kind)).toEqual(['release', 'license_created']);
    await repo.appendEvent({ at: at(9), kind: 'identify', actorId: 'acct_seller', masterId: 'mst_1',
      licenseId: '00000000000000a2', details: { found: true, confidence: 0.9 } });
    expect((await repo.listEvents('00000000000000a2', { limit: 1, before: undefined }))[0]).toMatchObject(
      { kind: 'identify', details: { found: true, confidence: 0.9 }, at: at(9) });
  });

  it.skipIf(skip)('prunes key releases and events older than the retention, keeping counts and recent rows', async () => {
    const { repo } = store;
    for (let i = 0; i < 3; i += 1) await repo.tryRecordRelease(attempt('00000000000000a3', at(i)));
    for (let i = 0; i < 2; i += 1) await repo.tryRecordRelease(attempt('00000000000000a3', at(10_000 + i)));
    const pruned = await repo.pruneHistory(at(5000));
    // 3 releases of a3 and their events, plus the license_created events (at T0) of the seeded licenses.
    expect(pruned.keyReleases).toBeGreaterThanOrEqual(3);
    expect(pruned.events).toBeGreaterThanOrEqual(3 + 7);
    expect(await repo.pruneHistory(at(5000))).toEqual({ keyReleases: 0, events: 0 });
    const events = await repo.listEvents('00000000000000a3', { limit: 100, before: undefined });
    expect(events.map((e) => e.kind)).toEqual(['release', 'release']);
    expect((await repo.findLicense('00000000000000a3'))?.releaseCount).toBe(5);
    // The window still counts the two recent releases.
    const next = await repo.tryRecordRelease(attempt('00000000000000a3', at(10_010)));
    expect(next).toMatchObject({ kind: 'granted', perLicense: { used: 3 } });
  });

  it.skipIf(skip)('checks the session and the verified address in the release itself (migration 10)', async () => {
    const { repo } = store;
    await repo.saveVerificationToken('tb', 'acct_buyer', at(60));
    expect(await repo.consumeVerificationToken('tb', at(1))).toBe('acct_buyer');
    const session = (id: string, accountId: string, expiresAt: Date) =>
      repo.createSession({ id, accountId, device: 'test', createdAt: T0, lastUsedAt: T0, expiresAt }, Buffer.from(id).toString('hex').padEnd(64, '0'));
    await session('sesbuyer', 'acct_buyer', at(3600));
    await session('sesold', 'acct_buyer', at(10));
    await session('sesother', 'acct_other', at(3600));
    const withSession = (sessionId: string, now: Date, accountId = 'acct_buyer') =>
      repo.tryRecordRelease({ ...attempt('00000000000000a1', now, accountId), sessionId });
    expect((await withSession('sesbuyer', at(20))).kind).toBe('granted');
    // Expired, another account's, unknown, unverified: nothing is counted for any of them.
    expect(await withSession('sesold', at(20))).toEqual({ kind: 'unauthenticated' });
    expect(await withSession('sesother', at(21))).toEqual({ kind: 'unauthenticated' });
    expect(await withSession('sesnone', at(22))).toEqual({ kind: 'unauthenticated' });
    expect(await withSession('sesother', at(23), 'acct_other')).toEqual({ kind: 'unverified' });
    expect(await repo.revokeSession('sesbuyer', 'acct_buyer', at(30))).toBe(true);
    expect(await withSession('sesbuyer', at(31))).toEqual({ kind: 'unauthenticated' });
    expect((await repo.findLicense('00000000000000a1'))?.releaseCount).toBe(1);
  });

  it.skipIf(skip)('counts at most the limit: a lowered limit refuses until enough releases aged out', async () => {
    const { repo } = store;
    for (let i = 0; i < 5; i += 1) expect((await repo.tryRecordRelease(attempt('00000000000000a2', at(i * 10)))).kind).toBe('granted');
    const granted = await repo.tryRecordRelease(attempt('00000000000000a2', at(50)));
    expect(granted).toMatchObject({ kind: 'granted', perLicense: { used: 6, resetAt: at(3600) } });
    // Limit lowered to 3 with 6 counted: the third newest (at 30 s) must age out first.
    const lowered = { ...attempt('00000000000000a2', at(60)), perLicense: 3 };
    expect(await repo.tryRecordRelease(lowered)).toMatchObject({ kind: 'limited', scope: 'license', retryAt: at(3630),
      perLicense: { limit: 3, used: 3, resetAt: at(3630) }, perUser: { used: 6, resetAt: at(3600) } });
    expect((await repo.tryRecordRelease({ ...lowered, now: at(3631) })).kind).toBe('granted');
  });

  it.skipIf(skip || backend.name === 'memory')('releases a key in one round trip', async () => {
    const db = store.db as SqlDb;
    let calls = 0;
    const counting: SqlDb = { engine: db.engine, close: () => db.close(),
      query: (text, params) => { calls += 1; return db.query(text, params); },
      exec: (script) => { calls += 1; return db.exec(script); },
      transaction: (fn) => { calls += 1; return db.transaction(fn); } };
    const repo = new SqlRepository(counting);
    expect((await repo.tryRecordRelease(attempt('00000000000000a4', at(20_000)))).kind).toBe('granted');
    expect(calls).toBe(1);
    expect(await repo.tryRecordRelease(attempt('00000000000000a4', at(20_001), 'acct_other'))).toEqual({ kind: 'not_found' });
    expect(calls).toBe(2);
    const found = await repo.findLicenseAndMaster('00000000000000a4');
    expect(calls).toBe(3);
    expect(found).toMatchObject({ license: { id: '00000000000000a4', releaseCount: 1 }, master: { id: 'mst_1', sha256: 'a'.repeat(64) } });
  });

  it.skipIf(skip || backend.name !== 'pglite')('groups concurrent releases into one commit on PGlite, counting exactly', async () => {
    const db = store.db as SqlDb;
    let queries = 0;
    let transactions = 0;
    const counting: SqlDb = { engine: db.engine, close: () => db.close(),
      query: (text, params) => { queries += 1; return db.query(text, params); },
      exec: (script) => db.exec(script),
      transaction: (fn) => { transactions += 1; return db.transaction(fn); } };
    const repo = new SqlRepository(counting);
    const outcomes = await Promise.all(Array.from({ length: 30 },
      (_, i) => repo.tryRecordRelease(attempt('00000000000000a3', at(i % 3)))));
    expect(outcomes.filter((o) => o.kind === 'granted')).toHaveLength(20);
    expect(outcomes.filter((o) => o.kind === 'limited')).toHaveLength(10);
    // All 30 arrived in the same turn of the event loop: one transaction (the group starts a
    // turn later, sql-release.ts).
    expect({ queries, transactions }).toEqual({ queries: 0, transactions: 1 });
    expect((await repo.findLicense('00000000000000a3'))?.releaseCount).toBe(20);
  });

  it.skipIf(skip || backend.name === 'memory')('applies migrations once', async () => {
    const db = store.db as SqlDb;
    expect(await migrate(db)).toEqual([]);
    const { rows } = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => Number(r.version))).toEqual(MIGRATIONS.map((m) => m.version));
  });
});
