/**
 * The service root secret (SPEC "What the service does" 4; docs/format.md §8).
 *
 * One 32-byte secret from which license keys, account wrapping keys, watermark keys and the
 * service key pairs derive. Those derivations happen inside the WASM key service, which
 * receives the bytes through `RootSecret.expose()`; this module derives only the access-token
 * signing key and the address keys of the sign-in and verification-mail limiters, with
 * HKDF-SHA256 (RFC 5869) and the info labels `access-token-v1`, `sign-in-address-v1` and
 * `mail-address-v1`, and the key that seals stored webhook and shop secrets
 * (`stored-secret-v1`, services/secret-box.ts).
 *
 * Source: `IKI_ROOT_SECRET` (base64url) when configured; in embedded mode it is generated on
 * first start into `<dataDir>/root.key` (mode 0600, base64url text). The file is written whole
 * beside it and then linked into place, which fails when `root.key` exists: two processes
 * starting together end with one secret, and neither reads a file the other is still writing. A key file that group or
 * others may read or write stops the start with a message saying how to fix it.
 *
 * Zeroization: JavaScript cannot promise that no copy survives in the heap; `destroy()` fills
 * the held buffer with zeros when the service closes, and `expose()` hands out a copy that the
 * receiver owns and must clear. `toString`, `toJSON` and `util.inspect` never print the bytes.
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { inspect } from 'node:util';
import type { Logger } from './logger.js';
import { createWhole } from './storage/create-whole.js';

/** Length of the root secret in bytes. */
export const ROOT_SECRET_BYTES = 32;
/** HKDF info label for the access-token Ed25519 seed (HKDF salt is empty). */
export const ACCESS_TOKEN_KEY_LABEL = 'access-token-v1';
/** HKDF info label for the HMAC-SHA256 key of the sign-in failure records' addresses. */
export const SIGN_IN_ADDRESS_KEY_LABEL = 'sign-in-address-v1';
/** HKDF info label for the HMAC-SHA256 key of the verification-mail records' addresses. */
export const MAIL_ADDRESS_KEY_LABEL = 'mail-address-v1';
/** HKDF info label for the ChaCha20-Poly1305 key that seals stored webhook and shop secrets. */
export const STORED_SECRET_KEY_LABEL = 'stored-secret-v1';
/** File name of the generated secret inside the data directory. */
export const ROOT_KEY_FILE = 'root.key';

/** The 32-byte root secret; never printed. */
export class RootSecret {
  readonly #bytes: Uint8Array;

  constructor(bytes: Uint8Array) {
    if (bytes.length !== ROOT_SECRET_BYTES) {
      throw new RangeError(`root secret must be ${ROOT_SECRET_BYTES} bytes, got ${bytes.length}`);
    }
    this.#bytes = Uint8Array.from(bytes);
  }

  /** A copy of the bytes for the WASM key service; the caller zeroizes it after use. */
  expose(): Uint8Array {
    return Uint8Array.from(this.#bytes);
  }

  /** The 32-byte Ed25519 seed that signs access tokens: HKDF-SHA256(root, "", "access-token-v1"). */
  accessTokenSeed(): Uint8Array {
    return new Uint8Array(hkdfSync('sha256', this.#bytes, new Uint8Array(0), ACCESS_TOKEN_KEY_LABEL, 32));
  }

  /**
   * The 32-byte HMAC-SHA256 key under which failed sign-ins record their e-mail address:
   * HKDF-SHA256(root, "", "sign-in-address-v1"). Keyed, so that a copy of the table does not
   * confirm a guessed address.
   */
  signInAddressKey(): Uint8Array {
    return new Uint8Array(hkdfSync('sha256', this.#bytes, new Uint8Array(0), SIGN_IN_ADDRESS_KEY_LABEL, 32));
  }

  /**
   * The 32-byte HMAC-SHA256 key under which verification-mail requests record their e-mail
   * address: HKDF-SHA256(root, "", "mail-address-v1"). A key of its own rather than the
   * sign-in one, so the two tables' rows for one address do not share a value.
   */
  mailAddressKey(): Uint8Array {
    return new Uint8Array(hkdfSync('sha256', this.#bytes, new Uint8Array(0), MAIL_ADDRESS_KEY_LABEL, 32));
  }

  /**
   * The 32-byte ChaCha20-Poly1305 key that seals the secrets the service stores and must read
   * back (webhook and shop signing secrets): HKDF-SHA256(root, "", "stored-secret-v1").
   */
  storedSecretKey(): Uint8Array {
    return new Uint8Array(hkdfSync('sha256', this.#bytes, new Uint8Array(0), STORED_SECRET_KEY_LABEL, 32));
  }

  /** Overwrites the held bytes with zeros. */
  destroy(): void {
    this.#bytes.fill(0);
  }

  toString(): string {
    return 'RootSecret(<redacted>)';
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

function decode(text: string, where: string): RootSecret {
  const trimmed = text.trim();
  const bytes = Buffer.from(trimmed, 'base64url');
  if (bytes.length !== ROOT_SECRET_BYTES || bytes.toString('base64url') !== trimmed) {
    throw new Error(`${where} does not hold a ${ROOT_SECRET_BYTES}-byte base64url root secret`);
  }
  const secret = new RootSecret(bytes);
  bytes.fill(0);
  return secret;
}

async function readKeyFile(path: string, logger: Logger): Promise<RootSecret> {
  const info = await stat(path);
  if ((info.mode & 0o077) !== 0) {
    // Issue 15 item 14: whoever can read this file holds every license key; refuse rather
    // than serve with a secret others may already have copied.
    throw new Error(`${path} is readable or writable by group or others (mode ${(info.mode & 0o777).toString(8)}); `
      + `the root secret may have leaked. Check who could read it, then run: chmod 600 ${path}`);
  }
  logger.info('root secret loaded', { path });
  return decode(await readFile(path, 'utf8'), path);
}

/** Creates the key file unless it exists (written whole, then linked into place); true when this call did. */
async function createKeyFile(path: string): Promise<boolean> {
  if (await stat(path).then(() => true, () => false)) return false;
  const bytes = randomBytes(ROOT_SECRET_BYTES);
  try {
    return await createWhole(path, `${bytes.toString('base64url')}\n`);
  } finally {
    bytes.fill(0);
  }
}

/**
 * Loads the root secret: from `configured` (base64url) when given, otherwise from
 * `<dataDir>/root.key`, generating that file on first start.
 */
export async function loadRootSecret(configured: string | undefined, dataDir: string,
  logger: Logger): Promise<RootSecret> {
  if (configured !== undefined) return decode(configured, 'IKI_ROOT_SECRET');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, ROOT_KEY_FILE);
  if (await createKeyFile(path)) logger.info('generated a new root secret', { path });
  return readKeyFile(path, logger);
}
