/**
 * Keys as handles into WASM (STYLE.md "WASM boundary"): an Ed25519
 * {@link SigningKey} (docs/format.md section 7), an {@link X25519Identity}
 * for recipient slots (section 3.3) and a {@link ContentKey} (section 4) for
 * account slots; plus the key-file text format of docs/format.md section 12
 * and base64url (RFC 4648 section 5, no padding).
 *
 * Secrets stay in WASM memory and are zeroized there when a handle is
 * freed. `exportSeed`/`exportSecret` copy a secret out only to write the
 * user's own key file; callers should `fill(0)` that copy when done.
 */
import type { WasmContentKey, WasmSigningKey, WasmX25519Identity } from '../../pkg/iki_wasm.js';
import { IkiError, callWasm } from './errors.js';
import { checkBytes, checkString } from './streams.js';
import { wasm } from './wasm.js';

/** What every WASM handle has. */
interface Freeable {
  free(): void;
}

let liveHandle: <H extends Freeable>(owner: WasmOwned<H>) => H;

/**
 * Owns one WASM handle. `free()` releases it (the secret inside is zeroized)
 * and may be called more than once; any later use is `INVALID_STATE`.
 */
export abstract class WasmOwned<H extends Freeable> {
  #handle: H | undefined;

  protected constructor(handle: H) {
    this.#handle = handle;
  }

  static {
    liveHandle = <T extends Freeable>(owner: WasmOwned<T>): T => {
      const handle = owner.#handle;
      if (handle === undefined) throw new IkiError('INVALID_STATE', `${owner.constructor.name} was used after free()`);
      return handle;
    };
  }

  /** Releases the handle; the secret it holds is zeroized inside WASM. */
  free(): void {
    const handle = this.#handle;
    this.#handle = undefined;
    handle?.free();
  }
}

/** The live WASM handle of `owner` (for this library's modules only; not re-exported). */
export function handleOf<H extends Freeable>(owner: WasmOwned<H>): H {
  return liveHandle(owner);
}

/** An Ed25519 signing key; the seed stays in WASM. */
export class SigningKey extends WasmOwned<WasmSigningKey> {
  /** A fresh key from the platform's random source. */
  static generate(): SigningKey {
    return new SigningKey(callWasm(() => wasm().WasmSigningKey.generate()));
  }

  /** The key with this 32-byte seed (from a key file). */
  static fromSeed(seed: Uint8Array): SigningKey {
    checkBytes(seed, 'seed', 32);
    return new SigningKey(callWasm(() => wasm().WasmSigningKey.fromSeed(seed)));
  }

  /** The 32-byte public key. */
  get publicKey(): Uint8Array {
    return handleOf(this).publicKey;
  }

  /**
   * The 64-byte proof of possession for registering this key with an account
   * (`POST /api/keys/signing`): a signature over `"IKI-KEY-REGISTRATION-V1" || 0x00 || accountId`.
   */
  registrationProof(accountId: string): Uint8Array {
    if (typeof accountId !== 'string') throw new TypeError('accountId must be a string');
    return callWasm(() => handleOf(this).registrationProof(accountId));
  }

  /** The plain Ed25519 signature (64 bytes) of `message`, as a WebCrypto key gives. */
  sign(message: Uint8Array): Uint8Array {
    checkBytes(message, 'message');
    return callWasm(() => handleOf(this).sign(message));
  }

  /** A copy of the 32-byte seed, only for writing the user's own key file. */
  exportSeed(): Uint8Array {
    return handleOf(this).exportSeed();
  }
}

/** An X25519 identity that opens recipient slots; the secret stays in WASM. */
export class X25519Identity extends WasmOwned<WasmX25519Identity> {
  /** A fresh identity from the platform's random source. */
  static generate(): X25519Identity {
    return new X25519Identity(callWasm(() => wasm().WasmX25519Identity.generate()));
  }

  /** The identity with this 32-byte secret (from a key file). */
  static fromBytes(secret: Uint8Array): X25519Identity {
    checkBytes(secret, 'secret', 32);
    return new X25519Identity(callWasm(() => wasm().WasmX25519Identity.fromBytes(secret)));
  }

  /** The 32-byte public key that recipient slots name. */
  get publicKey(): Uint8Array {
    return handleOf(this).publicKey;
  }

  /** A copy of the 32-byte secret, only for writing the user's own key file. */
  exportSecret(): Uint8Array {
    return handleOf(this).exportSecret();
  }
}

