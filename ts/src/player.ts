/**
 * The client side of the license and key service (SPEC behaviour rules 4 and 7,
 * docs/format.md sections 8.2, 8.3 and 9): the player's key release and the license copy
 * opened in memory, and the app's side of account slots.
 *
 * A {@link PlayerSession} makes its ephemeral X25519 key pair inside WebAssembly; its public
 * half goes to `POST /api/licenses/{id}/key`, and the sealed answer is opened inside, once.
 * The license key never reaches JavaScript: {@link openLicenseCopy} reads the copy with a
 * reader that unlocks itself, and yields the same `ReadEvent`s as `readContainer` (it is
 * `readContainer` with the `{ player }` unlock), with memory around one chunk.
 */
import type { WasmAccountUnwrap, WasmPlayerSession, WasmReader } from '../../pkg/iki_wasm.js';
import { readContainer, type ReadEvent } from './container.js';
import { callWasm } from './errors.js';
import { ContentKey, handleOf, WasmOwned } from './keys.js';
import { licenseIdToBigInt, sealedKeyFromBytes, sealedKeyToBytes, type SealedKey } from './service.js';
import { checkByteSource, checkBytes, checkString, type ByteSource } from './streams.js';
import { wasm } from './wasm.js';

export type { SealedKey } from './service.js';

/** One key release on the player: an ephemeral key pair, then the license key it accepted. */
export class PlayerSession extends WasmOwned<WasmPlayerSession> {
  /** A session with a fresh ephemeral X25519 key pair. */
  static create(): PlayerSession {
    const { WasmPlayerSession: Session } = wasm();
    return new PlayerSession(callWasm(() => new Session()));
  }

  /** The ephemeral public key (32 bytes) to send with the key request. */
  get publicKey(): Uint8Array {
    return handleOf(this).publicKey;
  }

  /** The license id whose key was accepted, as 16 hex digits. */
  get licenseId(): string | undefined {
    const id = handleOf(this).licenseId;
    return id === undefined ? undefined : id.toString(16).padStart(16, '0');
  }

  /**
   * Opens the service's answer for `licenseId` and keeps the license key inside. The
   * ephemeral secret is spent by the first call, successful or not: a second call is
   * `INVALID_STATE`, an answer for another license or key `DECRYPT_FAILED`.
   */
  acceptLicenseKey(licenseId: string, sealed: SealedKey): void {
    const id = licenseIdToBigInt(licenseId);
    const bytes = sealedKeyToBytes(sealed);
    const inner = handleOf(this);
    callWasm(() => inner.acceptLicenseKey(id, bytes));
  }

  /**
   * @internal A container reader of the license copy that unlocks itself with the accepted
   * key (`INVALID_STATE` before one was accepted); `readContainer`'s `{ player }` unlock and
   * {@link openLicenseCopy} use it.
   */
  openReader(servicePublicKey?: Uint8Array): WasmReader {
    if (servicePublicKey !== undefined) checkBytes(servicePublicKey, 'servicePublicKey', 32);
    const inner = handleOf(this);
    return callWasm(() => inner.openReader(servicePublicKey));
  }
}

/**
 * Reads a license copy (`.ikm`, role `license`) with the key `session` accepted, streaming:
 * `header`, `locked` (its license slot), `manifest`, then each authenticated chunk's
 * plaintext, `entryVerified` per entry, and `end` once the signature verified. With `servicePublicKey` (the service's license-signing key
 * from `GET /api/keys/service`), a copy signed by any other key is `BAD_SIGNATURE`. A copy
 * for another license is `KEY_REQUIRED`; any altered byte fails as in `readContainer`.
 */
export async function* openLicenseCopy(source: ByteSource, session: PlayerSession,
  servicePublicKey?: Uint8Array): AsyncGenerator<ReadEvent> {
  checkByteSource(source, 'source');
  if (!(session instanceof PlayerSession)) throw new TypeError('session must be a PlayerSession');
  if (servicePublicKey !== undefined) checkBytes(servicePublicKey, 'servicePublicKey', 32);
  yield* readContainer(source, { kind: 'model', unlock: { player: { openReader: () => session.openReader(servicePublicKey) } } });
}

/**
 * The app's side of an account slot: `contentKey` sealed to the key service's X25519 key
 * (`x25519PublicKey` of `GET /api/keys/service`) for `accountId`, for `POST /api/keys/wrap`.
 */
export function sealContentKeyForAccount(servicePublicKey: Uint8Array, accountId: string,
  contentKey: ContentKey): SealedKey {
  checkBytes(servicePublicKey, 'servicePublicKey', 32);
  checkString(accountId, 'accountId');
  if (!(contentKey instanceof ContentKey)) throw new TypeError('contentKey must be a ContentKey');
  const key = handleOf(contentKey);
  return sealedKeyFromBytes(callWasm(() => wasm().sealContentKeyForAccount(servicePublicKey, accountId, key)));
}

/** The app's side of `POST /api/keys/unwrap`: an ephemeral key whose answer opens once. */
export class AccountUnwrap extends WasmOwned<WasmAccountUnwrap> {
  /** A fresh ephemeral X25519 key. */
  static create(): AccountUnwrap {
    const { WasmAccountUnwrap: Unwrap } = wasm();
    return new AccountUnwrap(callWasm(() => new Unwrap()));
  }

  /** The public key (32 bytes) to send with the unwrap request. */
  get publicKey(): Uint8Array {
    return handleOf(this).publicKey;
  }

  /**
   * Opens the service's answer for `accountId` into a content key that stays in WASM (free
   * it when done). The ephemeral secret is spent by the first call, successful or not.
   */
  open(accountId: string, sealed: SealedKey): ContentKey {
    checkString(accountId, 'accountId');
    const bytes = sealedKeyToBytes(sealed);
    const inner = handleOf(this);
    return ContentKey.fromHandle(callWasm(() => inner.open(accountId, bytes)));
  }
}
