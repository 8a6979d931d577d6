/**
 * One JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) per request body. Unknown fields
 * are refused everywhere (`additionalProperties: false`). Binary values travel as unpadded
 * base64url (RFC 4648 §5); the patterns pin their exact length and, for fixed sizes, the
 * canonical last character, so a malformed value fails validation before any handler runs.
 * The OpenAPI document embeds these same objects.
 */
import { createShopBody, createWebhookBody, shopSecretBody } from './webhook-requests.js';
import { ACCOUNT_ID_PATTERN, KEY32_PATTERN, SIG64_PATTERN } from '../services/ids.js';
import { API_KEY_SCOPES, type ApiKeyScope } from '../storage/seller-records.js';

/** Longest seller reference of a license (issue 26 item 2). */
export const MAX_EXTERNAL_REF_CHARS = 200;
/** Longest API key name. */
export const MAX_API_KEY_NAME_CHARS = 100;
/** An RFC 3339 date-time with a zone (`Z` or an offset), at most millisecond precision. */
export const DATE_TIME_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,3})?(Z|[+-][0-9]{2}:[0-9]{2})$';

/**
 * A strict addr-spec (RFC 5322 §3.4.1, dot-atom forms only): no quoted local part, no comments,
 * no `<>,"` or spaces, no leading, trailing or doubled dots, a domain of at least two LDH
 * labels, at most 64 characters before the @ (issue 15 item 9: variants of one mailbox must
 * not each get their own mail allowance).
 */
const email = {
  type: 'string', minLength: 3, maxLength: 254,
  pattern: "^(?=.{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    + '@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$',
  description: 'E-mail address (a plain addr-spec such as ada@example.com); compared case-insensitively.',
} as const;
const key32 = {
  type: 'string', pattern: KEY32_PATTERN, description: '32 bytes as unpadded base64url (43 characters).',
} as const;
const nonce24 = { type: 'string', pattern: '^[A-Za-z0-9_-]{32}$', description: '24-byte nonce, base64url.' } as const;
const sealed48 = { type: 'string', pattern: '^[A-Za-z0-9_-]{64}$', description: '48 bytes (32-byte key + tag), base64url.' } as const;

const newPassword = { type: 'string', minLength: 10, maxLength: 1024, description: '10 to 1024 characters.' } as const;

/** `POST /api/accounts`. */
export const signUpBody = {
  $id: 'SignUpRequest',
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password', 'name'],
  properties: {
    email,
    password: { type: 'string', minLength: 10, maxLength: 1024, description: '10 to 1024 characters.' },
    name: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' },
  },
} as const;

/** `POST /api/accounts/verify`. */
export const verifyEmailBody = {
  $id: 'VerifyEmailRequest',
  type: 'object',
  additionalProperties: false,
  required: ['token'],
  properties: {
    token: { ...key32, description: 'The token from the verification link.' },
    password: { ...newPassword, description: 'The account\'s password, chosen by the person at the link. Needed when the '
      + 'link is used away from the browser that signed up (`SIGN_UP_PASSWORD_REQUIRED`); it replaces the password given '
      + 'at sign-up.' },
  },
} as const;

/** `POST /api/accounts/verification`. */
export const resendVerificationBody = {
  $id: 'ResendVerificationRequest',
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: { email: { ...email, description: 'The address of the account waiting for verification.' } },
} as const;

/** `POST /api/sessions`. */
export const signInBody = {
  $id: 'SignInRequest',
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  properties: {
    email, password: { type: 'string', minLength: 1, maxLength: 1024 },
    device: { type: 'string', maxLength: 200, description: 'What to call this session in the list (default: the User-Agent).' },
    refreshTokenIn: {
      type: 'string', enum: ['cookie', 'body'],
      description: '"cookie" (default, browsers): the refresh token is set as an HttpOnly cookie that page scripts never see. '
        + '"body" (the CLI and other programs): it is returned in the answer and must be kept secret.',
    },
  },
} as const;

