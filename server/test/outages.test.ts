/**
 * Honest errors under faults (issue 16 item 5): a database that cannot be reached answers 503
 * `STORAGE_UNAVAILABLE` with `Retry-After` (not 500) and logs no error; so does a blob store
 * failing with an I/O error; any other failure stays `INTERNAL`. A client going away is
 * covered in copy-range.test.ts (an info line, no stack).
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import { postgresDb } from '../src/storage/sql-db.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { isUnreachable, unavailable } from '../src/storage/unavailable.js';
import { startApp } from './helpers/app.js';
import { freshPostgres, postgresServer } from './helpers/databases.js';

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('storage outages', () => {
  it('a PostgreSQL server that refuses connections: 503 STORAGE_UNAVAILABLE with Retry-After, no error logged', async () => {
    const db = postgresDb(`postgres://postgres@127.0.0.1:${await closedPort()}/none`, 2);
    const app = await startApp({ repo: new SqlRepository(db) });
    try {
      const answer = await app.call('POST', '/api/sessions', { json: { email: 'a@example.com', password: 'correct horse battery' } });
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(answer.body.error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', details: { retryAfterSeconds: 5 } });
      expect(app.logs.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      await app.close();
      await db.close();
    }
  });

  it.skipIf(postgresServer() === '')('a database whose connections are cut answers 503, then serves again', async () => {
    const pg = await freshPostgres();
    const app = await startApp({ repo: new SqlRepository(pg.db) });
    const admin = postgresDb(postgresServer(), 1);
    const name = new URL(pg.url).pathname.slice(1);
    try {
      const signUp = (email: string) => app.call('POST', '/api/accounts', { json: { email, password: 'correct horse battery', name: 'A' } });
      // 202: a sign-up is pending until its link is used (issue 15); its record is written.
      expect((await signUp('a@example.com')).status).toBe(202);
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
      const down = await signUp('b@example.com');
      expect(down.status).toBe(503);
      expect(down.body.error.code).toBe('STORAGE_UNAVAILABLE');
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      expect((await signUp('c@example.com')).status).toBe(202);
    } finally {
      await app.close();
      await admin.close();
      await pg.drop();
    }
  });

  it.skipIf(postgresServer() === '')('a connection cut inside a transaction fails it with 503 and does not end the process', async () => {
    const pg = await freshPostgres();
    const db = postgresDb(pg.url, 2);
    const admin = postgresDb(postgresServer(), 1);
    try {
      const failed = db.transaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        // The client is checked out and idle in its transaction when its connection ends: pg
        // emits 'error' on it, which without a listener is an uncaught exception (the run fails).
        await new Promise((resolve) => setTimeout(resolve, 300));
        await tx.query('SELECT 1');
      });
      await expect(failed).rejects.toMatchObject({ status: 503, code: 'STORAGE_UNAVAILABLE' });
      // The broken connection was not given back: the pool serves the next query.
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
      await admin.close();
      await pg.drop();
    }
  });

  it('maps unreachable errors only', () => {
    for (const code of ['ECONNREFUSED', 'EIO', 'ESTALE', '57P01', '08006', '53300']) {
      const mapped = unavailable(Object.assign(new Error('x'), { code }));
      expect(mapped).toBeInstanceOf(ApiError);
      expect((mapped as ApiError).status).toBe(503);
      expect((mapped as ApiError).headers).toEqual({ 'Retry-After': '5' });
    }
    for (const code of ['23505', 'ENOENT', '42P01', undefined]) {
      expect(isUnreachable(Object.assign(new Error('x'), { code }))).toBe(false);
    }
    expect(isUnreachable(new Error('Connection terminated unexpectedly'))).toBe(true);
  });
});
