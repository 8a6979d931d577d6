/**
 * The OpenAPI 3.1 document of the HTTP interface, served at `GET /api/openapi.json`. It records
 * every decision SPEC "Endpoints" leaves open (encodings, field names, statuses, error body),
 * the bearer scheme, the rate-limit headers and the versioning rule. Request bodies embed the
 * very schemas the routes validate with; a test checks that every mounted route is described.
 */
import type { AppOptions } from './app.js';
import { ERROR_STATUS, type ErrorCode } from './errors.js';
import { RESPONSE_SCHEMAS } from './openapi-schemas.js';
import { REQUEST_SCHEMAS } from './schemas/requests.js';
import { API_KEY_ERRORS, CREATE_LICENSE_NOTE, IDEMPOTENCY_HEADER, SELL_OPS, SELL_PATH_PARAMS } from './openapi-sell.js';
import { ACTIVITY_OPS, ACTIVITY_PATH_PARAMS, ACTIVITY_SCHEMAS } from './openapi-activity.js';
import type { ApiKeyScope } from './storage/seller-records.js';
import { ACCOUNT_ID_PATTERN, KEY32_PATTERN, LICENSE_ID_PATTERN, MASTER_ID_PATTERN } from './services/ids.js';

/** One operation of the document. */
export interface Op {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  summary: string;
  auth: boolean;
  /** The scope an API key needs (as the route's `scope`); without one no API key may call it. */
  scope?: ApiKeyScope;
  tag: string;
  body?: { schema: string } | { raw: string[]; description: string };
  ok: { status: number; schema?: string; raw?: string; description: string };
  errors: ErrorCode[];
  rateLimited?: boolean;
  description?: string;
  /** Further header parameters and responses (the ranged, cacheable license copy). */
  extra?: { parameters: Record<string, unknown>[]; responses: Record<string, unknown>; okHeaders: Record<string, unknown> };
}

/** `Range`, `If-Range`, `If-None-Match` and the 206, 304 and 416 answers of the license copy. */
const COPY_RANGES: NonNullable<Op['extra']> = {
  parameters: [
    { name: 'Range', in: 'header', required: false, schema: { type: 'string', pattern: '^bytes=([0-9]+-[0-9]*|-[0-9]+)$' },
      description: 'One byte range (RFC 9110 §14.2); several ranges or other units are ignored (the whole copy is sent).' },
    { name: 'If-Range', in: 'header', required: false, schema: { type: 'string' },
      description: 'The ETag of the partial copy held; when it is not the current one, the Range is ignored.' },
    { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' },
      description: 'ETags of copies held; a match is answered 304, counting no download.' },
  ],
  okHeaders: {
    ETag: { description: 'Strong ETag of the copy.', schema: { type: 'string' } },
    'Accept-Ranges': { description: 'Always "bytes".', schema: { type: 'string', enum: ['bytes'] } },
    'Content-Length': { description: 'Sent once the copy\'s size is known (after its first whole download or first range).',
      schema: { type: 'integer' } },
  },
  responses: {
    206: { description: 'The bytes of the Range (Content-Range: bytes first-last/size). A range from a byte after the first is'
      + ' a resume when it continues a download of this license by this account that the service recorded within the window:'
      + ' one that was cut before the copy\'s last byte was sent, of the copy with the same ETag, having sent at least up to the'
      + ' range\'s first byte, and resumed fewer than 4 times. A resume counts towards TOO_MANY_DOWNLOADS and towards 4 times'
      + ' the per-licensee download rate, but not as a download; any other range (bytes=1- after a whole download, or with no'
      + ' download at all) counts as a new download.',
    headers: { 'Content-Range': { schema: { type: 'string' }, description: 'bytes first-last/size' },
      ETag: { schema: { type: 'string' }, description: 'Strong ETag of the copy.' } },
    content: { 'application/vnd.iki.model': { schema: { type: 'string', contentMediaType: 'application/vnd.iki.model' } } } },
    304: { description: 'If-None-Match matched: the copy held is current; no download counted.',
      headers: { ETag: { schema: { type: 'string' }, description: 'Strong ETag of the copy.' } } },
  },
};

const AUTH: ErrorCode[] = ['UNAUTHENTICATED'];
const JSON_BODY: ErrorCode[] = ['MALFORMED_JSON', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];
const CONTAINER: ErrorCode[] = ['BAD_MAGIC', 'WRONG_KIND', 'UNSUPPORTED_VERSION', 'TRUNCATED', 'TRAILING_BYTES',
  'LIMIT_EXCEEDED', 'CHUNK_ORDER', 'UNKNOWN_CRITICAL_CHUNK', 'MALFORMED_CHUNK', 'UNSUPPORTED_ALGORITHM',
  'BAD_MANIFEST', 'DATA_SEQUENCE', 'BAD_DATA', 'HASH_MISMATCH', 'DECRYPT_FAILED', 'BAD_SIGNATURE',
  'KEY_REQUIRED', 'KDF_PARAMS_REFUSED', 'NOT_A_MASTER'];
const CRYPTO: ErrorCode[] = ['CRYPTO_UNAVAILABLE'];