const refreshToken = { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', description: 'A refresh token from the body of a sign-in.' } as const;

/** `POST /api/sessions/refresh` and `/api/sessions/sign-out`: the body is optional (the cookie otherwise). */
export const refreshBody = {
  $id: 'RefreshRequest',
  type: 'object',
  additionalProperties: false,
  properties: { refreshToken },
} as const;

/** `POST /api/accounts/password-reset`. */
export const passwordResetBody = {
  $id: 'PasswordResetRequest',
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: { email },
} as const;

/** `POST /api/accounts/password-reset/complete`. */
export const passwordResetCompleteBody = {
  $id: 'PasswordResetCompleteRequest',
  type: 'object',
  additionalProperties: false,
  required: ['token', 'password'],
  properties: { token: { ...key32, description: 'The token from the reset link.' }, password: newPassword },
} as const;

/** `POST /api/me/password`. */
export const changePasswordBody = {
  $id: 'ChangePasswordRequest',
  type: 'object',
  additionalProperties: false,
  required: ['currentPassword', 'newPassword'],
  properties: { currentPassword: { type: 'string', minLength: 1, maxLength: 1024 }, newPassword },
} as const;

/** `POST /api/licenses/masters/{id}/licenses`: exactly one of accountId or email. */
export const createLicenseBody = {
  $id: 'CreateLicenseRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: 'Names the buyer by accountId or by email: exactly one of them (else VALIDATION_FAILED).',
  properties: {
    accountId: { type: 'string', pattern: ACCOUNT_ID_PATTERN, description: 'The buyer\'s account id.' },
    email: { ...email, description: 'The buyer\'s verified e-mail address.' },
    externalRef: { type: 'string', minLength: 1, maxLength: MAX_EXTERNAL_REF_CHARS, pattern: '\\S',
      description: `The seller's own reference (an order id), at most ${MAX_EXTERNAL_REF_CHARS} characters; stored, shown to the seller and searchable.` },
    expiresAt: { type: 'string', pattern: DATE_TIME_PATTERN,
      description: 'When the license expires (RFC 3339, in the future): from then on no copy or key is issued (LICENSE_EXPIRED). Absent: never.' },
  },
} as const;

/** `POST /api/api-keys`. */
export const createApiKeyBody = {
  $id: 'CreateApiKeyRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'scopes'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: MAX_API_KEY_NAME_CHARS, pattern: '\\S',
      description: `What the key is for (e.g. "shop server"), at most ${MAX_API_KEY_NAME_CHARS} characters.` },
    scopes: {
      type: 'array', minItems: 1, maxItems: API_KEY_SCOPES.length, uniqueItems: true, items: { type: 'string', enum: [...API_KEY_SCOPES] },
      description: 'What the key may do; nothing else is ever granted to a key.',
    },
  },
} as const;

/** `POST /api/licenses/{id}/key`. */
export const keyReleaseBody = {
  $id: 'KeyReleaseRequest',
  type: 'object',
  additionalProperties: false,
  required: ['publicKey'],
  properties: { publicKey: { ...key32, description: 'The player\'s ephemeral X25519 public key.' } },
} as const;

/** `POST /api/licenses/{id}/revoke` (the body is optional). */
export const revokeBody = {
  $id: 'RevokeRequest',
  type: 'object',
  additionalProperties: false,
  properties: { reason: { type: 'string', maxLength: 500 } },
} as const;

/** `POST /api/keys/signing`. */
export const registerSigningKeyBody = {
  $id: 'RegisterSigningKeyRequest',
  type: 'object',
  additionalProperties: false,
  required: ['publicKey', 'proof'],
  properties: {
    publicKey: { ...key32, description: 'The device\'s Ed25519 public key.' },
    proof: {
      type: 'string', pattern: SIG64_PATTERN,
      description: 'Ed25519 signature by the key over "IKI-KEY-REGISTRATION-V1" || 0x00 || accountId, base64url.',
    },
    name: { type: 'string', maxLength: 256, description: 'Display name of the device.' },
  },
} as const;

/** `PATCH /api/licenses/masters/{id}`: a new name, archiving, or both. */
export const renameMasterBody = {
  $id: 'UpdateMasterRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 256, pattern: '\\S',
      description: 'The master\'s new name: at most 256 bytes of UTF-8, trimmed, not blank.' },
    archived: { type: 'boolean', description: 'true archives the master (no new licenses; the rest goes on), false restores it.' },
  },
} as const;

