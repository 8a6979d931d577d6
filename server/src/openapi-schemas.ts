/**
 * Response schemas of the OpenAPI document (JSON Schema 2020-12). Request schemas live in
 * `schemas/requests.ts`; these describe what the routes answer, field by field.
 */
import { ERROR_STATUS } from './errors.js';
import { LICENSE_SELL_FIELDS, SELL_SCHEMAS } from './openapi-sell.js';

const str = { type: 'string' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const b64 = (bytes: number) => ({ type: 'string', contentEncoding: 'base64url', description: `${bytes} bytes, unpadded base64url.` });
const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object', required: Object.keys(properties), properties, ...extra,
});

const party = obj({
  accountId: str, name: str,
  email: { type: 'string', description: 'The licensee\'s e-mail address; present only when the license\'s seller asks,'
    + ' and only when they licensed by that address (a license made by account id shows the name only).' },
}, { required: ['accountId', 'name'] });

/** Every response schema, keyed by component name. */
/** Fields of both identify answers: how the license was matched, the mix flag, the scored candidates. */
const CANDIDATE_FIELDS = {
  match: { enum: ['decoded', 'scored'], description: 'decoded: the bits read carry a valid CRC-16; scored: the license was named by its score against the issued licenses.' },
  mixed: { type: 'boolean', description: 'Whether the read looks like several differently licensed copies mixed (strong bits beside many near-zero ones).' },
  candidates: { type: 'array', maxItems: 5, items: { $ref: '#/components/schemas/IdentifyCandidate' },
    description: 'The issued licenses scoring highest against the read, best first.' },
};

