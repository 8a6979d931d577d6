/**
 * The records the service keeps (accounts, masters, licenses, events, sessions), shared by
 * both repositories; `repository.ts` re-exports them with the `Repository` interface.
 */
import type { SqlQueryable } from './sql-db.js';

/** An account of the built-in module or mirrored from an external OpenID Connect issuer. */
export interface Account {
  id: string;
  /** Lower-cased e-mail address. */
  email: string;
  emailVerified: boolean;
  /** Argon2id PHC string; undefined for external accounts. */
  passwordHash: string | undefined;
  name: string;
  createdAt: Date;
}

/** Input of `createAccount`. */
export interface NewAccount {
  id: string;
  email: string;
  passwordHash: string;
  name: string;
  createdAt: Date;
}

/** Claims of an external identity, used to find or create its mirrored account. */
export interface ExternalIdentity {
  issuer: string;
  subject: string;
  email: string;
  emailVerified: boolean;
  name: string;
}

/** A device signing key registered to an account. */
export interface SigningKey {
  /** Ed25519 public key, 43-character base64url. */
  publicKey: string;
  accountId: string;
  name: string;
  createdAt: Date;
  revokedAt: Date | undefined;
}

/**
 * The largest texture of a master: the longest side and the largest area among its `rgba8`
 * entries, in pixels (both 0 for a master without textures). Identify decodes no image
 * beyond it, since a leaked texture is one of the master's.
 */
export interface TextureBound {
  maxSidePx: number;
  maxPixels: number;
}

/** A verified master (SPEC "Master and license copy"). */
export interface Master {
  id: string;
  sellerId: string;
  name: string;
  /** SHA-256 of the stored file, lowercase hex. */
  sha256: string;
  size: number;
  entries: number;
  textures: number;
  signerPublicKey: string;
  createdAt: Date;
  /** Recorded at upload; undefined for a master stored before it was (worked out on first use). */
  textureBound: TextureBound | undefined;
  /** When its seller archived it (no new licenses; everything else goes on); undefined when not archived. */
  archivedAt?: Date;
  /**
   * The blob holding the bytes when another master with the same SHA-256 stored them first
   * (identical masters are stored once); undefined: the blob is the master's own id.
   */
  blobId?: string | undefined;
}

/** The blob store id of a master's bytes. */
export const blobOf = (m: Pick<Master, 'id' | 'blobId'>): string => m.blobId ?? m.id;

/** A license: one buyer's right to one master. */
export interface License {
  /** 16 lowercase hex digits (random 64-bit id). */
  id: string;
  masterId: string;
  licenseeId: string;
  /**
   * The licensee's display name when the license was issued. It is written into every copy's
   * manifest, so it is frozen: a later change of the account's name never changes a copy.
   */
  licenseeName: string;
  /**
   * The address the seller licensed the buyer by, when they licensed by e-mail (issue 22
   * item 6); undefined when they named the account id, so its address is never shown to them.
   */
  licenseeEmail?: string | undefined;
  issuedAt: Date;
  revokedAt: Date | undefined;
  releaseCount: number;
  /** Size of the license copy in bytes, once one was produced whole (for `Range` answers). */
  copyBytes?: number | undefined;
  /** The seller's reference (an order id), at most 200 characters (issue 26 item 2). */
  externalRef?: string | undefined;
  /** From this time on no copy or key is issued (issue 26 item 3); undefined: never expires. */
  expiresAt?: Date | undefined;
  /** When its seller suspended it (reversible); undefined when not suspended. */
  suspendedAt?: Date | undefined;
}

/** Event kinds recorded for licenses and masters. */
export type EventKind = 'license_created' | 'release' | 'download' | 'revoke' | 'identify' | 'suspend' | 'reinstate'
  /** Written once when the license passed its `expiresAt`, and one per window when a limit refused it (notice-records.ts). */
  | 'expire' | 'rate_limited'
  /** A flag raised on the license (issue 29 item 3; storage/flags-records.ts), actor `system`. */
  | 'flag';

/** Something that happened to a license (or a master, for identify without a match). */
export interface LicenseEvent {
  /** Monotonic id, decimal string (a cursor for paging). */
  id: string;
  at: Date;
  kind: EventKind;
  actorId: string;
  masterId: string;
  licenseId: string | undefined;
  details: Record<string, unknown>;
}

/** Input of `appendEvent`. */
export type NewEvent = Omit<LicenseEvent, 'id'>;

/** Moves a pending upload into place as blob `blobId`; `within` is the recording transaction on SQL. */
export type BlobCommit = (blobId: string, within: SqlQueryable | undefined) => Promise<void>;

/** Outcome of `deleteMaster`: deleted, not the seller's (or unknown), or kept for its licenses. */
export type DeleteMasterOutcome =
  /** `orphanBlob`: the blob no remaining master reads (identical masters share one), to remove. */
  | { kind: 'deleted'; orphanBlob: string | undefined }
  | { kind: 'not_found' }
  | { kind: 'has_licenses'; licenses: number };

/** Result of `registerSigningKey`. */
export type RegisterKeyOutcome = 'created' | 'exists' | 'taken' | 'revoked';

/** Paging of event lists: newest first, before an event id. */
export interface EventPage {
  limit: number;
  before: string | undefined;
}

/**
 * A sign-up waiting for its link (issue 15 item 1): the password it chose takes effect only
 * when the link's token is used; a newer sign-up for the address replaces it.
 */
export interface PendingSignUp {
  /** SHA-256 of the link's token, lowercase hex. */
  tokenHash: string;
  email: string;
  name: string;
  passwordHash: string;
  /**
   * SHA-256 (lowercase hex) of the proof the browser that signed up holds (issue 22 item 3);
   * undefined for a sign-up stored before there was one.
   */
  proofHash: string | undefined;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * What completes a pending sign-up: the proof of the browser that signed up (its password then
 * takes effect), or a password the person at the link chose (which replaces it).
 */
export type SignUpProof = { proofHash: string | undefined } | { passwordHash: string };

/** A signed-in session: the refresh token's record (only its SHA-256 is stored). */
export interface SessionRecord {
  id: string;
  accountId: string;
  /** What the client said it is (User-Agent or the CLI's device name), at most 200 characters. */
  device: string;
  createdAt: Date;
  lastUsedAt: Date;
  expiresAt: Date;
  revokedAt: Date | undefined;
}

/**
 * What using a refresh token did (issue 22 item 8): `rotated` (the token is replaced by the new
 * one), `grace` (a token retired less than the grace period ago, as two tabs refreshing at once
 * do: the session is used but nothing replaced), `reused` (an older retired token: the session
 * was ended), `ended` (unknown, revoked or expired).
 */
export type RotateOutcome =
  | { kind: 'rotated' | 'grace'; session: SessionRecord }
  | { kind: 'reused' | 'ended' };

/** How long a session lives: idle lifetime, extended on use, never past the maximum from creation. */
export interface SessionLifetime {
  idleSeconds: number;
  maxSeconds: number;
}
