/**
 * Seller API keys (issue 26 item 1), for a shop's server to call the API without a person
 * signing in: `iki_sk_` followed by 32 random bytes in base64url, shown once when created and
 * stored only as its SHA-256 (the secret has 256 bits of entropy, so a slow hash would add
 * nothing; a copy of the database opens nothing). Each key has a name and scopes, and records
 * when it was created and last used.
 *
 * A key is looked up on every request in the statement that records its use (no cache), so a
 * revocation committed on any instance refuses the very next request on every instance. What
 * a key may do is its scopes and nothing more: the routes name the scope they need
 * (`RouteDef.scope`), and every route without one (signing in, sessions, the account, API keys
 * themselves, signing keys, key release, license copies, account-slot wrap and unwrap, master
 * upload and identify) refuses a key with `API_KEY_NOT_ALLOWED`.
 *
 * The secret is a JavaScript string once encoded, which cannot be zeroized; the random bytes it
 * came from are zeroed at once, and the secret is only ever returned in the creation answer.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../errors.js';
import type { Repository } from '../storage/repository.js';
import type { ApiKeyRecord, ApiKeyScope } from '../storage/seller-records.js';

/** The prefix every secret starts with, so a leaked key is recognised (secret scanners, logs). */
export const API_KEY_PREFIX = 'iki_sk_';
/** Pattern of a whole secret: the prefix and 43 base64url characters (32 bytes). */
export const API_KEY_SECRET = /^iki_sk_[A-Za-z0-9_-]{43}$/;
/** Pattern of a key id. */
export const API_KEY_ID_PATTERN = '^ak_[0-9a-f]{24}$';
/** Active (not revoked) keys an account may hold at once. */
export const MAX_ACTIVE_API_KEYS = 50;

/** A key as its account sees it (never its secret). */
export interface ApiKeyView {
  apiKeyId: string;
  name: string;
  /** `iki_sk_…` and the secret's last four characters. */
  hint: string;
  scopes: ApiKeyScope[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** Who an API key acts for, and what it may do. */
export interface ApiKeyCaller {
  accountId: string;
  apiKeyId: string;
  scopes: readonly ApiKeyScope[];
}

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** The view of a stored key. */
export function apiKeyView(k: ApiKeyRecord): ApiKeyView {
  return {
    apiKeyId: k.id, name: k.name, hint: `${API_KEY_PREFIX}…${k.hint}`, scopes: [...k.scopes],
    createdAt: k.createdAt.toISOString(), lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
  };
}

/** Creating, listing, revoking and resolving API keys. */
export class ApiKeyService {
  constructor(private readonly deps: { repo: Repository; now: () => Date }) {}

  /** A new key for `accountId`; the answer is the only place its secret ever appears. */
  async create(accountId: string, name: string, scopes: readonly ApiKeyScope[]): Promise<ApiKeyView & { secret: string }> {
    const active = (await this.deps.repo.listApiKeys(accountId)).filter((k) => k.revokedAt === undefined).length;
    if (active >= MAX_ACTIVE_API_KEYS) {
      throw new ApiError('API_KEY_LIMIT_REACHED', `an account holds at most ${MAX_ACTIVE_API_KEYS} active API keys; revoke one first`,
        { limit: MAX_ACTIVE_API_KEYS });
    }
    const random = randomBytes(32);
    const secret = `${API_KEY_PREFIX}${random.toString('base64url')}`;
    random.fill(0);
    const record: Omit<ApiKeyRecord, 'lastUsedAt' | 'revokedAt'> = {
      id: `ak_${randomBytes(12).toString('hex')}`, accountId, name: name.trim(), hint: secret.slice(-4),
      scopes: [...new Set(scopes)], createdAt: this.deps.now(),
    };
    await this.deps.repo.insertApiKey(record, sha256Hex(secret));
    return { ...apiKeyView({ ...record, lastUsedAt: undefined, revokedAt: undefined }), secret };
  }

  /** The account's keys, newest first, revoked ones included. */
  async list(accountId: string): Promise<ApiKeyView[]> {
    return (await this.deps.repo.listApiKeys(accountId)).map(apiKeyView);
  }

  /** Revokes one of the account's keys at once on every instance (idempotent); `API_KEY_NOT_FOUND` otherwise. */
  async revoke(accountId: string, apiKeyId: string): Promise<ApiKeyView> {
    const key = await this.deps.repo.revokeApiKey(apiKeyId, accountId, this.deps.now());
    if (key === undefined) throw new ApiError('API_KEY_NOT_FOUND', 'no such API key of yours');
    return apiKeyView(key);
  }

  /**
   * The account and scopes of a secret, recording its use; `UNAUTHENTICATED` for a secret that
   * is malformed, unknown or revoked (alike, so nothing tells them apart), and for a key whose
   * account is gone or no longer verified.
   */
  async authenticate(secret: string): Promise<ApiKeyCaller> {
    const refused = () => new ApiError('UNAUTHENTICATED', 'invalid or revoked API key');
    if (!API_KEY_SECRET.test(secret)) throw refused();
    const key = await this.deps.repo.useApiKey(sha256Hex(secret), this.deps.now());
    if (key === undefined) throw refused();
    const account = await this.deps.repo.findAccountById(key.accountId);
    if (account?.emailVerified !== true) throw refused();
    return { accountId: key.accountId, apiKeyId: key.id, scopes: key.scopes };
  }
}
