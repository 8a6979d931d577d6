/**
 * A hung PostgreSQL server (issue 23 item 1): with every process of a throwaway server of this
 * test's own stopped by SIGSTOP (the shared test server stays untouched), requests answer 503
 * `STORAGE_UNAVAILABLE` with `Retry-After` within the configured timeouts instead of hanging
 * for as long as the freeze lasts, whether they held a pooled connection or waited for one;
 * `/readyz` reports the database not ready; after SIGCONT the service serves again.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { serve, type RunningServer } from '../src/main.js';
import { captureLogger, TEST_HASHING, type LogLine } from './helpers/app.js';
import { postgresServer } from './helpers/databases.js';
import { fakeCrypto } from './helpers/fake-crypto.js';
import { startCluster, type Cluster } from './helpers/global-postgres.js';

/** The bounds under test: short, so the test is quick. */
const QUERY_TIMEOUT_MS = 1000;
const CONNECT_TIMEOUT_MS = 1000;
/** What a request may take beyond its bound on a loaded machine. */
const SLACK_MS = 1500;

describe.skipIf(postgresServer() === '')('a frozen PostgreSQL server', () => {
  const logs: LogLine[] = [];
  let cluster: Cluster;
  let dataDir: string;
  let running: RunningServer;

  beforeAll(async () => {
    cluster = await startCluster();
    dataDir = await mkdtemp(join(tmpdir(), 'iki-hung-'));
    running = await serve({ port: 0, dataDir, logger: captureLogger(logs), config: { passwordHashing: TEST_HASHING },
      crypto: async () => fakeCrypto(), mailer: { async sendVerification() {} },
      env: { DATABASE_URL: cluster.url, IKI_ROOT_SECRET: randomBytes(32).toString('base64url'),
        IKI_PUBLIC_URL: 'http://iki.test', IKI_BLOB_STORE: 'postgres', IKI_DB_POOL: '3',
        IKI_DB_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS), IKI_DB_STATEMENT_TIMEOUT_MS: '800',
        IKI_DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS) } });
  });
  afterAll(async () => {
    cluster?.thaw();
    await running?.close();
    cluster?.destroy();
    await rm(dataDir, { recursive: true, force: true });
  });

  const signUp = async (email: string) => {
    const started = Date.now();
    const answer = await fetch(`${running.url}/api/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'correct horse battery', name: 'A' }), signal: AbortSignal.timeout(15_000) });
    const body = await answer.json() as { error?: { code: string } };
    return { status: answer.status, code: body.error?.code, retryAfter: answer.headers.get('retry-after'), ms: Date.now() - started };
  };

  it('answers 503 within the timeouts while frozen, /readyz says so, and serves again after SIGCONT', async () => {
    expect((await signUp('before@example.com')).status).toBe(202);
    cluster.freeze();
    try {
      // More requests than pooled connections: some time out on their query, the rest waiting for a connection.
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => signUp(`frozen${i}@example.com`)));
      for (const a of answers) {
        expect(a).toMatchObject({ status: 503, code: 'STORAGE_UNAVAILABLE', retryAfter: '5' });
        expect(a.ms).toBeLessThan(QUERY_TIMEOUT_MS + CONNECT_TIMEOUT_MS + SLACK_MS);
      }
      const ready = await fetch(`${running.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { checks: Record<string, string> }).checks['database']).toMatch(/^(timeout|failed)$/);
      expect(logs.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      cluster.thaw();
    }
    // Back: the connections that timed out were discarded, new ones work.
    let after = await signUp('after@example.com');
    for (let i = 0; i < 20 && after.status !== 202; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      after = await signUp(`after${i}@example.com`);
    }
    expect(after.status).toBe(202);
    expect((await fetch(`${running.url}/readyz`)).status).toBe(200);
  }, 60_000);
});

describe('the pool bounds', () => {
  it('are read from the environment, with defaults, and a statement timeout below the query timeout', () => {
    expect(loadConfig({}).storage.dbTimeouts).toEqual({ connectMs: 5000, queryMs: 10_000, statementMs: 8000, keepAliveMs: 10_000 });
    expect(loadConfig({ IKI_DB_QUERY_TIMEOUT_MS: '3000', IKI_DB_STATEMENT_TIMEOUT_MS: '0', IKI_DB_KEEPALIVE_MS: '0',
      IKI_DB_CONNECT_TIMEOUT_MS: '100' }).storage.dbTimeouts).toEqual({ connectMs: 100, queryMs: 3000, statementMs: 0, keepAliveMs: 0 });
    expect(() => loadConfig({ IKI_DB_QUERY_TIMEOUT_MS: '3000', IKI_DB_STATEMENT_TIMEOUT_MS: '3000' }))
      .toThrow(/IKI_DB_STATEMENT_TIMEOUT_MS must be below IKI_DB_QUERY_TIMEOUT_MS/);
    expect(() => loadConfig({ IKI_DB_CONNECT_TIMEOUT_MS: '99' })).toThrow(/IKI_DB_CONNECT_TIMEOUT_MS/);
    expect(() => loadConfig({ IKI_DB_QUERY_TIMEOUT_MS: '3600001' })).toThrow(/IKI_DB_QUERY_TIMEOUT_MS/);
  });
});