const OPS: Op[] = [
  { method: 'get', path: '/api/openapi.json', summary: 'This document', auth: false, tag: 'meta',
    ok: { status: 200, description: 'The OpenAPI 3.1 document.' }, errors: [] },
  { method: 'get', path: '/downloads/iki-cli.tgz', summary: 'The iki CLI as an npm tarball', auth: false, tag: 'meta',
    ok: { status: 200, raw: 'application/gzip', description: 'The self-contained CLI package (no dependencies):'
      + ' npm install -g <service>/downloads/iki-cli.tgz. X-Iki-Cli-Version carries its version, ETag its SHA-256.' },
    errors: ['NOT_FOUND'] },
  { method: 'get', path: '/downloads/iki-core.tgz', summary: 'The @iki/core browser library as an npm tarball', auth: false, tag: 'meta',
    ok: { status: 200, raw: 'application/gzip', description: 'The library an app embeds to open license copies (ES module,'
      + ' .d.ts, the license worker, the package service worker and the .wasm; no dependencies): npm install'
      + ' <service>/downloads/iki-core.tgz. X-Iki-Core-Version carries its version, ETag its SHA-256.' },
    errors: ['NOT_FOUND'] },
  { method: 'post', path: '/api/accounts', summary: 'Sign up', auth: false, tag: 'accounts',
    body: { schema: 'SignUpRequest' }, ok: { status: 202, schema: 'SignUpAccepted', description: 'The same answer for every address.' },
    errors: [...JSON_BODY, 'MAIL_THROTTLED'],
    description: 'A sign-up is pending until the link sent to the address is used: only then is the account created, with'
      + ' the password of that sign-up. A newer sign-up for the address replaces a pending one (the earlier link stops'
      + ' working); a pending sign-up expires with its link (24 hours). An address that already has a verified account gets'
      + ' the same answer and no message, so the answer tells nothing about accounts. Every sign-up counts towards the'
      + ' verification-mail limits of its address, of the client address and of the service as a whole (IKI_MAILS_TOTAL);'
      + ' when the client\'s or the global limit is full the request is refused with MAIL_THROTTLED and Retry-After; the'
      + ' address\'s limit applies to resends only. Every answer sets the cookie iki_sign_up (32 random bytes; HttpOnly;'
      + ' Secure; SameSite=Strict; Path=/api/accounts/verify; as long as the link lives): the proof that this browser'
      + ' typed the password. Only a link used with it makes that password the account\'s (see POST /api/accounts/verify).' },
  { method: 'post', path: '/api/accounts/password-reset', summary: 'Ask for a password-reset link', auth: false, tag: 'accounts',
    body: { schema: 'PasswordResetRequest' },
    ok: { status: 202, schema: 'PasswordResetRequested', description: 'Accepted; the same answer for every address.' },
    errors: [...JSON_BODY, 'MAIL_THROTTLED'],
    description: 'When the address has a local account, a link to /reset-password is issued and sent after the answer; it'
      + ' works once, within an hour, and replaces any earlier one. Counted under the verification-mail limits (address,'
      + ' client, global) whether or not the address has an account.' },
  { method: 'post', path: '/api/accounts/password-reset/complete', summary: 'Set a new password with a reset link', auth: false,
    tag: 'accounts', body: { schema: 'PasswordResetCompleteRequest' },
    ok: { status: 200, schema: 'PasswordChanged', description: 'Changed; every session of the account has ended.' },
    errors: [...JSON_BODY, 'VERIFICATION_INVALID'],
    description: 'Sets the password, marks the address verified (the link proved the mailbox), drops any pending sign-up'
      + ' of the address and ends every session of the account.' },
  { method: 'post', path: '/api/me/password', summary: 'Change the password', auth: true, tag: 'accounts',
    body: { schema: 'ChangePasswordRequest' },
    ok: { status: 200, schema: 'PasswordChanged', description: 'Changed; every other session of the account has ended.' },
    errors: [...AUTH, ...JSON_BODY, 'EMAIL_NOT_VERIFIED', 'INVALID_CREDENTIALS', 'SIGN_IN_THROTTLED', 'FORBIDDEN'],
    description: 'The current password is checked and counted like a sign-in attempt. External (OIDC) accounts get FORBIDDEN.' },
  { method: 'post', path: '/api/accounts/verification', summary: 'Send the verification link again', auth: false, tag: 'accounts',
    body: { schema: 'ResendVerificationRequest' },
    ok: { status: 202, schema: 'VerificationRequested', description: 'Accepted; the same answer for every address.' },
    errors: [...JSON_BODY, 'MAIL_THROTTLED'],
    description: 'When the address has a built-in account that is not verified, a new link is issued and sent after the'
      + ' answer; it replaces the earlier link, which from then on answers VERIFICATION_INVALID. An unknown or verified'
      + ' address gets the same answer and no message. For a pending sign-up (see POST /api/accounts) the link is renewed'
      + ' likewise. Each request counts towards the limits of its address and of the'
      + ' client address, whether or not the address has an account; when either is full the request is refused with'
      + ' MAIL_THROTTLED and Retry-After, alike for every address.' },
  { method: 'post', path: '/api/accounts/verify', summary: 'Verify an e-mail address', auth: false, tag: 'accounts',
    body: { schema: 'VerifyEmailRequest' }, ok: { status: 200, schema: 'Account', description: 'The account, created or verified.' },
    errors: [...JSON_BODY, 'VERIFICATION_INVALID', 'SIGN_UP_PASSWORD_REQUIRED'],
    description: 'A pending sign-up\'s link creates the account with the password typed at sign-up only when it comes with'
      + ' the iki_sign_up cookie of the browser that signed up. Anywhere else (another browser, a mail scanner) it answers'
      + ' SIGN_UP_PASSWORD_REQUIRED and changes nothing, until the request carries the password the person at the link'
      + ' chooses, which then replaces the one typed at sign-up. The answer clears the cookie.' },
  { method: 'post', path: '/api/sessions', summary: 'Sign in', auth: false, tag: 'sessions',
    body: { schema: 'SignInRequest' }, ok: { status: 201, schema: 'Session', description: 'A session: an access token and its refresh token.' },
    errors: [...JSON_BODY, 'INVALID_CREDENTIALS', 'EMAIL_NOT_VERIFIED', 'SIGN_IN_THROTTLED'],
    description: 'Only local accounts sign in with a password, and only with a verified address (EMAIL_NOT_VERIFIED after a'
      + ' right password). The refresh token goes into the cookie iki_refresh (HttpOnly; Secure; SameSite=Strict;'
      + ' Path=/api/sessions) unless refreshTokenIn is "body"; beside it the cookie iki_session=1 (Secure; SameSite=Strict;'
      + ' Path=/; readable by scripts, no secret, set and cleared with iki_refresh) tells pages that a refresh may succeed,'
      + ' so a signed-out page does not ask. The session lasts IKI_SESSION_IDLE_SECONDS unused (30 days)'
      + ' and IKI_SESSION_MAX_SECONDS at most (90 days); the access token 15 minutes.'
      + ' Failed sign-ins are counted per e-mail address (whether or not it has an account) and per client'
      + ' address (the TCP peer; X-Forwarded-For is not trusted). When either limit of the window is full the request is'
      + ' refused with SIGN_IN_THROTTLED and Retry-After before the password is checked, even a right one; a successful'
      + ' sign-in does not reset the counts. Every attempt, successful ones too, also counts against IKI_SIGN_INS_PER_ADDRESS'
      + ' (20) and IKI_SIGN_INS_PER_IP (100) per window, refused alike with SIGN_IN_THROTTLED.' },
  { method: 'post', path: '/api/sessions/refresh', summary: 'A new access token for a session', auth: false, tag: 'sessions',
    body: { schema: 'RefreshRequest' }, ok: { status: 200, schema: 'RefreshedSession', description: 'A new access token; the session\'s last use recorded.' },
    errors: [...JSON_BODY, 'UNAUTHENTICATED'],
    description: 'The refresh token comes from the body, or from the iki_refresh cookie when the request carries'
      + ' X-Iki-Session: 1 (a header no other site can make a browser send, so no cross-site request can use the cookie).'
      + ' A session that was revoked, signed out or expired answers UNAUTHENTICATED and clears the cookie.'
      + ' Every refresh replaces the refresh token (a new cookie, or refreshToken in the body); the replaced one, used'
      + ' again, ends the whole session and answers UNAUTHENTICATED, except within IKI_REFRESH_REUSE_GRACE_SECONDS (10 s)'
      + ' of its replacement, when the answer has an access token and no new refresh token.' },
  { method: 'post', path: '/api/sessions/sign-out', summary: 'Sign out (end this session)', auth: false, tag: 'sessions',
    body: { schema: 'RefreshRequest' }, ok: { status: 200, schema: 'SignedOut', description: 'Ended (also when it had already ended); with X-Iki-Session: 1 the cookies cleared.' },
    errors: JSON_BODY,
    description: 'The session is named like in refresh (body, or cookie with X-Iki-Session: 1). Its access tokens stop working at once.'
      + ' The cookies are cleared only when the request carries X-Iki-Session: 1, so a cross-site form cannot sign a page'
      + ' out while its session lives on.' },
  { method: 'get', path: '/api/sessions', summary: 'The caller\'s sessions', auth: true, tag: 'sessions',
    ok: { status: 200, schema: 'SessionList', description: 'Active sessions, most recently used first, with device and last use.' },
    errors: AUTH },
  { method: 'post', path: '/api/sessions/revoke-all', summary: 'Sign out everywhere', auth: true, tag: 'sessions',
    ok: { status: 200, schema: 'SessionsRevoked', description: 'Every session of the account ended, this one included.' },
    errors: AUTH },
  { method: 'post', path: '/api/sessions/{sessionId}/revoke', summary: 'End one of the caller\'s sessions', auth: true, tag: 'sessions',
    ok: { status: 200, schema: 'SignedOut', description: 'Ended.' }, errors: ['MALFORMED_REQUEST', ...AUTH, 'SESSION_NOT_FOUND'] },
  { method: 'get', path: '/api/me', summary: 'The caller\'s account', auth: true, tag: 'accounts',
    ok: { status: 200, schema: 'Account', description: 'The account (also when its address is not verified).' }, errors: AUTH },
  { method: 'get', path: '/api/licenses/masters', summary: 'The caller\'s masters', auth: true, scope: 'masters:read', tag: 'masters',
    ok: { status: 200, schema: 'MasterList', description: 'Newest first, with license counts.' }, errors: AUTH },
  { method: 'post', path: '/api/licenses/masters', summary: 'Upload a master', auth: true, tag: 'masters',
    body: { raw: ['application/vnd.iki.model'], description: 'The master file (.ikm, role master), streamed as the raw body; chunked transfer encoding is fine.' },
    ok: { status: 201, schema: 'Master', description: 'Stored, completely checked and recorded; Location names it.' },
    errors: [...AUTH, 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'VALIDATION_FAILED', 'EMAIL_NOT_VERIFIED',
      'SIGNING_KEY_REQUIRED', 'STORAGE_QUOTA_EXCEEDED', 'TOO_MANY_UPLOADS', 'SIGNER_NOT_SELLER', 'MASTER_NAME_TOO_LONG',
      ...CONTAINER, ...CRYPTO],
    description: 'Before any byte of the body is read, the caller must have a verified e-mail address (else EMAIL_NOT_VERIFIED)'
      + ' and an active signing key (SIGNING_KEY_REQUIRED), the declared Content-Length must fit the account\'s storage quota'
      + ' (STORAGE_QUOTA_EXCEEDED, 413) and an upload slot must be free (TOO_MANY_UPLOADS, 429 with Retry-After); these'
      + ' refusals close the connection with the body unread. A body that does not start with the .ikm magic is refused at'
      + ' once (BAD_MAGIC, WRONG_KIND). The key in SIGN, the last chunk, is checked against the caller\'s keys as soon as'
      + ' the body ended (SIGNER_NOT_SELLER), before the complete check: every chunk decrypted and verified, the signature'
      + ' valid, the signer an active signing key registered to the caller, meta.name at most 256 bytes of UTF-8'
      + ' (MASTER_NAME_TOO_LONG) without control characters (VALIDATION_FAILED). A master whose entries decode to more than'
      + ' IKI_MASTER_MAX_DECODED_BYTES (1 GiB) in all is refused from its manifest, before any entry is decoded'
      + ' (LIMIT_EXCEEDED, details.limit IKI_MASTER_MAX_DECODED_BYTES). Nothing is kept when any check fails, and'
      + ' the quota is counted again when the master is recorded. An upload of a file the caller already stored (same'
      + ' SHA-256) is kept as a new master; the answer\'s duplicateOf lists the earlier ones, so a client can warn.' },
  { method: 'get', path: '/api/licenses/masters/{masterId}', summary: 'One of the caller\'s masters', auth: true, scope: 'masters:read', tag: 'masters',
    ok: { status: 200, schema: 'Master', description: 'The master.' }, errors: ['MALFORMED_REQUEST', ...AUTH, 'MASTER_NOT_FOUND'] },
  { method: 'patch', path: '/api/licenses/masters/{masterId}', summary: 'Rename or archive a master', auth: true, tag: 'masters',
    body: { schema: 'UpdateMasterRequest' }, ok: { status: 200, schema: 'Master', description: 'The master, changed.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, ...JSON_BODY, 'MASTER_NOT_FOUND', 'MASTER_NAME_TOO_LONG'],
    description: 'name changes the name shown in lists and in the file name of license copies; the stored file, its SHA-256'
      + ' and the licenses are unchanged. The name is trimmed; at most 256 bytes of UTF-8 (MASTER_NAME_TOO_LONG).'
      + ' archived: true archives the master (archivedAt is set; archiving again keeps the first time): it takes no new'
      + ' license (MASTER_ARCHIVED), while its licenses, copies, key releases, history and identify go on; false restores'
      + ' it. Archiving is how a master with licenses, which cannot be deleted, is retired.' },
  { method: 'delete', path: '/api/licenses/masters/{masterId}', summary: 'Delete a master', auth: true, tag: 'masters',
    ok: { status: 204, description: 'Deleted: the record, its identify events and the stored file.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'MASTER_NOT_FOUND', 'MASTER_HAS_LICENSES'],
    description: 'Refused with MASTER_HAS_LICENSES (409, details.licenses) while any license of the master exists, revoked'
      + ' ones included: a license\'s copies, key releases and history need its master (archive it instead). The bytes'
      + ' count towards the storage quota no more.' },
  { method: 'get', path: '/api/licenses/masters/{masterId}/licenses', summary: 'Licenses of a master', auth: true, scope: 'licenses:read', tag: 'licenses',
    ok: { status: 200, schema: 'LicenseList', description: 'With release counts and revocation state.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'MASTER_NOT_FOUND'] },
  { method: 'post', path: '/api/licenses/masters/{masterId}/licenses', summary: 'Create a license', auth: true, scope: 'licenses:write', tag: 'licenses',
    body: { schema: 'CreateLicenseRequest' }, ok: { status: 201, schema: 'License', description: 'A license with a random 64-bit id.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, ...JSON_BODY, 'EMAIL_NOT_VERIFIED', 'MASTER_NOT_FOUND', 'MASTER_ARCHIVED', 'ACCOUNT_NOT_FOUND',
      'ACCOUNT_AMBIGUOUS', 'LICENSE_CREATION_THROTTLED', 'IDEMPOTENCY_KEY_REUSED'],
    extra: IDEMPOTENCY_HEADER,
    description: 'A buyer named by e-mail must have exactly one account with that verified address (ACCOUNT_AMBIGUOUS when a'
      + ' local and an external account share it). Each creation counts towards the seller\'s hourly limit'
      + ' (IKI_LICENSES_PER_SELLER_PER_HOUR, 200), then LICENSE_CREATION_THROTTLED (429) with Retry-After.'
      + CREATE_LICENSE_NOTE },
  { method: 'post', path: '/api/licenses/masters/{masterId}/identify', summary: 'Identify a leaked texture', auth: true, tag: 'licenses',
    body: { raw: ['image/png', 'image/jpeg', 'image/webp'], description: 'One texture image, as found.' },
    ok: { status: 200, schema: 'IdentifyResult', description: 'Whether a watermark was read; "not found" is a normal answer.' },
    errors: [...AUTH, 'MALFORMED_REQUEST', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'MASTER_NOT_FOUND',
      'IDENTIFY_RATE_LIMITED', 'INVALID_ARGUMENT', 'IMAGE_DECODE_FAILED', 'IMAGE_TOO_LARGE', ...CRYPTO],
    description: 'Each request counts towards the seller\'s identify limit before the body is read (IDENTIFY_RATE_LIMITED,'
      + ' 429 with Retry-After). The image\'s dimensions are read from its header and must be within the master\'s largest'
      + ' texture (its longest side and its largest area) and the service\'s pixel cap, else IMAGE_TOO_LARGE (422) before any'
      + ' pixel is decoded; details give width, height, maxSide and maxPixels.' },
  { method: 'get', path: '/api/licenses', summary: 'The caller\'s licenses as a buyer', auth: true, tag: 'licenses',
    ok: { status: 200, schema: 'LicenseList', description: 'Newest first.' }, errors: AUTH },
  { method: 'get', path: '/api/licenses/{licenseId}', summary: 'One license (seller or licensee)', auth: true, scope: 'licenses:read', tag: 'licenses',
    ok: { status: 200, schema: 'License', description: 'The license.' }, errors: ['MALFORMED_REQUEST', ...AUTH, 'LICENSE_NOT_FOUND'] },
  { method: 'get', path: '/api/licenses/{licenseId}/events', summary: 'History of a license', auth: true, scope: 'licenses:read', tag: 'licenses',
    ok: { status: 200, schema: 'EventList', description: 'Creation, releases, downloads, revocation and identify hits, newest first.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'LICENSE_NOT_FOUND', 'VALIDATION_FAILED'] },
  { method: 'get', path: '/api/licenses/{licenseId}/model', summary: 'Download the license copy', auth: true, tag: 'licenses',
    ok: { status: 200, raw: 'application/vnd.iki.model', description: 'The license copy, streamed chunk by chunk, never stored.' },
    errors: [...AUTH, 'MALFORMED_REQUEST', 'LICENSE_NOT_FOUND', 'FORBIDDEN', 'LICENSE_REVOKED', 'LICENSE_SUSPENDED', 'LICENSE_EXPIRED', 'COPY_RATE_LIMITED',
      'TOO_MANY_DOWNLOADS', 'MASTER_MISMATCH', 'RANGE_NOT_SATISFIABLE', ...CRYPTO],
    extra: COPY_RANGES,
    description: 'Downloads are limited per license and per licensee: started within a sliding window (COPY_RATE_LIMITED)'
      + ' and running at once (TOO_MANY_DOWNLOADS), both 429 with Retry-After and details.scope "license" or "user".'
      + ' The licensee name in the copy is the one the license was issued with.'
      + ' Every download of one license is byte-identical (docs/format.md §9); the strong ETag is the SHA-256 of'
      + ' "iki-license-copy" || 0x00 || master SHA-256 || license id || container version (major, minor), in hex. The stored'
      + ' master is checked again while it is copied; when that check fails after the copy started, the transfer is cut'
      + ' (the partial copy has no SIGN, so no reader accepts it) and the failure is logged.' },
  { method: 'post', path: '/api/licenses/{licenseId}/key', summary: 'Release the license key', auth: true, tag: 'licenses',
    body: { schema: 'KeyReleaseRequest' }, ok: { status: 200, schema: 'KeyRelease', description: 'The sealed license key; the release was counted.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, ...JSON_BODY, 'LICENSE_NOT_FOUND', 'FORBIDDEN', 'LICENSE_REVOKED', 'LICENSE_SUSPENDED',
      'LICENSE_EXPIRED', 'WEAK_KEY', 'RATE_LIMITED', ...CRYPTO],
    rateLimited: true },
  { method: 'post', path: '/api/licenses/{licenseId}/revoke', summary: 'Revoke a license (idempotent, final)', auth: true, scope: 'licenses:write', tag: 'licenses',
    body: { schema: 'RevokeRequest' }, ok: { status: 200, schema: 'License', description: 'The license, revoked; repeating keeps the first time.' },
    errors: [...AUTH, ...JSON_BODY, 'MALFORMED_REQUEST', 'LICENSE_NOT_FOUND', 'FORBIDDEN'],
    description: 'Only the master\'s seller may revoke, also a license of the seller\'s own account; the licensee gets FORBIDDEN.'
      + ' Revocation is final: a revoked license is never restored, suspended or reinstated (LICENSE_STATE_CONFLICT); a'
      + ' suspended license can be revoked. To pause a license, suspend it (POST /api/licenses/{licenseId}/suspend).' },
  { method: 'get', path: '/api/keys/service', summary: 'The service\'s public keys', auth: false, tag: 'keys',
    ok: { status: 200, schema: 'ServiceKeys', description: 'Base64url public keys.' }, errors: CRYPTO },
  { method: 'post', path: '/api/keys/signing', summary: 'Register a device signing key', auth: true, tag: 'keys',
    body: { schema: 'RegisterSigningKeyRequest' },
    ok: { status: 201, schema: 'RegisteredSigningKey', description: 'Registered (200 when it already was) with a fresh certificate.' },
    errors: [...AUTH, ...JSON_BODY, 'EMAIL_NOT_VERIFIED', 'SIGNING_KEY_TAKEN', 'SIGNING_KEY_REVOKED', 'BAD_SIGNATURE', 'WEAK_KEY', ...CRYPTO] },
  { method: 'get', path: '/api/keys/signing', summary: 'The caller\'s signing keys', auth: true, tag: 'keys',
    ok: { status: 200, schema: 'SigningKeyList', description: 'Every key registered to the caller\'s account, active and revoked, newest first.' },
    errors: AUTH },
  { method: 'get', path: '/api/keys/signing/{publicKey}', summary: 'Status of a signing key', auth: false, tag: 'keys',
    ok: { status: 200, schema: 'PublicSigningKey', description: 'Active or revoked, and its account; not the device name.' }, errors: ['MALFORMED_REQUEST', 'SIGNING_KEY_NOT_FOUND'] },
  { method: 'post', path: '/api/keys/signing/{publicKey}/revoke', summary: 'Revoke a signing key (idempotent)', auth: true, tag: 'keys',
    ok: { status: 200, schema: 'SigningKey', description: 'The key, revoked.' }, errors: ['MALFORMED_REQUEST', ...AUTH, 'SIGNING_KEY_NOT_FOUND'] },
  { method: 'post', path: '/api/keys/wrap', summary: 'Make an account slot for the caller', auth: true, tag: 'keys',
    body: { schema: 'WrapRequest' }, ok: { status: 200, schema: 'WrappedSlot', description: 'The slot blob for the caller\'s account.' },
    errors: [...AUTH, ...JSON_BODY, 'DECRYPT_FAILED', 'WEAK_KEY', ...CRYPTO] },
  { method: 'post', path: '/api/keys/unwrap', summary: 'Open an account slot', auth: true, tag: 'keys',
    body: { schema: 'UnwrapRequest' }, ok: { status: 200, schema: 'SealedKey', description: 'The content key sealed to the given key with context "iki-account-unwrap-v1" || 0x00 || accountId.' },
    errors: [...AUTH, ...JSON_BODY, 'FORBIDDEN', 'INVALID_ARGUMENT', 'UNSUPPORTED_ALGORITHM', 'DECRYPT_FAILED', 'WEAK_KEY', ...CRYPTO],
    description: 'A blob of any length other than 73 bytes is INVALID_ARGUMENT, a blob version other than 1'
      + ' UNSUPPORTED_ALGORITHM, and a blob that does not unwrap for the account id DECRYPT_FAILED (docs/format.md §8.3).' },
  ...SELL_OPS,
  ...ACTIVITY_OPS,
];

const PATH_PARAMS: Record<string, { pattern: string; description: string }> = {
  ...SELL_PATH_PARAMS,
  ...ACTIVITY_PATH_PARAMS,
  masterId: { pattern: MASTER_ID_PATTERN, description: 'Master id.' },
  licenseId: { pattern: LICENSE_ID_PATTERN, description: 'License id: 16 lowercase hex digits (64 random bits).' },
  publicKey: { pattern: KEY32_PATTERN, description: 'Ed25519 public key, unpadded base64url.' },
  sessionId: { pattern: '^[A-Za-z0-9_-]{16}$', description: 'Session id (from the session list).' },
};

const RATE_HEADERS = {
  'RateLimit-Limit': { description: 'Size of the limit with the fewest releases left.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Releases left in that limit.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until its oldest counted release leaves the window.', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'Both limits, e.g. `20;w=3600;comment="per license", 120;w=3600;comment="per user"`.', schema: { type: 'string' } },
};

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds until the request can succeed again (rounded up, at least 1).', schema: { type: 'integer' } },
};

function errorResponses(op: Op): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  // Every operation but this document's own reads the database: an outage (unreachable, not
  // answering within IKI_DB_QUERY_TIMEOUT_MS, full, read-only) is 503 STORAGE_UNAVAILABLE. Any
  // request arriving while the instance drains after SIGTERM is 503 SERVICE_DRAINING.
  const outage: ErrorCode[] = [...(op.path === '/api/openapi.json' ? [] : ['STORAGE_UNAVAILABLE' as const]), 'SERVICE_DRAINING'];
  // A body that stops arriving, or (other than an upload or an identify image) comes too slowly.
  const slowBody: ErrorCode[] = op.body === undefined ? [] : ['REQUEST_TIMEOUT'];
  // A browser request from another site's page that IKI_CORS_ORIGINS does not list (routes/cors.ts).
  for (const code of [...op.errors, ...API_KEY_ERRORS(op), ...slowBody, ...outage, 'ORIGIN_NOT_ALLOWED' as const, 'INTERNAL' as const]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const headers: Record<string, unknown> = status === 503 ? { ...RETRY_AFTER } : status !== 429 ? {}
      : { ...(op.rateLimited === true ? RATE_HEADERS : {}), ...RETRY_AFTER };
    if (status === 416) headers['Content-Range'] = { schema: { type: 'string' }, description: 'bytes */size' };
    if (status === 401) headers['WWW-Authenticate'] = { schema: { type: 'string' }, description: 'Bearer challenge (RFC 6750).' };
    out[String(status)] = {
      description: `Error codes: ${list.join(', ')}.`,
      headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' }, ...headers },
      content: { 'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Error' },
        { properties: { error: { properties: { code: { enum: list } } } } }] } } },
    };
  }
  return out;
}

