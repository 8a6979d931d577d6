/**
 * The SQL side of master records that must be atomic (issue 16 item 6): identical masters share
 * one stored blob, and "reference or store" (`recordMaster`) and "delete the last reference"
 * (`deleteMaster`) take one transaction-scoped advisory lock per content, on PGlite and
 * PostgreSQL alike.
 */
import type { BlobCommit, DeleteMasterOutcome, Master } from './repository.js';
import type { SqlDb, SqlQueryable } from './sql-db.js';
import { withinQuota } from './sql-usage.js';

/**
 * Takes the transaction-scoped advisory lock of one content (a master's SHA-256): "reference
 * or store" (`recordMaster`) and "delete the last reference" (`deleteMaster`) run one at a
 * time per content. Keyed by the hash's first 32 bits in a namespace of their own (two contents
 * that share them only wait for each other).
 */
async function lockContent(tx: SqlQueryable, sha256: string): Promise<void> {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new RangeError('sha256 must be 64 lowercase hex digits');
  await tx.query('SELECT pg_advisory_xact_lock($1::int4, $2::int4)',
    [CONTENT_LOCK_SPACE, Number.parseInt(sha256.slice(0, 8), 16) | 0]);
}

/** First key of the two-key advisory locks on master contents ("iki" "m"). */
const CONTENT_LOCK_SPACE = 0x696b696d;

export async function insertMasterRow(q: SqlQueryable, m: Master): Promise<void> {
  await q.query(`INSERT INTO masters (id, seller_id, name, sha256, size, entries, textures, signer_public_key,
      created_at, texture_max_side, texture_max_pixels, blob_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
  [m.id, m.sellerId, m.name, m.sha256, m.size, m.entries, m.textures, m.signerPublicKey, m.createdAt,
    m.textureBound?.maxSidePx ?? null, m.textureBound?.maxPixels ?? null, m.blobId ?? null]);
}

/** `Repository.recordMaster`: within the seller's quota lock, then the content's lock. */
export async function recordMaster(db: SqlDb, m: Master, quotaBytes: number, commit: BlobCommit): Promise<Master | undefined> {
  let recorded: Master = m;
  const inside = await withinQuota(db, m.sellerId, m.size, quotaBytes, async (tx) => {
    await lockContent(tx, m.sha256);
    const { rows } = await tx.query(`SELECT coalesce(blob_id, id) AS blob FROM masters WHERE sha256 = $1
      ORDER BY created_at, id LIMIT 1`, [m.sha256]);
    const shared = rows[0] === undefined ? undefined : String(rows[0]['blob']);
    if (shared === undefined) await commit(m.id, tx);
    const { blobId: _, ...own } = m;
    recorded = shared === undefined ? own : { ...own, blobId: shared };
    await insertMasterRow(tx, recorded);
  });
  return inside ? recorded : undefined;
}

/** `Repository.deleteMaster`: the master's row lock, then the content's lock. */
export async function deleteMaster(db: SqlDb, id: string, sellerId: string): Promise<DeleteMasterOutcome> {
  return db.transaction(async (tx) => {
    // The row lock conflicts with the key-share lock a license insert takes on its master.
    const found = await tx.query(`SELECT coalesce(blob_id, id) AS blob, sha256 FROM masters
      WHERE id = $1 AND seller_id = $2 FOR UPDATE`, [id, sellerId]);
    if (found.rows[0] === undefined) return { kind: 'not_found' } as const;
    const blob = String(found.rows[0]['blob']);
    // An identical upload recording meanwhile waits, then finds no master and stores its own.
    await lockContent(tx, String(found.rows[0]['sha256']));
    const { rows } = await tx.query('SELECT count(*)::int AS n FROM licenses WHERE master_id = $1', [id]);
    const licenses = Number(rows[0]?.['n'] ?? 0);
    if (licenses > 0) return { kind: 'has_licenses', licenses } as const;
    await tx.query('DELETE FROM events WHERE master_id = $1', [id]);
    await tx.query('DELETE FROM masters WHERE id = $1', [id]);
    const shared = await tx.query('SELECT 1 FROM masters WHERE coalesce(blob_id, id) = $1 LIMIT 1', [blob]);
    return { kind: 'deleted', orphanBlob: shared.rows.length === 0 ? blob : undefined } as const;
  });
}
