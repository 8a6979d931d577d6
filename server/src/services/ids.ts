/**
 * Identifiers. License ids are random 64-bit numbers written as 16 lowercase hex digits (SPEC
 * "States and transitions": "a random 64-bit license id is assigned"); other ids carry a type
 * prefix and 128 random bits so they cannot be guessed or confused with one another.
 */
import { randomBytes } from 'node:crypto';

/** A license id: 8 random bytes as 16 lowercase hex digits. */
export const newLicenseId = (): string => randomBytes(8).toString('hex');
/** An account id, `acct_` + 32 hex digits. */
export const newAccountId = (): string => `acct_${randomBytes(16).toString('hex')}`;
/** A master id, `mst_` + 32 hex digits. */
export const newMasterId = (): string => `mst_${randomBytes(16).toString('hex')}`;
/** Request ids' random bytes, drawn from the OS a batch at a time. */
const REQUEST_ID_BYTES = 12;
const REQUEST_ID_BATCH = 256;
let requestIdPool = Buffer.alloc(0);
let requestIdAt = 0;

/**
 * A request id, `req_` + 24 hex digits. The bytes come from one `randomBytes` call per 256 ids
 * (issue 28 item 1: one call per request was 1.4 % of a key release's CPU in the profile); a
 * request id is an unguessable label, not a secret.
 */
export const newRequestId = (): string => {
  if (requestIdAt === requestIdPool.length) {
    requestIdPool = randomBytes(REQUEST_ID_BYTES * REQUEST_ID_BATCH);
    requestIdAt = 0;
  }
  requestIdAt += REQUEST_ID_BYTES;
  return `req_${requestIdPool.toString('hex', requestIdAt - REQUEST_ID_BYTES, requestIdAt)}`;
};

/** Pattern of a license id. */
export const LICENSE_ID_PATTERN = '^[0-9a-f]{16}$';
/** Pattern of a master id. */
export const MASTER_ID_PATTERN = '^mst_[0-9a-f]{32}$';
/** Pattern of an account id (local or mirrored from an external issuer). */
export const ACCOUNT_ID_PATTERN = '^acct_[0-9a-f]{32}$';
/** A 32-byte key as unpadded base64url. */
export const KEY32_PATTERN = '^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$';
/** A 64-byte Ed25519 signature as unpadded base64url. */
export const SIG64_PATTERN = '^[A-Za-z0-9_-]{85}[AQgw]$';
