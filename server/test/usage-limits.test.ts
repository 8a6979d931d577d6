/**
 * The usage limiter below HTTP: `tryStartUsage` and its slots on the in-memory fake, PGlite and
 * PostgreSQL (rates at and past their limit and freed by the window, running slots at and past
 * theirs, freed by finishing, cancelling or lapsing, exactly the limit of 30 concurrent attempts
 * recorded, old rows swept), and every quota variable of the configuration at and past its
 * bounds.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { QUOTA_DEFAULTS } from '../src/quota-config.js';
import type { Repository, UsageAttempt } from '../src/storage/repository.js';
import type { SqlDb } from '../src/storage/sql-db.js';
import { postgresServer, repositoryEngines, type Store } from './helpers/databases.js';

const T0 = new Date('2030-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

/** A copy attempt at `seconds` holding its slot 120 s; limits overridable. */
const copy = (seconds: number, limits: Partial<UsageAttempt> = {}): UsageAttempt => ({
  kind: 'copy', accountId: 'acct_b', licenseId: '00000000000000c1', now: at(seconds), windowSeconds: 3600,
  ratePerAccount: Infinity, ratePerLicense: Infinity, concurrentPerAccount: Infinity, concurrentPerLicense: Infinity,
  holdUntil: at(seconds + 120), ...limits,
});

async function seed(repo: Repository): Promise<void> {
  for (const id of ['acct_s', 'acct_b']) {
    await repo.createAccount({ id, email: `${id}@example.com`, passwordHash: 'h', name: id, createdAt: T0 });
  }
  await repo.insertMaster({ id: 'mst_1', sellerId: 'acct_s', name: 'M', sha256: 'a'.repeat(64), size: 1, entries: 1,
    textures: 0, signerPublicKey: 'k', createdAt: T0, textureBound: { maxSidePx: 0, maxPixels: 0 } });
  for (const id of ['00000000000000c1', '00000000000000c2']) {
    await repo.createLicense({ license: { id, masterId: 'mst_1', licenseeId: 'acct_b', licenseeName: 'B', issuedAt: T0 },
      actor: { accountId: 'acct_s' } });
  }
}

