/**
 * Seals, in place, the webhook and shop secrets written before they were stored sealed
 * (docs/format.md §8.5). Runs at start, after the migrations and before the service answers:
 * a migration cannot do it, because the key comes from the root secret, which the database
 * never sees. Each table is one transaction that locks the rows it seals, so two instances
 * starting together seal each row once (the second finds nothing left).
 */
import { SecretBox, SEALED_PREFIX, type SecretPlace } from '../services/secret-box.js';
import type { SqlDb } from './sql-db.js';

const TABLES: readonly SecretPlace['table'][] = ['webhook_endpoints', 'shop_connections'];

/** Seals every plain stored secret; answers how many rows it sealed per table. */
export async function sealStoredSecrets(db: SqlDb, box: SecretBox): Promise<Record<SecretPlace['table'], number>> {
  const sealed = { webhook_endpoints: 0, shop_connections: 0 };
  for (const table of TABLES) {
    sealed[table] = await db.transaction(async (tx) => {
      const { rows } = await tx.query(`SELECT id, secret FROM ${table} WHERE secret <> '' AND left(secret, $1) <> $2 FOR UPDATE`,
        [SEALED_PREFIX.length, SEALED_PREFIX]);
      for (const row of rows) {
        const id = String(row['id']);
        await tx.query(`UPDATE ${table} SET secret = $2 WHERE id = $1`, [id, box.seal(String(row['secret']), { table, id })]);
      }
      return rows.length;
    });
  }
  return sealed;
}
