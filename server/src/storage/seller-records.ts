/**
 * The records of selling from a shop (issue 26 items 1 to 3), as one part of the `Repository`:
 * seller API keys, idempotent license creation with the seller's reference, the seller's
 * license listing with its filters, and suspension. `sql-seller.ts` implements it in SQL,
 * `memory-seller.ts` in memory; both honour the atomicity each method states.
 */
import type { License, NewEvent } from './repository.js';

/** What an API key may do (docs/deploy.md "API keys"); nothing else is ever granted to one. */
export const API_KEY_SCOPES = ['licenses:write', 'licenses:read', 'masters:read', 'events:read', 'webhooks:write'] as const;
/** One scope of an API key. */
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** A seller API key as stored: only the SHA-256 of its secret is kept. */
export interface ApiKeyRecord {
  /** `ak_` + 24 hex digits; names the key in lists and in license histories. */
  id: string;
  accountId: string;
  name: string;
  /** The last four characters of the secret, so a person can tell keys apart. */
  hint: string;
  scopes: ApiKeyScope[];
  createdAt: Date;
  lastUsedAt: Date | undefined;
  revokedAt: Date | undefined;
}

/** Who changed a license: the seller's account, and the API key when one was used. */
export interface Actor {
  accountId: string;
  apiKeyId?: string | undefined;
}

/** A license state as the seller filters by it; derived, revoked first, then suspended, then expired. */
export type LicenseState = 'active' | 'suspended' | 'expired' | 'revoked';

/** Input of `createLicense`. */
export interface NewLicense {
  license: Omit<License, 'revokedAt' | 'releaseCount' | 'copyBytes' | 'suspendedAt'>;
  actor: Actor;
  /** The seller's `Idempotency-Key` and the SHA-256 (hex) of what the request asked for. */
  idempotency?: { sellerId: string; key: string; requestHash: string } | undefined;
}

/** Outcome of `createLicense`. */
export type CreateLicenseOutcome =
  | { kind: 'created' }
  /** The license id is taken (a 64-bit collision): try another id. */
  | { kind: 'id_taken' }
  /** The seller used the key before for the same request: that license. */
  | { kind: 'replayed'; licenseId: string }
  /** The seller used the key before for another request. */
  | { kind: 'key_conflict' };

/** The seller's license listing (`GET /api/seller/licenses`), newest first. */
export interface LicenseQuery {
  sellerId: string;
  masterId?: string | undefined;
  /** The licensee's account id or (lower-cased) e-mail address. */
  buyer?: string | undefined;
  state?: LicenseState | undefined;
  externalRef?: string | undefined;
  now: Date;
  limit: number;
  /** Only licenses after this one in the order (issued time, then id, both descending). */
  after?: { issuedAt: Date; id: string } | undefined;
}

/** A change of suspension: `suspend` true suspends, false reinstates. */
export interface SuspensionChange {
  licenseId: string;
  suspend: boolean;
  actor: Actor;
  now: Date;
  reason?: string | undefined;
}

/** Outcome of `setSuspended`. */
export type SuspensionOutcome =
  | { kind: 'changed'; license: License }
  /** Already in the asked state: nothing changed, no event. */
  | { kind: 'unchanged'; license: License }
  /** Revocation is final. */
  | { kind: 'revoked'; license: License }
  | { kind: 'not_found' };

/** The details every license event written for a change by `actor` carries about it. */
export const actorDetails = (actor: Actor): Record<string, unknown> =>
  (actor.apiKeyId === undefined ? {} : { apiKeyId: actor.apiKeyId });

/** The state of a license at `now`. */
export function licenseState(l: Pick<License, 'revokedAt' | 'suspendedAt' | 'expiresAt'>, now: Date): LicenseState {
  if (l.revokedAt !== undefined) return 'revoked';
  if (l.suspendedAt !== undefined) return 'suspended';
  if (l.expiresAt !== undefined && l.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

/** The event a new license starts its history with. */
export function createdEvent(input: NewLicense): NewEvent {
  const { license: l, actor } = input;
  return {
    at: l.issuedAt, kind: 'license_created', actorId: actor.accountId, masterId: l.masterId, licenseId: l.id,
    details: {
      licensee: l.licenseeId, ...actorDetails(actor),
      ...(l.externalRef === undefined ? {} : { externalRef: l.externalRef }),
      ...(l.expiresAt === undefined ? {} : { expiresAt: l.expiresAt.toISOString() }),
    },
  };
}

/** The seller-side records of the repository. */
export interface SellerRecords {
  /** Stores a new API key with the SHA-256 (hex) of its secret. */
  insertApiKey(key: Omit<ApiKeyRecord, 'lastUsedAt' | 'revokedAt'>, secretHash: string): Promise<void>;
  /**
   * The key whose secret has this SHA-256 when it is not revoked, its last use set to `now`,
   * in one statement: a revocation committed on any instance refuses the very next request.
   */
  useApiKey(secretHash: string, now: Date): Promise<ApiKeyRecord | undefined>;
  /** The account's keys, newest first, revoked ones included. */
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Revokes one of the account's keys (idempotent: the first time stays); undefined when it has none such. */
  revokeApiKey(id: string, accountId: string, now: Date): Promise<ApiKeyRecord | undefined>;

  /**
   * Atomically inserts a license and its `license_created` event, and with `idempotency`
   * records the key first: a key the seller used before answers its license (same request) or
   * a conflict (another request) and inserts nothing. Concurrent creations with one key, from
   * any number of instances, make one license.
   */
  createLicense(input: NewLicense): Promise<CreateLicenseOutcome>;
  /** The license a seller's idempotency key made, and the hash of its request. */
  findIdempotentLicense(sellerId: string, key: string): Promise<{ licenseId: string; requestHash: string } | undefined>;
  /** The seller's licenses matching the query, at most `limit`, newest first. */
  queryLicenses(query: LicenseQuery): Promise<License[]>;
  /**
   * Atomically suspends or reinstates a license that is not revoked, with its event (only when
   * the state changes).
   */
  setSuspended(change: SuspensionChange): Promise<SuspensionOutcome>;
}

/** The `suspend` or `reinstate` event of a change. */
export function suspensionEvent(change: SuspensionChange, masterId: string): NewEvent {
  return {
    at: change.now, kind: change.suspend ? 'suspend' : 'reinstate', actorId: change.actor.accountId, masterId,
    licenseId: change.licenseId,
    details: { ...actorDetails(change.actor), ...(change.reason === undefined ? {} : { reason: change.reason }) },
  };
}

/** The details of a revocation event. */
export function revokeDetails(reason: string | undefined, apiKeyId: string | undefined): Record<string, unknown> {
  const actor: Actor = { accountId: '', apiKeyId };
  return { ...(reason === undefined ? {} : { reason }), ...actorDetails(actor) };
}