/** `POST /api/keys/wrap`. */
export const wrapBody = {
  $id: 'WrapRequest',
  type: 'object',
  additionalProperties: false,
  required: ['ephemeralPublicKey', 'nonce', 'sealedKey'],
  properties: { ephemeralPublicKey: key32, nonce: nonce24, sealedKey: sealed48 },
  description: 'A content key sealed to the service X25519 key with context "iki-account-slot-v1" || 0x00 || accountId (docs/format.md §8.3).',
} as const;

/** `POST /api/keys/unwrap`. */
export const unwrapBody = {
  $id: 'UnwrapRequest',
  type: 'object',
  additionalProperties: false,
  required: ['accountId', 'blob', 'publicKey'],
  properties: {
    accountId: { type: 'string', minLength: 1, maxLength: 256, description: 'The account id of the slot.' },
    blob: { type: 'string', minLength: 4, maxLength: 1400, pattern: '^[A-Za-z0-9_-]+$', description: 'The slot blob, base64url.' },
    publicKey: { ...key32, description: 'The caller\'s ephemeral X25519 public key.' },
  },
} as const;

/** Every request body schema, for the OpenAPI document. */
export const REQUEST_SCHEMAS = [
  signUpBody, verifyEmailBody, resendVerificationBody, signInBody, refreshBody, passwordResetBody,
  passwordResetCompleteBody, changePasswordBody, createLicenseBody, keyReleaseBody, revokeBody, createApiKeyBody,
  registerSigningKeyBody, wrapBody, unwrapBody, renameMasterBody, createWebhookBody, createShopBody, shopSecretBody,
] as const;

/**
 * Text refuses control characters: C0 (U+0000 to U+001F, NUL included, which PostgreSQL
 * cannot store in text), DEL and C1 (U+007F to U+009F). One `pattern` in JSON Schema's (and
 * so OpenAPI's) ECMA-262 dialect, which every client generator and fuzzer reads.
 */
export const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';

/** Whether a string pattern may admit a control character: a negated class, `.`, `\s`, `\S`, `\W` or `\D`. */
const mayAdmitControls = (pattern: string) => /\[\^|\\[sSWD]|(^|[^\\])\./u.test(pattern);

/**
 * Gives every string field of `schema` the {@link NO_CONTROL_CHARACTERS} rule: as its
 * `pattern` when it has none, else in an `allOf` beside a pattern that could admit one (a
 * pattern of positive classes, such as base64url's, already refuses them). Run once over
 * every request schema below, so a field added later is covered without a word.
 */
function refuseControlCharacters(schema: Record<string, unknown>): void {
  if (schema['type'] === 'string') {
    const pattern = schema['pattern'];
    if (typeof pattern !== 'string') schema['pattern'] = NO_CONTROL_CHARACTERS;
    else if (pattern !== NO_CONTROL_CHARACTERS && mayAdmitControls(pattern)) schema['allOf'] = [{ pattern: NO_CONTROL_CHARACTERS }];
    return;
  }
  const properties = schema['properties'];
  if (properties !== null && typeof properties === 'object') {
    for (const property of Object.values(properties)) refuseControlCharacters(property as Record<string, unknown>);
  }
}

for (const schema of REQUEST_SCHEMAS) refuseControlCharacters(schema as unknown as Record<string, unknown>);

/** Typed shapes of the bodies above (after validation). */
export interface SignUpInput { email: string; password: string; name: string }
export interface VerifyEmailInput { token: string; password?: string }
export interface ResendVerificationInput { email: string }
export interface SignInInput { email: string; password: string; device?: string; refreshTokenIn?: 'cookie' | 'body' }
export interface RefreshInput { refreshToken?: string }
export interface PasswordResetInput { email: string }
export interface PasswordResetCompleteInput { token: string; password: string }
export interface ChangePasswordInput { currentPassword: string; newPassword: string }
export type CreateLicenseInput = ({ accountId: string } | { email: string }) & { externalRef?: string; expiresAt?: string };
export interface CreateApiKeyInput { name: string; scopes: ApiKeyScope[] }
export interface KeyReleaseInput { publicKey: string }
export interface RevokeInput { reason?: string }
export interface RenameMasterInput { name?: string; archived?: boolean }
export interface RegisterSigningKeyInput { publicKey: string; proof: string; name?: string }
export interface WrapInput { ephemeralPublicKey: string; nonce: string; sealedKey: string }
export interface UnwrapInput { accountId: string; blob: string; publicKey: string }