export const RESPONSE_SCHEMAS: Record<string, unknown> = {
  ...SELL_SCHEMAS,
  Error: obj({
    error: obj({
      code: { type: 'string', enum: Object.keys(ERROR_STATUS), description: 'Stable SCREAMING_SNAKE code.' },
      message: { type: 'string', description: 'Human-readable, lowercase; may change.' },
      details: { type: 'object', description: 'Small non-secret context (limit, field, scope).' },
      requestId: { type: 'string', description: 'Also sent as X-Request-Id; quote it in support requests.' },
    }, { required: ['code', 'message', 'requestId'] }),
  }),
  Account: obj({ accountId: str, email: str, name: str, emailVerified: { type: 'boolean' }, createdAt: time }),
  VerificationRequested: obj({
    status: { const: 'sent-if-unverified',
      description: 'The same for every address: a new link goes out only when it has an unverified account.' },
  }),
  SignUpAccepted: obj({
    status: { const: 'verification-sent',
      description: 'The same for every address: a link goes out unless the address already has a verified account.' },
  }),
  PasswordResetRequested: obj({ status: { const: 'sent-if-account', description: 'The same for every address.' } }),
  PasswordChanged: obj({ status: { const: 'password-changed' } }),
  Session: obj({
    accessToken: { type: 'string', description: 'JWT (EdDSA) naming the session in sid; send as Authorization: Bearer.' },
    tokenType: { const: 'Bearer' },
    expiresIn: { type: 'integer', description: 'Seconds until the access token expires.' },
    accountId: str, sessionId: str,
    refreshExpiresAt: { ...time, description: 'When the session ends unless refreshed before.' },
    refreshToken: { type: 'string', description: 'Only with refreshTokenIn "body": keep it secret (the CLI keeps it in a mode-0600 file).' },
  }, { required: ['accessToken', 'tokenType', 'expiresIn', 'accountId', 'sessionId', 'refreshExpiresAt'] }),
  RefreshedSession: obj({
    accessToken: str, tokenType: { const: 'Bearer' }, expiresIn: { type: 'integer' }, accountId: str, sessionId: str,
    refreshExpiresAt: time, email: str, name: str, emailVerified: { type: 'boolean' },
    refreshToken: { type: 'string', description: 'When the refresh token came in the body: the same token, to keep.' },
  }, { required: ['accessToken', 'tokenType', 'expiresIn', 'accountId', 'sessionId', 'refreshExpiresAt', 'email', 'name', 'emailVerified'] }),
  SignedOut: obj({ status: { type: 'string', enum: ['signed-out', 'revoked'] } }),
  SessionsRevoked: obj({ revoked: { type: 'integer', description: 'Sessions ended.' } }),
  SessionList: obj({
    sessions: {
      type: 'array',
      items: obj({ sessionId: str, device: { type: 'string', description: 'User-Agent or the name the client gave.' },
        createdAt: time, lastUsedAt: { ...time, description: 'Sign-in or last refresh.' }, expiresAt: time,
        current: { type: 'boolean', description: 'The session of this request.' } }),
    },
  }),
  Master: obj({
    masterId: str, name: str, sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    size: { type: 'integer' }, entries: { type: 'integer' }, textures: { type: 'integer' },
    signerPublicKey: b64(32), createdAt: time, licenseCount: { type: 'integer' },
    archivedAt: { type: ['string', 'null'], format: 'date-time', description: 'When the seller archived it (no new licenses), or null.' },
    signerAccount: { type: ['string', 'null'], description: 'Upload answer only: the account the master\'s key certificate '
      + 'attributes it to (checked against the service\'s certificate key, docs/format.md §7.2), or null without a certificate.' },
    duplicateOf: {
      type: 'array', description: 'Upload answer only: the caller\'s earlier masters with the same SHA-256, oldest first.',
      items: obj({ masterId: str, name: str, createdAt: time }),
    },
  }, { required: ['masterId', 'name', 'sha256', 'size', 'entries', 'textures', 'signerPublicKey', 'createdAt'] }),
  MasterList: obj({ masters: { type: 'array', items: { $ref: '#/components/schemas/Master' } } }),
  License: obj({
    licenseId: { type: 'string', pattern: '^[0-9a-f]{16}$' }, masterId: str, masterName: str,
    seller: party, licensee: party, issuedAt: time, revokedAt: { type: ['string', 'null'], format: 'date-time' },
    releaseCount: { type: 'integer', description: 'Key releases granted so far.' },
    ...LICENSE_SELL_FIELDS,
  }, { required: ['licenseId', 'masterId', 'masterName', 'seller', 'licensee', 'issuedAt', 'revokedAt', 'releaseCount', 'state',
    'expiresAt', 'suspendedAt'] }),
  LicenseList: obj({ licenses: { type: 'array', items: { $ref: '#/components/schemas/License' } } }),
  EventList: obj({
    events: {
      type: 'array',
      items: obj({
        eventId: str, at: time,
        kind: { type: 'string', enum: ['license_created', 'release', 'download', 'revoke', 'identify', 'suspend', 'reinstate', 'expire', 'rate_limited'] },
        actorId: str,
        details: { type: 'object', description: 'Per kind: reason (revoke, suspend, reinstate), externalRef and expiresAt'
          + ' (license_created), range (download), and apiKeyId when the seller made the change with an API key.' },
      }),
    },
    nextBefore: { type: ['string', 'null'], description: 'Pass as `before` for the next page.' },
  }),
  SealedKey: obj({
    algorithm: { const: 'X25519-HKDF-SHA256-XChaCha20Poly1305' },
    ephemeralPublicKey: b64(32), nonce: b64(24), sealedKey: b64(48),
  }, { description: 'A 32-byte key sealed to the caller\'s X25519 key (docs/format.md §8.2).' }),
  KeyRelease: obj({
    licenseId: str, algorithm: { const: 'X25519-HKDF-SHA256-XChaCha20Poly1305' },
    ephemeralPublicKey: { ...b64(32), description: 'The service\'s X25519 public key for this answer, 32 bytes, unpadded'
      + ' base64url. The service keeps one key pair for up to a minute or 4096 releases (docs/format.md §8.2): successive'
      + ' answers may carry the same key; the nonce is fresh in each. Read it from every answer.' },
    nonce: b64(24), sealedKey: b64(48),
    releaseCount: { type: 'integer', description: 'Releases of this license including this one.' },
  }, { description: 'The license key sealed with context "iki-license-key-v1" || 0x00 || licenseId.' }),
  ServiceKeys: obj({
    service: { type: 'string', description: 'Service identifier (base URL), as in license slots.' },
    x25519PublicKey: { ...b64(32), description: 'Recipient key for masters\' recipient slots.' },
    licenseSigningPublicKey: { ...b64(32), description: 'Ed25519 key that signs license copies.' },
    certificatePublicKey: { ...b64(32), description: 'Ed25519 key that signs key certificates.' },
  }),
  PublicSigningKey: obj({
    publicKey: b64(32), accountId: str, status: { type: 'string', enum: ['active', 'revoked'] },
    createdAt: time, revokedAt: { type: ['string', 'null'], format: 'date-time' },
  }),
  SigningKey: obj({
    publicKey: b64(32), accountId: str, name: str, status: { type: 'string', enum: ['active', 'revoked'] },
    createdAt: time, revokedAt: { type: ['string', 'null'], format: 'date-time' },
  }),
  SigningKeyList: obj({ keys: { type: 'array', items: { $ref: '#/components/schemas/SigningKey' } } }),
  RegisteredSigningKey: {
    allOf: [{ $ref: '#/components/schemas/SigningKey' }, obj({
      certificate: { type: 'string', description: 'Key certificate (docs/format.md §7.2), base64url.' },
    })],
  },
  WrappedSlot: obj({ accountId: str, blob: { type: 'string', description: 'Account-slot blob, base64url.' } }),
  TextureMatch: obj({
    path: { type: 'string', description: 'Entry path of the texture in the master.' },
    width: { type: 'integer' }, height: { type: 'integer' },
    scale: { ...obj({ x: { type: 'number' }, y: { type: 'number' } }), description: 'Leak pixels per texture pixel on each axis: 0.9 for a leak resized to 90 %.' },
    offset: { ...obj({ x: { type: 'number' }, y: { type: 'number' } }), description: 'Texture coordinates (pixels) of the leak\'s top-left corner: where a crop starts.' },
    region: { ...obj({ x: { type: 'integer' }, y: { type: 'integer' }, width: { type: 'integer' }, height: { type: 'integer' } }), description: 'The texture pixels the leak covers.' },
    similarity: { type: 'number', description: 'Correlation of the leak and the registered texture (1 is identical); registrations below 0.8 are not used.' },
  }),
  IdentifyCandidate: obj({
    licenseId: { type: 'string', pattern: '^[0-9a-f]{16}$' },
    licenseeName: { type: ['string', 'null'], description: 'The buyer\'s name when the license was issued.' },
    score: { type: 'number', description: 'The license\'s 80 signed bit terms against the read, in standard deviations of an innocent license\'s score (at most about 8.9).' },
    falseAccusation: { type: 'number', minimum: 0, maximum: 1, description: 'Upper bound on the probability that some innocent license scores this high in this identify (issued licenses and reads counted; docs/watermark.md section 12).' },
    named: { type: 'boolean', description: 'Named: falseAccusation at most 1e-9, or at most 1e-6 for the colluders of a mix.' },
  }),
  IdentifyResult: {
    description: 'Blind read first; when it finds nothing, the leak is registered on each texture of the master (resized 25 % to 400 %, turned up to 5 degrees, crops keeping a tenth of a texture, drawn over a background) and read there with the same detector, CRC and threshold, within the time budget (IKI_IDENTIFY_BUDGET_MS; docs/watermark.md section 11). Every license issued for the master is also scored against each read\'s 80 per-bit correlations: a license whose bits no longer decode is still named by its score, and an average of several buyers\'s copies is reported as a mix with its colluders named (docs/watermark.md section 12).',
    oneOf: [
      obj({
        found: { const: false },
        confidence: { type: 'number', description: 'The best read\'s detection score (below 10, or without a valid CRC).' },
        method: { enum: ['blind', 'registered'] },
        reason: { enum: ['too_small', 'too_busy', 'no_matching_texture', 'not_marked', 'time_budget', 'mixed'],
          description: 'too_small / too_busy: even freshly marked, this image would not read (fewer than 64 x 64 visible pixels, or its own noise drowns the mark); no_matching_texture: no texture of this master matches it; not_marked: a texture matches (see texture) but no mark of this master was read; time_budget: the search ran out of time; mixed: a mark of this master is there but several differently licensed copies were mixed (candidates with named true are the colluders the scores name).' },
        texture: { $ref: '#/components/schemas/TextureMatch' },
        capacity: { ...obj({ confidence: { type: 'number' }, reads: { type: 'boolean' }, visiblePixels: { type: 'integer' } }),
          description: 'The detector\'s own measure of this image: a copy marked with a test id and read blind.' },
        texturesTried: { type: 'integer' },
        ...CANDIDATE_FIELDS,
      }, { required: ['found', 'confidence', 'method', 'reason', 'texturesTried', 'match', 'mixed', 'candidates'] }),
      obj({
        found: { const: true }, licenseId: { type: 'string', pattern: '^[0-9a-f]{16}$' },
        confidence: { type: 'number', description: 'Detection score: a z-score of the 80 bit correlations against chance (docs/watermark.md). A read is found only at 10 or more and with a valid CRC-16; marked textures typically score far higher.' },
        method: { enum: ['blind', 'registered'] },
        texture: { $ref: '#/components/schemas/TextureMatch' },
        texturesTried: { type: 'integer' },
        license: { oneOf: [{ $ref: '#/components/schemas/License' }, { type: 'null' }] },
        ...CANDIDATE_FIELDS,
      }, { required: ['found', 'licenseId', 'confidence', 'method', 'texturesTried', 'match', 'mixed', 'candidates', 'license'] }),
    ],
  },
};
