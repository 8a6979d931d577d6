/**
 * The service's JSON answers that browser code reads, as TypeScript types. The OpenAPI
 * document (`GET /api/openapi.json`, built in server/src/openapi*.ts) is the contract; these
 * types name the fields the pages and workers use, so a change there shows up in the type
 * check here. Times are ISO 8601 strings; keys are unpadded base64url.
 */

/** `POST /api/sessions`. */
export interface SessionAnswer {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  accountId: string;
  sessionId: string;
  refreshExpiresAt: string;
  /** Only when asked for in the body (`refreshTokenIn: "body"`, programs such as the CLI). */
  refreshToken?: string;
}

/** `POST /api/sessions/refresh`: a new access token and who it is for. */
export interface RefreshAnswer extends SessionAnswer {
  email: string;
  name: string;
  emailVerified: boolean;
}

/** One entry of `GET /api/sessions`. */
export interface SessionInfo {
  sessionId: string;
  device: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  current: boolean;
}

/** `POST /api/accounts/verify`. */
export interface AccountAnswer {
  accountId: string;
  email: string;
  name: string;
  emailVerified: boolean;
  createdAt: string;
}

/** `GET /api/keys/service`. */
export interface ServiceKeys {
  service: string;
  x25519PublicKey: string;
  licenseSigningPublicKey: string;
  certificatePublicKey: string;
}

/** An account as a license names it. */
export interface Party {
  accountId: string;
  name: string;
  /** The licensee's e-mail address, given to the license's seller only, when they licensed by it. */
  email?: string;
}

/** A master of the signed-in seller. */
export interface Master {
  masterId: string;
  name: string;
  sha256: string;
  size: number;
  entries: number;
  textures: number;
  signerPublicKey: string;
  createdAt: string;
  licenseCount?: number;
  /** When the seller archived it (no new licenses), or null. */
  archivedAt?: string | null;
  /** Upload answer only: the seller's earlier masters with the same SHA-256, oldest first. */
  duplicateOf?: { masterId: string; name: string; createdAt: string }[];
}

/** A license, to its seller or its licensee. */
export interface License {
  licenseId: string;
  masterId: string;
  masterName: string;
  seller: Party;
  licensee: Party;
  issuedAt: string;
  revokedAt: string | null;
  releaseCount: number;
  /** At the time of the answer (issue 26 item 3). */
  state?: 'active' | 'suspended' | 'expired' | 'revoked';
  /** From this instant on no copy or key is issued; null: never. */
  expiresAt?: string | null;
  suspendedAt?: string | null;
  /** The seller's reference (an order id); present only for the seller. */
  externalRef?: string | null;
}

/** A seller API key as listed (never its secret; issue 26 item 1). */
export interface ApiKey {
  apiKeyId: string;
  name: string;
  /** `iki_sk_…` and the secret's last four characters. */
  hint: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** One event of a license's history. */
export interface LicenseEvent {
  eventId: string;
  at: string;
  kind: 'license_created' | 'release' | 'download' | 'revoke' | 'identify' | 'suspend' | 'reinstate' | 'expire' | 'rate_limited';
  actorId: string;
  details?: Record<string, unknown>;
}

/** `POST /api/licenses/{id}/key`: the license key sealed to the player's ephemeral key. */
export interface KeyRelease {
  licenseId: string;
  algorithm: 'X25519-HKDF-SHA256-XChaCha20Poly1305';
  ephemeralPublicKey: string;
  nonce: string;
  sealedKey: string;
  releaseCount: number;
}

/** The texture of a master a leak was registered on, and the transform found. */
export interface IdentifyTexture {
  path: string;
  width: number;
  height: number;
  /** Leak pixels per texture pixel (0.9: resized to 90 %). */
  scale: { x: number; y: number };
  /** Texture pixels of the leak's top-left corner. */
  offset: { x: number; y: number };
  /** The texture pixels the leak covers. */
  region: { x: number; y: number; width: number; height: number };
  similarity: number;
}

/** Why identify found nothing (docs/watermark.md section 11). */
export type IdentifyReason = 'too_small' | 'too_busy' | 'no_matching_texture' | 'not_marked' | 'time_budget' | 'mixed';

/** An issued license's score against the leak (docs/watermark.md section 12). */
export interface IdentifyCandidate {
  licenseId: string;
  licenseeName: string | null;
  /** Standard deviations of an innocent license's score. */
  score: number;
  /** Upper bound on the probability that an innocent license scores this high in this identify. */
  falseAccusation: number;
  named: boolean;
}

/** What every identify answer says about the issued licenses. */
interface IdentifyScores { match: 'decoded' | 'scored'; mixed: boolean; candidates: IdentifyCandidate[] }

/** `POST /api/licenses/masters/{id}/identify`. */
export type IdentifyResult =
  | { found: false; confidence: number; method: 'blind' | 'registered'; reason: IdentifyReason; texture?: IdentifyTexture;
    capacity?: { confidence: number; reads: boolean; visiblePixels: number }; texturesTried: number } & IdentifyScores
  | { found: true; licenseId: string; confidence: number; method: 'blind' | 'registered'; texture?: IdentifyTexture;
    texturesTried: number; license: License | null } & IdentifyScores;

/** A signing key as `GET /api/keys/signing` lists it. */
export interface SigningKeyView {
  publicKey: string;
  accountId: string;
  name: string;
  status: 'active' | 'revoked';
  createdAt: string;
  revokedAt: string | null;
}
