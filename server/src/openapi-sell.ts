/**
 * The OpenAPI operations and schemas of selling from a shop (issue 26 items 1 to 3): API keys
 * and their scopes, the `Idempotency-Key` of license creation, the seller's license listing,
 * and suspend / reinstate. `openapi.ts` merges them into the document.
 */
import type { ErrorCode } from './errors.js';
import type { Op } from './openapi.js';
import { API_KEY_ID_PATTERN, MAX_ACTIVE_API_KEYS } from './services/api-keys.js';
import { SELLER_PAGE_DEFAULT, SELLER_PAGE_MAX } from './routes/seller.js';
import { MAX_EXTERNAL_REF_CHARS } from './schemas/requests.js';
import { API_KEY_SCOPES } from './storage/seller-records.js';
import { WEBHOOK_OPS, WEBHOOK_PATH_PARAMS, WEBHOOK_SCHEMAS } from './openapi-webhooks.js';

const AUTH: ErrorCode[] = ['UNAUTHENTICATED', 'EMAIL_NOT_VERIFIED'];
const BODY: ErrorCode[] = ['MALFORMED_JSON', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];

/** The API-key refusals an authenticated operation can answer: by its scope, or for every key. */
export const API_KEY_ERRORS = (op: Pick<Op, 'auth' | 'scope'>): ErrorCode[] =>
  (!op.auth ? [] : op.scope === undefined ? ['API_KEY_NOT_ALLOWED'] : ['INSUFFICIENT_SCOPE']);

/** The `Idempotency-Key` request header and the `Idempotent-Replayed` answer header of license creation. */
export const IDEMPOTENCY_HEADER: NonNullable<Op['extra']> = {
  parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
    description: 'The seller\'s key for this creation (1 to 255 visible ASCII characters; a shop\'s order or event id): the'
      + ' same key with the same request answers the same license.' }],
  okHeaders: { 'Idempotent-Replayed': { schema: { const: 'true' },
    description: 'Present when the answer is the license an earlier request with this Idempotency-Key made.' } },
  responses: {},
};

/** What license creation adds for issue 26 (reference, expiry, Idempotency-Key), after its description. */
export const CREATE_LICENSE_NOTE = ' externalRef is the seller\'s reference (an order id): stored, shown to the seller, and searchable with'
  + ' GET /api/seller/licenses?ref=. expiresAt (in the future) ends the license: from that instant on, copies and key'
  + ' releases answer LICENSE_EXPIRED, and the buyer sees the date. With Idempotency-Key (1 to 255 visible ASCII'
  + ' characters, the seller\'s own), the same key and the same request (master, buyer, externalRef, expiresAt) answer'
  + ' the license the first request made, 201 with Idempotent-Replayed: true, from any instance and however often; the'
  + ' same key with another request is IDEMPOTENCY_KEY_REUSED (409). Keys are kept as long as their license (at least'
  + ' 24 hours). A request that failed keeps nothing, so it can be retried with its key; concurrent requests with one'
  + ' key make one license.';

const change = (what: 'suspend' | 'reinstate'): Op => ({
  method: 'post', path: `/api/licenses/{licenseId}/${what}`, auth: true, scope: 'licenses:write', tag: 'licenses',
  summary: what === 'suspend' ? 'Suspend a license (reversible)' : 'Reinstate a suspended license',
  body: { schema: 'RevokeRequest' },
  ok: { status: 200, schema: 'License', description: what === 'suspend' ? 'The license, suspended (repeating keeps the first time).'
    : 'The license, no longer suspended (also when it was not).' },
  errors: ['MALFORMED_REQUEST', 'UNAUTHENTICATED', 'EMAIL_NOT_VERIFIED', ...BODY, 'LICENSE_NOT_FOUND', 'FORBIDDEN', 'LICENSE_STATE_CONFLICT'],
  description: what === 'suspend'
    ? 'The seller only (the licensee gets FORBIDDEN). While suspended, copies and key releases answer LICENSE_SUSPENDED and'
      + ' the buyer sees suspendedAt; reinstating undoes it. A revoked license cannot be suspended (LICENSE_STATE_CONFLICT):'
      + ' revocation is final. The change is in the history (kind suspend, details.reason, details.apiKeyId when an API key made it).'
    : 'The seller only. A revoked license cannot be reinstated (LICENSE_STATE_CONFLICT): revocation is final. An expired'
      + ' license stays expired. Recorded in the history (kind reinstate).',
});