/**
 * A 256-bit content key that stays in WASM: the key of an account-protected
 * file (its account slot's blob wraps it), or a key unwrapped elsewhere.
 */
export class ContentKey extends WasmOwned<WasmContentKey> {
  /** A fresh key from the platform's random source. */
  static generate(): ContentKey {
    return new ContentKey(callWasm(() => wasm().WasmContentKey.generate()));
  }

  /** A content key given as 32 bytes (test vectors; keys obtained outside WASM). */
  static fromBytes(key: Uint8Array): ContentKey {
    checkBytes(key, 'key', 32);
    return new ContentKey(callWasm(() => wasm().WasmContentKey.fromBytes(key)));
  }

  /**
   * Adopts a content-key handle another export returned (for example the
   * account unwrap of ts/src/player.ts); the returned object owns it.
   */
  static fromHandle(handle: WasmContentKey): ContentKey {
    if (!(handle instanceof wasm().WasmContentKey)) throw new TypeError('handle must be a WasmContentKey');
    return new ContentKey(handle);
  }
}

/** The kinds of secret a key file holds. */
export type KeyFileKind = 'ed25519' | 'x25519';

const KEY_FILE_HEADERS: Record<KeyFileKind, string> = {
  ed25519: 'iki-ed25519-secret-v1',
  x25519: 'iki-x25519-secret-v1',
};

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DECODE = new Map([...ALPHABET].map((c, i) => [c, i] as const));

/** base64url without padding (RFC 4648 section 5). */
export function toBase64Url(bytes: Uint8Array): string {
  checkBytes(bytes, 'bytes');
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const [a = 0, b = 0, c = 0] = [bytes[i], bytes[i + 1], bytes[i + 2]];
    const n = (a << 16) | (b << 8) | c;
    const chars = [n >> 18, n >> 12, n >> 6, n].map((v) => ALPHABET[v & 63]).join('');
    out += chars.slice(0, Math.min(4, bytes.length - i + 1));
  }
  return out;
}

/**
 * Decodes base64url without padding. Text that is not canonical base64url
 * (other characters, padding, a dangling character, non-zero spare bits) or
 * that decodes to another length than `expectedLength` is `INVALID_ARGUMENT`.
 */
export function fromBase64Url(text: string, expectedLength?: number): Uint8Array {
  checkString(text, 'text');
  const refuse = (reason: string): never => {
    throw new IkiError('INVALID_ARGUMENT', `not base64url: ${reason}`, { reason });
  };
  if (text.length % 4 === 1) refuse('length');
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let at = 0;
  for (const char of text) {
    const digit = DECODE.get(char);
    if (digit === undefined) refuse('character outside A-Z a-z 0-9 - _');
    value = (value << 6) | (digit as number);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (value >> bits) & 0xff;
      value &= (1 << bits) - 1;
    }
  }
  if (value !== 0) refuse('non-zero spare bits');
  if (expectedLength !== undefined && out.length !== expectedLength) {
    throw new IkiError('INVALID_ARGUMENT', `expected ${expectedLength} bytes, got ${out.length}`, {
      reason: 'length',
      expected: expectedLength,
      actual: out.length,
    });
  }
  return out;
}

/**
 * The key-file text of docs/format.md section 12: a header line naming the
 * kind, then the 32-byte secret in base64url, each line ending in `\n`.
 */
export function encodeKeyFile(kind: KeyFileKind, secret: Uint8Array): string {
  if (kind !== 'ed25519' && kind !== 'x25519') throw new TypeError("kind must be 'ed25519' or 'x25519'");
  checkBytes(secret, 'secret', 32);
  return `${KEY_FILE_HEADERS[kind]}\n${toBase64Url(secret)}\n`;
}

/**
 * Parses a key file (docs/format.md section 12). `\r\n` line ends are
 * accepted; anything else that does not match is `INVALID_ARGUMENT`.
 */
export function decodeKeyFile(text: string): { kind: KeyFileKind; secret: Uint8Array } {
  checkString(text, 'text');
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const kind = (Object.keys(KEY_FILE_HEADERS) as KeyFileKind[]).find((k) => KEY_FILE_HEADERS[k] === lines[0]);
  if (kind === undefined || lines.length !== 2) {
    throw new IkiError('INVALID_ARGUMENT', 'not an iki key file (iki-ed25519-secret-v1 or iki-x25519-secret-v1)', {
      reason: 'key file layout',
    });
  }
  return { kind, secret: fromBase64Url(lines[1] ?? '', 32) };
}
