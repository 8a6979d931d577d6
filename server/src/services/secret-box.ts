/**
 * Secrets the service must read back (webhook signing secrets, shop signing secrets and
 * Gumroad ping tokens) are stored sealed, not as they are: a copy of the database, a backup or
 * a `pg_dump` does not let anyone sign webhooks as the service or forge a shop's sale.
 *
 * Sealing: ChaCha20-Poly1305 (RFC 8439, node:crypto) under a key derived from the root secret,
 * HKDF-SHA256(root, "", "stored-secret-v1") (`RootSecret.storedSecretKey`), a random 96-bit
 * nonce per value, and the row's place as associated data (`<table>/<id>`), so a sealed value
 * copied into another row does not open. Stored text: `iki-sealed-v1.` + base64url(nonce ‖
 * ciphertext ‖ tag) (docs/format.md §8.5).
 *
 * Rows written before sealing existed hold the plain secret; `open` still reads them, and the
 * start seals them in place (`storage/sealed-secrets.ts`), so they do not stay plain.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { RootSecret } from '../secrets.js';

/** Prefix of a sealed value in the database. */
export const SEALED_PREFIX = 'iki-sealed-v1.';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** Longest secret sealed (a Stripe `whsec_` secret is ~40 bytes; the API refuses far longer ones). */
const MAX_SECRET_BYTES = 4096;

/** A sealed value that does not open: wrong key (another root secret), damaged or moved between rows. */
export class SealedSecretError extends Error {
  constructor(readonly context: string) {
    super(`a stored secret (${context}) does not open with this service's root secret`);
    this.name = 'SealedSecretError';
  }
}

/** Where a sealed value lives; bound into it as associated data. */
export type SecretPlace = { table: 'webhook_endpoints' | 'shop_connections'; id: string };

const placeText = (p: SecretPlace): string => `${p.table}/${p.id}`;

/** Seals and opens stored secrets; holds its key and never prints it. */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== KEY_BYTES) throw new RangeError(`secret box key must be ${KEY_BYTES} bytes`);
    this.#key = Buffer.from(key);
  }

  /** Whether a stored value is sealed (rather than a plain value written before sealing). */
  static isSealed(stored: string): boolean {
    return stored.startsWith(SEALED_PREFIX);
  }

  /** The stored text of `secret` at `place`. The empty string (no secret set) stays empty. */
  seal(secret: string, place: SecretPlace): string {
    if (secret === '') return '';
    const plain = Buffer.from(secret, 'utf8');
    if (plain.length > MAX_SECRET_BYTES) throw new RangeError(`a secret longer than ${MAX_SECRET_BYTES} bytes is not stored`);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('chacha20-poly1305', this.#key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(placeText(place), 'utf8'), { plaintextLength: plain.length });
    const sealed = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    plain.fill(0);
    return SEALED_PREFIX + sealed.toString('base64url');
  }

  /** The secret stored at `place`; a plain (legacy) value is returned as it is. */
  open(stored: string, place: SecretPlace): string {
    if (!SecretBox.isSealed(stored)) return stored;
    const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES || raw.length > NONCE_BYTES + TAG_BYTES + MAX_SECRET_BYTES) {
      throw new SealedSecretError(placeText(place));
    }
    const decipher = createDecipheriv('chacha20-poly1305', this.#key, raw.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(placeText(place), 'utf8'), { plaintextLength: raw.length - NONCE_BYTES - TAG_BYTES });
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    try {
      const plain = Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
      const text = plain.toString('utf8');
      plain.fill(0);
      return text;
    } catch {
      throw new SealedSecretError(placeText(place));
    }
  }

  /** Overwrites the key with zeros (service close). */
  destroy(): void {
    this.#key.fill(0);
  }

  toString(): string {
    return 'SecretBox([redacted])';
  }

  toJSON(): string {
    return this.toString();
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

/** The service's box, keyed by `root`'s `stored-secret-v1` key (the derived bytes are cleared). */
export function secretBox(root: RootSecret): SecretBox {
  const key = root.storedSecretKey();
  try {
    return new SecretBox(key);
  } finally {
    key.fill(0);
  }
}
