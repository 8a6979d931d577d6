/**
 * Rows of the SQL repository's own tables as records: the columns each read selects and the
 * mapping back (both engines return the same shapes, except that PGlite may give dates as text).
 */
import type { License, LicenseEvent, Master, NewEvent, SigningKey } from './repository.js';
import type { SqlQueryable } from './sql-db.js';
import { sellerFields } from './sql-seller.js';

export type Row = Record<string, unknown>;

export const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
export const optDate = (v: unknown): Date | undefined => (v === null || v === undefined ? undefined : date(v));

export const MASTER_COLUMNS = `id, seller_id, name, sha256, size::float8 AS size, entries, textures,
  signer_public_key, created_at, texture_max_side, texture_max_pixels::float8 AS texture_max_pixels, blob_id, archived_at`;
export const LICENSE_COLUMNS = `id, master_id, licensee_id, licensee_name, licensee_email, issued_at, revoked_at, release_count,
  copy_bytes::float8 AS copy_bytes, external_ref, expires_at, suspended_at`;

export function toSigningKey(r: Row): SigningKey {
  return {
    publicKey: String(r['public_key']), accountId: String(r['account_id']), name: String(r['name']),
    createdAt: date(r['created_at']), revokedAt: optDate(r['revoked_at']),
  };
}

export function toMaster(r: Row): Master {
  return {
    id: String(r['id']), sellerId: String(r['seller_id']), name: String(r['name']),
    sha256: String(r['sha256']), size: Number(r['size']), entries: Number(r['entries']),
    textures: Number(r['textures']), signerPublicKey: String(r['signer_public_key']),
    createdAt: date(r['created_at']),
    textureBound: r['texture_max_side'] === null || r['texture_max_side'] === undefined ? undefined
      : { maxSidePx: Number(r['texture_max_side']), maxPixels: Number(r['texture_max_pixels']) },
    ...(r['archived_at'] === null || r['archived_at'] === undefined ? {} : { archivedAt: date(r['archived_at']) }),
    blobId: r['blob_id'] === null || r['blob_id'] === undefined ? undefined : String(r['blob_id']),
  };
}

export function toLicense(r: Row): License {
  return {
    id: String(r['id']), masterId: String(r['master_id']), licenseeId: String(r['licensee_id']),
    licenseeName: String(r['licensee_name']),
    ...(r['licensee_email'] === null || r['licensee_email'] === undefined ? {} : { licenseeEmail: String(r['licensee_email']) }),
    issuedAt: date(r['issued_at']), revokedAt: optDate(r['revoked_at']),
    releaseCount: Number(r['release_count']),
    copyBytes: r['copy_bytes'] === null || r['copy_bytes'] === undefined ? undefined : Number(r['copy_bytes']),
    ...sellerFields(r),
  };
}

export function toEvent(r: Row): LicenseEvent {
  const details = r['details'];
  return {
    id: String(r['id']), at: date(r['at']), kind: String(r['kind']) as LicenseEvent['kind'],
    actorId: String(r['actor_id']), masterId: String(r['master_id']),
    licenseId: r['license_id'] === null ? undefined : String(r['license_id']),
    details: typeof details === 'string' ? JSON.parse(details) as Record<string, unknown>
      : (details ?? {}) as Record<string, unknown>,
  };
}

export async function insertEvent(q: SqlQueryable, e: NewEvent): Promise<void> {
  await q.query(`INSERT INTO events (at, kind, actor_id, master_id, license_id, details)
    VALUES ($1, $2, $3, $4, $5, $6::jsonb)`,
  [e.at, e.kind, e.actorId, e.masterId, e.licenseId ?? null, JSON.stringify(e.details)]);
}
