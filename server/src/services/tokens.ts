/**
 * Access tokens (SPEC "Authentication": header, scheme and issuance are the project's design).
 *
 * Built-in: a JWT (RFC 7519) signed with Ed25519 (`alg: EdDSA`, RFC 8037) sent as
 * `Authorization: Bearer <token>` (RFC 6750). The signing key's 32-byte seed is
 * HKDF-SHA256(root secret, salt = "", info = "access-token-v1"), so every instance holding the
 * root secret accepts every other instance's tokens and nothing else has to be shared. Tokens
 * are short-lived (15 minutes by default) and carry only `sub`, `sid` (the session, checked on
 * every request so a revoked session stops at once), `iss`, `aud`, `iat`, `exp`.
 *
 * External: when an OpenID Connect issuer is configured, tokens whose `iss` is that issuer are
 * verified against its JWKS (fetched and cached by `jose`) and mapped to a mirrored account.
 * The audience is mandatory (`IKI_OIDC_AUDIENCE`), and a token that names an authorized party
 * (`azp`, OpenID Connect Core §2) must name that same client: a token the issuer made for
 * another client is refused (issue 15 item 4).
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { OidcConfig } from '../config.js';
import { ApiError } from '../errors.js';
import type { ExternalIdentity } from '../storage/repository.js';

/** Audience of built-in tokens. */
export const LOCAL_AUDIENCE = 'iki-api';
/** Signature algorithms accepted from an external issuer. */
const EXTERNAL_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'];
/** PKCS #8 prefix of an Ed25519 private key (RFC 8410 §7) before its 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Who a valid token names; a local token names its session too (`sid`). */
export type TokenSubject =
  | { kind: 'local'; accountId: string; sessionId: string | undefined }
  | { kind: 'external'; identity: ExternalIdentity };

/** An issued token. */
export interface IssuedToken {
  accessToken: string;
  expiresIn: number;
}

/** Options of the token service. */
export interface TokenOptions {
  /** Issuer of built-in tokens (the service's public URL). */
  issuer: string;
  ttlSeconds: number;
  /** 32-byte Ed25519 seed (see module comment); copied, then zeroed by the caller. */
  seed: Uint8Array;
  oidc: OidcConfig | undefined;
  now: () => Date;
}

function ed25519FromSeed(seed: Uint8Array): { privateKey: KeyObject; publicKey: KeyObject } {
  const der = Buffer.concat([ED25519_PKCS8_PREFIX, seed]);
  try {
    const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    return { privateKey, publicKey: createPublicKey(privateKey) };
  } finally {
    der.fill(0);
  }
}

/** Verified local tokens remembered at most (a few hundred bytes each). */
const VERIFIED_TOKENS_MAX = 10_000;

const unauthenticated = (): ApiError => new ApiError('UNAUTHENTICATED', 'invalid or expired access token');

/** Issues and verifies access tokens. */
export class TokenService {
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private readonly keyId: string;
  private readonly jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  /** Local tokens whose signature was verified, with their subject and validity (`remember`). */
  private readonly verified = new Map<string, { subject: TokenSubject; expiresAtMs: number }>();

  constructor(private readonly options: TokenOptions) {
    const keys = ed25519FromSeed(options.seed);
    this.privateKey = keys.privateKey;
    this.publicKey = keys.publicKey;
    const raw = this.publicKey.export({ format: 'der', type: 'spki' });
    this.keyId = createHash('sha256').update(raw).digest('base64url').slice(0, 16);
    this.jwks = options.oidc === undefined ? undefined : createRemoteJWKSet(new URL(options.oidc.jwksUrl));
  }

  /** A built-in access token for `accountId` in session `sessionId`. */
  async issue(accountId: string, sessionId: string): Promise<IssuedToken> {
    const nowSeconds = Math.floor(this.options.now().getTime() / 1000);
    const accessToken = await new SignJWT({ sid: sessionId })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: this.keyId })
      .setSubject(accountId)
      .setIssuer(this.options.issuer)
      .setAudience(LOCAL_AUDIENCE)
      .setIssuedAt(nowSeconds)
      .setExpirationTime(nowSeconds + this.options.ttlSeconds)
      .sign(this.privateKey);
    return { accessToken, expiresIn: this.options.ttlSeconds };
  }

  /** Verifies a bearer token; throws `UNAUTHENTICATED` for anything not valid now. */
  async verify(token: string): Promise<TokenSubject> {
    // A local token verified before needs no decoding (issue 28 item 1: the key release's hot path).
    if (this.verified.has(token)) return this.verifyLocal(token);
    let issuer: unknown;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      throw unauthenticated();
    }
    if (issuer === this.options.issuer) return this.verifyLocal(token);
    const oidc = this.options.oidc;
    if (oidc !== undefined && this.jwks !== undefined && issuer === oidc.issuer) {
      return this.verifyExternal(token, oidc, this.jwks);
    }
    throw unauthenticated();
  }

  private async verifyLocal(token: string): Promise<TokenSubject> {
    const nowMs = this.options.now().getTime();
    const known = this.verified.get(token);
    if (known !== undefined) {
      if (nowMs < known.expiresAtMs) return known.subject;
      this.verified.delete(token);
      throw unauthenticated();
    }
    const payload = await jwtVerify(token, this.publicKey, {
      issuer: this.options.issuer, audience: LOCAL_AUDIENCE, algorithms: ['EdDSA'],
      currentDate: this.options.now(), requiredClaims: ['sub', 'exp', 'iat'],
    }).then((r) => r.payload, () => { throw unauthenticated(); });
    const sid = payload['sid'];
    const subject: TokenSubject = { kind: 'local', accountId: String(payload.sub), sessionId: typeof sid === 'string' ? sid : undefined };
    this.remember(token, subject, Number(payload.exp) * 1000);
    return subject;
  }

  /**
   * Keeps a verified local token's subject until the token expires, so the next request with
   * the very same token skips the Ed25519 verification (about a fifth of a key release's CPU
   * on the event loop, measured in bench/RESULTS.md). Only the signature is remembered: the
   * session it names is still checked on every request, so a revocation takes effect at once.
   * Bounded: the oldest entry goes when it is full.
   */
  private remember(token: string, subject: TokenSubject, expiresAtMs: number): void {
    if (this.verified.size >= VERIFIED_TOKENS_MAX) {
      const oldest = this.verified.keys().next();
      if (oldest.done !== true) this.verified.delete(oldest.value);
    }
    this.verified.set(token, { subject, expiresAtMs });
  }

  private async verifyExternal(token: string, oidc: OidcConfig,
    jwks: ReturnType<typeof createRemoteJWKSet>): Promise<TokenSubject> {
    const options = {
      issuer: oidc.issuer, algorithms: EXTERNAL_ALGORITHMS, currentDate: this.options.now(),
      requiredClaims: ['sub', 'exp', 'aud'], audience: oidc.audience,
    };
    const payload = await jwtVerify(token, jwks, options)
      .then((r) => r.payload, () => { throw unauthenticated(); });
    const azp = payload['azp'];
    if (azp !== undefined && azp !== oidc.audience) throw unauthenticated();
    return { kind: 'external', identity: identityOf(oidc.issuer, payload) };
  }
}

function identityOf(issuer: string, claims: JWTPayload): ExternalIdentity {
  const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v.slice(0, 320) : undefined);
  const email = text(claims['email'])?.toLowerCase() ?? '';
  const subject = String(claims.sub);
  return {
    issuer, subject, email,
    emailVerified: email !== '' && claims['email_verified'] === true,
    name: text(claims['name']) ?? text(claims['preferred_username']) ?? (email || subject),
  };
}