function operation(op: Op): Record<string, unknown> {
  const params = [...op.path.matchAll(/\{([A-Za-z]+)\}/g)].map((m) => m[1] as string).map((name) => ({
    name, in: 'path', required: true, description: PATH_PARAMS[name]?.description,
    schema: { type: 'string', pattern: PATH_PARAMS[name]?.pattern },
  }));
  if (op.path.endsWith('/events')) {
    params.push({ name: 'limit', in: 'query', required: false, description: '1 to 1000, default 100.',
      schema: { type: 'integer', minimum: 1, maximum: 1000 } as never });
    params.push({ name: 'before', in: 'query', required: false, description: 'Event id to page before.',
      schema: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' } });
  }
  const okContent = op.ok.raw !== undefined
    ? { [op.ok.raw]: { schema: { type: 'string', contentMediaType: op.ok.raw } } }
    : op.ok.schema !== undefined ? { 'application/json': { schema: { $ref: `#/components/schemas/${op.ok.schema}` } } }
      : { 'application/json': { schema: { type: 'object' } } };
  const okHeaders: Record<string, unknown> = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
    ...(op.rateLimited === true ? RATE_HEADERS : {}), ...op.extra?.okHeaders };
  params.push(...(op.extra?.parameters ?? []) as typeof params);
  const result: Record<string, unknown> = {
    operationId: `${op.method}${op.path.replace(/[{}]/g, '').split(/[/.-]/).map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('')}`,
    summary: op.summary, tags: [op.tag], parameters: params,
    security: !op.auth ? [] : op.scope === undefined ? [{ bearer: [] }] : [{ bearer: [] }, { apiKey: [op.scope] }],
    responses: { [String(op.ok.status)]: { description: op.ok.description, headers: okHeaders, content: okContent },
      ...op.extra?.responses, ...errorResponses(op) },
  };
  if (op.description !== undefined) result['description'] = op.description;
  if (op.body !== undefined) {
    result['requestBody'] = 'schema' in op.body
      ? { required: op.body.schema !== 'RevokeRequest' && op.body.schema !== 'RefreshRequest',
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${op.body.schema}` } } } }
      : { required: true, description: op.body.description,
        content: Object.fromEntries(op.body.raw.map((t) => [t, { schema: { type: 'string', contentMediaType: t } }])) };
  }
  return result;
}

/** Every (method, path) the document describes. */
export const DOCUMENTED_ROUTES: readonly string[] = OPS.map((op) => `${op.method.toUpperCase()} ${op.path}`);

/** Builds the document for the running configuration (limits are stated with their values). */
export function buildOpenApi(options: Pick<AppOptions, 'bodyLimits' | 'releaseLimits' | 'signInLimits' | 'mailLimits'
  | 'quotas' | 'service'>): Record<string, unknown> {
  const { bodyLimits: b, releaseLimits: r, signInLimits: s, mailLimits: m, quotas: q } = options;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPS) (paths[op.path] ??= {})[op.method] = operation(op);
  const requestSchemas = Object.fromEntries(REQUEST_SCHEMAS.map(({ $id, ...schema }) => [$id, schema]));
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'iki licensing and key service',
      version: '1.0.0',
      description: [
        'Per-buyer watermarked copies of protected models, key release, and the key service (SPEC "Endpoints").',
        'Versioning: every path under /api is version 1 of the interface. Version 1 only changes additively',
        '(new endpoints, new optional request fields, new response fields, new error codes); clients ignore unknown',
        'response fields. A breaking change would be served under /api/v2 alongside /api.',
        'JSON is camelCase; binary values are unpadded base64url; times are ISO 8601 UTC.',
        'Text fields refuse control characters (U+0000 to U+001F, U+007F to U+009F; the pattern of each field says so):',
        'a request with one is answered 400 VALIDATION_FAILED.',
        'Errors: every error body is {error: {code, message, details?, requestId}}; codes are stable, messages are not.',
        `Limits: key releases ${r.perLicense} per license and ${r.perUser} per user in any sliding ${r.windowSeconds}-second window,`,
        `counted atomically in the database across instances; JSON bodies at most ${b.jsonBytes} bytes; masters at most`,
        `${b.masterBytes} bytes; identify images at most ${b.imageBytes} bytes. Sign-in: ${s.perAddress} failures per e-mail`,
        `address and ${s.perIp} per client address in any sliding ${s.windowSeconds}-second window, then 429 SIGN_IN_THROTTLED.`,
        `Verification e-mails: ${m.perAddress} resend requests per e-mail address (sign-ups count towards it) and ${m.perIp}`,
        `sign-ups and resend requests per client address in any sliding ${m.windowSeconds}-second window, then 429 MAIL_THROTTLED.`,
        `Uploads: ${q.uploads.concurrentPerAccount} running per account (429 TOO_MANY_UPLOADS) and ${q.uploads.storageQuotaBytes}`,
        `bytes of stored masters per account (413 STORAGE_QUOTA_EXCEEDED). License copies: ${q.copies.perLicense} downloads per`,
        `license and ${q.copies.perUser} per licensee in any sliding ${q.copies.windowSeconds}-second window (429 COPY_RATE_LIMITED),`,
        `${q.copies.concurrentPerLicense} running per license and ${q.copies.concurrentPerUser} per licensee (429 TOO_MANY_DOWNLOADS).`,
        `Identify: ${q.identify.perSeller} requests per seller in any sliding ${q.identify.windowSeconds}-second window (429`,
        `IDENTIFY_RATE_LIMITED); images no larger than twice the side and four times the area of the master's largest texture, and ${q.identify.maxPixels} pixels (422`,
        'IMAGE_TOO_LARGE). Every count is kept in the database across instances. A malformed %-escape in a path is 400',
        'MALFORMED_REQUEST.',
        'Other origins: same-origin is the default. A request whose Origin is another site is answered 403 ORIGIN_NOT_ALLOWED',
        'unless that origin is listed in the operator\'s IKI_CORS_ORIGINS; a listed origin gets CORS preflights (OPTIONS, 204,',
        'Access-Control-Max-Age 600) and Access-Control-Allow-Origin of itself, never Access-Control-Allow-Credentials: it',
        'calls with a bearer token, and the cookie routes (/api/sessions/refresh, /api/sessions/sign-out) refuse it.',
        'Every /api response carries Vary: Origin.',
        'Connections (configured, defaults in brackets): a request\'s head must arrive within IKI_HEADERS_TIMEOUT_SECONDS [20]',
        '(408, connection closed); a body that makes no progress for IKI_BODY_TIMEOUT_SECONDS [30] is cut with 408',
        'REQUEST_TIMEOUT, and a JSON body must arrive whole within it; an answer the client takes nothing of for',
        'IKI_TRANSFER_STALL_SECONDS [30] (a license copy nobody reads) is cut; one client address holds at most',
        'IKI_MAX_CONNECTIONS_PER_CLIENT [64] connections (behind a trusted proxy: requests in flight), and a further one is',
        'answered 503 TOO_MANY_CONNECTIONS.',
      ].join(' '),
      license: { name: 'MIT OR Apache-2.0', identifier: 'MIT OR Apache-2.0' },
    },
    servers: [{ url: options.service }],
    tags: ['meta', 'accounts', 'sessions', 'masters', 'licenses', 'keys', 'api-keys', 'webhooks', 'shops', 'activity'].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT',
          description: 'Access token from POST /api/sessions (EdDSA JWT, short-lived) or from the configured OpenID Connect issuer.' },
        apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'iki_sk_',
          description: 'A seller API key (iki_sk_ and 43 base64url characters) from POST /api/api-keys, sent as Authorization:'
            + ' Bearer. An operation lists the scope a key needs; an operation without this scheme refuses every key'
            + ' (API_KEY_NOT_ALLOWED), and a key without the scope gets INSUFFICIENT_SCOPE. A revoked key stops at once on every instance.' },
      },
      headers: { 'X-Request-Id': { description: 'Id of this request, also in error bodies.', schema: { type: 'string' } } },
      schemas: { ...requestSchemas, ...RESPONSE_SCHEMAS, ...ACTIVITY_SCHEMAS, AccountId: { type: 'string', pattern: ACCOUNT_ID_PATTERN } },
    },
  };
}