describe.each(repositoryEngines)('usage limits in the repository on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let store: Store;

  beforeAll(async () => {
    if (!skip) store = await engine.open();
  });
  afterAll(async () => {
    if (!skip) await store.close();
  });
  beforeEach(async () => {
    if (skip) return;
    await store.reset();
    await seed(store.repo);
  });

  it.skipIf(skip)('refuses a rate at its limit until the oldest start leaves the window', async () => {
    const { repo } = store;
    const limits = { ratePerLicense: 2, holdUntil: undefined };
    for (const t of [0, 10]) expect((await repo.tryStartUsage(copy(t, limits))).kind).toBe('started');
    expect(await repo.tryStartUsage(copy(20, limits)))
      .toEqual({ kind: 'limited', reason: 'rate', scope: 'license', limit: 2, retryAt: at(3600) });
    expect((await repo.tryStartUsage(copy(3599, limits))).kind).toBe('limited');
    expect((await repo.tryStartUsage(copy(3600, limits))).kind).toBe('started');
    // The other license and the per-account rate are counts of their own.
    expect((await repo.tryStartUsage(copy(3601, { ...limits, licenseId: '00000000000000c2' }))).kind).toBe('started');
    expect(await repo.tryStartUsage(copy(3602, { ...limits, licenseId: '00000000000000c2', ratePerAccount: 3 })))
      .toMatchObject({ kind: 'limited', scope: 'account', limit: 3, retryAt: at(3610) });
  });

  it.skipIf(skip)('holds running slots until finished, cancelled or lapsed; a finished one still counts to the rate', async () => {
    const { repo } = store;
    const limits = { concurrentPerLicense: 2, ratePerLicense: 3 };
    const first = await repo.tryStartUsage(copy(0, limits));
    const second = await repo.tryStartUsage(copy(5, limits));
    expect(await repo.tryStartUsage(copy(10, limits)))
      .toEqual({ kind: 'limited', reason: 'concurrency', scope: 'license', limit: 2, retryAt: at(120) });
    if (first.kind !== 'started' || second.kind !== 'started') throw new Error('not started');
    await repo.finishUsage(first.id);
    const third = await repo.tryStartUsage(copy(11, limits));
    expect(third.kind).toBe('started');
    // Three started in the window: the rate is full although only two run.
    expect(await repo.tryStartUsage(copy(12, { ...limits, concurrentPerLicense: 10 })))
      .toMatchObject({ kind: 'limited', reason: 'rate', retryAt: at(3600) });
    if (third.kind !== 'started') throw new Error('not started');
    await repo.cancelUsage(third.id);
    // A renewed slot holds past its first lapse; an unrenewed one lapses.
    await repo.renewUsage(second.id, at(400));
    expect(await repo.tryStartUsage(copy(300, { ...limits, concurrentPerLicense: 1 })))
      .toMatchObject({ kind: 'limited', reason: 'concurrency', retryAt: at(400) });
    expect((await repo.tryStartUsage(copy(400, { ...limits, concurrentPerLicense: 1 }))).kind).toBe('started');
    await repo.renewUsage(first.id, at(10_000));
    expect(await repo.tryStartUsage(copy(401, { concurrentPerLicense: 2 }))).toMatchObject({ kind: 'started' });
  });

  it.skipIf(skip)('starts exactly the limit of 30 concurrent attempts', async () => {
    const { repo } = store;
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => repo.tryStartUsage(copy(0, { concurrentPerAccount: 4 }))));
    expect(outcomes.filter((o) => o.kind === 'started')).toHaveLength(4);
    const rated = await Promise.all(Array.from({ length: 30 }, () => repo.tryStartUsage(copy(1000,
      { kind: 'identify', licenseId: undefined, holdUntil: undefined, ratePerAccount: 7 }))));
    expect(rated.filter((o) => o.kind === 'started')).toHaveLength(7);
  });

  it.skipIf(skip || engine.name === 'memory')('sweeps finished actions older than the window, at most 100 per start', async () => {
    const { repo } = store;
    const db = store.db as SqlDb;
    for (let i = 0; i < 150; i += 1) await repo.tryStartUsage(copy(i, { holdUntil: undefined }));
    const rows = async () => Number((await db.query('SELECT count(*)::int AS n FROM usage_actions')).rows[0]?.['n']);
    expect(await rows()).toBe(150);
    await repo.tryStartUsage(copy(4000, { holdUntil: undefined }));
    expect(await rows()).toBe(51);
  });
});

describe('quota configuration', () => {
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };

  it('has the documented defaults', () => {
    expect(loadConfig({}).quotas).toEqual(QUOTA_DEFAULTS);
    expect(QUOTA_DEFAULTS).toEqual({
      uploads: { concurrentPerAccount: 2, storageQuotaBytes: 10 * 1024 ** 3, maxDecodedBytes: 1024 ** 3 },
      copies: { perLicense: 10, perUser: 50, windowSeconds: 86_400, concurrentPerLicense: 2, concurrentPerUser: 4 },
      identify: { perSeller: 60, windowSeconds: 3600, maxPixels: 8192 * 8192 },
    });
  });

  it.each([
    ['IKI_CONCURRENT_UPLOADS_PER_ACCOUNT', 1, 100], ['IKI_STORAGE_QUOTA_BYTES', 1024, 2 ** 50],
    ['IKI_COPIES_PER_LICENSE', 1, 100000], ['IKI_COPIES_PER_USER', 1, 1000000], ['IKI_COPY_WINDOW_SECONDS', 60, 2592000],
    ['IKI_CONCURRENT_COPIES_PER_LICENSE', 1, 100], ['IKI_CONCURRENT_COPIES_PER_USER', 1, 1000],
    ['IKI_IDENTIFY_PER_SELLER', 1, 100000], ['IKI_IDENTIFY_WINDOW_SECONDS', 60, 86400],
    ['IKI_IDENTIFY_MAX_PIXELS', 1, 16384 * 16384],
  ] as const)('reads %s from %i to %i and refuses past either', (name, min, max) => {
    for (const ok of [min, max]) expect(problems({ [name]: String(ok) })).toEqual([]);
    for (const bad of [min - 1, max + 1, 'ten']) {
      expect(problems({ [name]: String(bad) })).toEqual([`${name} must be an integer from ${min} to ${max}`]);
    }
  });
});