/** The operations of issue 26. */
export const SELL_OPS: Op[] = [
  { method: 'get', path: '/api/api-keys', summary: 'The caller\'s API keys', auth: true, tag: 'api-keys',
    ok: { status: 200, schema: 'ApiKeyList', description: 'Newest first, revoked ones included; never a secret.' }, errors: AUTH },
  { method: 'post', path: '/api/api-keys', summary: 'Create an API key', auth: true, tag: 'api-keys',
    body: { schema: 'CreateApiKeyRequest' },
    ok: { status: 201, schema: 'CreatedApiKey', description: 'The key with its secret, shown this once.' },
    errors: [...AUTH, ...BODY, 'API_KEY_LIMIT_REACHED'],
    description: 'Signed-in sessions only (an API key cannot make keys). The secret is iki_sk_ followed by 43 base64url'
      + ' characters (32 random bytes); the service stores only its SHA-256, so it cannot show it again. A key acts for the'
      + ` account within its scopes (${API_KEY_SCOPES.join(', ')}): each operation names the scope it needs, and every`
      + ' operation that names none (signing in, sessions, the account, API keys, signing keys, master upload, identify, key'
      + ' release, license copies, wrap and unwrap) refuses every key with API_KEY_NOT_ALLOWED. events:read is for coming'
      + ` operations; webhooks:write manages webhook endpoints. At most ${MAX_ACTIVE_API_KEYS} active keys per account.` },
  { method: 'post', path: '/api/api-keys/{apiKeyId}/revoke', summary: 'Revoke an API key (idempotent)', auth: true, tag: 'api-keys',
    ok: { status: 200, schema: 'ApiKey', description: 'The key, revoked; repeating keeps the first time.' },
    errors: ['MALFORMED_REQUEST', ...AUTH, 'API_KEY_NOT_FOUND'],
    description: 'Takes effect at once on every instance: keys are looked up in the database on every request, never cached.' },
  { method: 'get', path: '/api/seller/licenses', summary: 'The caller\'s licenses as a seller, filtered and paged', auth: true,
    scope: 'licenses:read', tag: 'licenses',
    ok: { status: 200, schema: 'SellerLicensePage', description: 'Newest first (issue time, then license id).' },
    errors: ['UNAUTHENTICATED', 'EMAIL_NOT_VERIFIED', 'VALIDATION_FAILED'],
    extra: { okHeaders: {}, responses: {}, parameters: [
      { name: 'masterId', in: 'query', required: false, schema: { type: 'string' }, description: 'Only licenses of this master.' },
      { name: 'buyer', in: 'query', required: false, schema: { type: 'string', maxLength: 254 },
        description: 'Only licenses of this buyer: an account id, or an e-mail address (case-insensitive) matching the licenses '
          + 'made by that address (a license made by account id never reveals or matches its buyer\'s address).' },
      { name: 'state', in: 'query', required: false, schema: { enum: ['active', 'suspended', 'expired', 'revoked'] },
        description: 'Only licenses in this state now (revoked over suspended over expired).' },
      { name: 'ref', in: 'query', required: false, schema: { type: 'string', minLength: 1, maxLength: MAX_EXTERNAL_REF_CHARS },
        description: 'Only licenses with exactly this externalRef.' },
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: SELLER_PAGE_MAX },
        description: `Licenses per page, 1 to ${SELLER_PAGE_MAX}, default ${SELLER_PAGE_DEFAULT}.` },
      { name: 'cursor', in: 'query', required: false, schema: { type: 'string' }, description: 'nextCursor of the previous page.' },
    ] } },
  change('suspend'),
  change('reinstate'),
  ...WEBHOOK_OPS,
];

/** Path parameters of these operations. */
export const SELL_PATH_PARAMS: Record<string, { pattern: string; description: string }> = {
  apiKeyId: { pattern: API_KEY_ID_PATTERN, description: 'API key id (from the key list).' },
  ...WEBHOOK_PATH_PARAMS,
};

const time = { type: 'string', format: 'date-time' } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

const apiKey = {
  type: 'object', required: ['apiKeyId', 'name', 'hint', 'scopes', 'createdAt', 'lastUsedAt', 'revokedAt'],
  properties: {
    apiKeyId: { type: 'string', pattern: API_KEY_ID_PATTERN }, name: { type: 'string' },
    hint: { type: 'string', description: 'iki_sk_… and the secret\'s last four characters.' },
    scopes: { type: 'array', items: { enum: [...API_KEY_SCOPES] } },
    createdAt: time, lastUsedAt: { ...nullableTime, description: 'Last request made with it, or null.' }, revokedAt: nullableTime,
  },
};

/** Response schemas of these operations, and the license fields they add. */
export const SELL_SCHEMAS: Record<string, unknown> = {
  ...WEBHOOK_SCHEMAS,
  ApiKey: apiKey,
  ApiKeyList: { type: 'object', required: ['apiKeys'], properties: { apiKeys: { type: 'array', items: { $ref: '#/components/schemas/ApiKey' } } } },
  CreatedApiKey: { allOf: [{ $ref: '#/components/schemas/ApiKey' }, { type: 'object', required: ['secret'], properties: {
    secret: { type: 'string', pattern: '^iki_sk_[A-Za-z0-9_-]{43}$', description: 'Shown this once; keep it in the shop\'s secret store.' },
  } }] },
  SellerLicensePage: { type: 'object', required: ['licenses', 'nextCursor'], properties: {
    licenses: { type: 'array', items: { $ref: '#/components/schemas/License' } },
    nextCursor: { type: ['string', 'null'], description: 'Pass as cursor for the next page; null on the last page.' },
  } },
};

/** The fields issue 26 adds to a license. */
export const LICENSE_SELL_FIELDS = {
  state: { enum: ['active', 'suspended', 'expired', 'revoked'], description: 'At the time of the answer.' },
  expiresAt: { ...nullableTime, description: 'From this instant on no copy or key is issued (LICENSE_EXPIRED); null: never.' },
  suspendedAt: { ...nullableTime, description: 'When the seller suspended it (LICENSE_SUSPENDED until reinstated), or null.' },
  externalRef: { type: ['string', 'null'], description: 'The seller\'s reference (an order id); present only for the seller.' },
};
