/**
 * Migrations take their advisory lock before anything touches the schema (issue 13 item 2):
 * several instances starting at once on a new PostgreSQL database all start, and every
 * migration is applied exactly once (before, the unguarded `CREATE TABLE IF NOT EXISTS
 * schema_migrations` could fail with a unique violation in pg_type when two ran at once).
 */
import { describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS } from '../src/storage/migrations.js';
import { postgresDb } from '../src/storage/sql-db.js';
import { freshPostgres, postgresServer } from './helpers/databases.js';

describe('migrations under concurrent starts', () => {
  it.skipIf(postgresServer() === '')('apply every migration once when five instances start together', async () => {
    const pg = await freshPostgres([]);
    const instances = Array.from({ length: 5 }, () => postgresDb(pg.url, 2));
    try {
      for (let round = 0; round < 3; round += 1) {
        await pg.db.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
        const applied = await Promise.all(instances.map((db) => migrate(db)));
        expect(applied.flat().sort((a, b) => a - b)).toEqual(MIGRATIONS.map((m) => m.version));
        const { rows } = await pg.db.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
        expect(rows[0]?.n).toBe(MIGRATIONS.length);
      }
    } finally {
      await Promise.all(instances.map((db) => db.close()));
      await pg.drop();
    }
  }, 120_000);
});
