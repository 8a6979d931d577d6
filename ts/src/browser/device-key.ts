/**
 * The browser's signing keys (SPEC "Authentication": project files are signed with the browser's
 * key; docs/format.md 7.3): Ed25519 keys made by WebCrypto as non-extractable and kept as those
 * `CryptoKey`s in IndexedDB (structured cloning keeps them non-extractable), each with a display
 * name and, once registered with an account, its certificate. Their private halves are never
 * exported; `crypto.subtle.exportKey` on them is refused.
 *
 * One key per origin and browser profile signs while nobody is signed in (record `current`),
 * and one key per account that signs in on this browser (record `account:<id>`, issue 24 item
 * 1): a second account in the same profile makes and registers its own key instead of meeting
 * the first account's (which the service refuses, `SIGNING_KEY_TAKEN`), and no account's page
 * ever reads another account's key or id. A key its account revoked is replaced
 * (`DeviceKey.rotate`): the record is overwritten by a new key, so nothing signs with the
 * revoked one again (issue 24 item 2).
 *
 * Where WebCrypto has no Ed25519, the fallback is a seed made and used inside WASM, kept in
 * IndexedDB encrypted with AES-256-GCM under a second, non-extractable WebCrypto key; the page
 * says so (`kind: 'wasm-fallback'`), and docs/format.md 7.3 says what it weakens.
 *
 * No page assumptions: it runs in a page or a worker (IndexedDB and WebCrypto exist in both);
 * the project page and the seller's master export use it from their workers, where the files
 * are signed. Records hold nothing secret in the clear: a `CryptoKey`, or a sealed seed.
 */
import { fromBase64Url, SigningKey, toBase64Url } from '../keys.js';
import { ServiceError, type KeyServiceApi } from '../key-service.js';
import {
  cryptoKeySigner, describeCertificate, keySigner, registerSigner, type CertificateFields, type ExternalSigner, type SignerClaim,
} from '../signer.js';

const DB_NAME = 'iki-device-key';
const DB_VERSION = 1;
const KEYS = 'keys';
const SERVICE = 'service';
/** The record of the key that signs while nobody is signed in. */
const CURRENT = 'current';

/** The record of `accountId`'s key on this browser. */
const accountRecord = (accountId: string): string => `account:${accountId}`;

/** Which of this browser's keys: the signed-out one, or an account's. */
export interface KeyOwner {
  /** The account whose key it is; none for the key that signs while signed out. */
  account?: string;
}

/** What IndexedDB holds for the key. */
type KeyRecord = {
  name: string;
  createdMs: number;
  publicKey: Uint8Array;
  /** The certificate of the account it was registered with (base64url), and that account. */
  certificate?: { accountId: string; text: string };
  /** The account's e-mail address as it signed in here (an account's key only), to name it to the browser's other accounts. */
  email?: string;
} & (
  | { kind: 'webcrypto'; privateKey: CryptoKey; publicCryptoKey: CryptoKey }
  | { kind: 'wasm-fallback'; wrapKey: CryptoKey; iv: Uint8Array; sealedSeed: Uint8Array }
);

/** What is known about the key without using it. */
export interface DeviceKeyInfo {
  kind: 'webcrypto' | 'wasm-fallback';
  name: string;
  /** The public key, base64url: its fingerprint, and what `GET /api/keys/signing/{publicKey}` takes. */
  fingerprint: string;
  publicKey: Uint8Array;
  createdMs: number;
  /** The account it is registered with, when it is. */
  registeredAccount?: string;
  certificateExpiresMs?: number;
}

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });
}

function database(): Promise<IDBDatabase> {
  const open = indexedDB.open(DB_NAME, DB_VERSION);
  open.onupgradeneeded = () => {
    open.result.createObjectStore(KEYS);
    open.result.createObjectStore(SERVICE);
  };
  return request(open);
}

async function withStore<T>(store: string, mode: IDBTransactionMode, fn: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await database();
  try {
    const tx = db.transaction(store, mode);
    const result = await request(fn(tx.objectStore(store)));
    await new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error ?? new Error('IndexedDB transaction failed'));
      tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
    });
    return result;
  } finally {
    db.close();
  }
}

/**
 * Stores `record` under `slot` unless another tab or worker stored a key there first (both made
 * one at once); the key that is stored, so every user of the slot signs with the same key.
 */
async function keepFirst(slot: string, record: KeyRecord): Promise<KeyRecord> {
  try {
    await withStore(KEYS, 'readwrite', (s) => s.add(record, slot));
    return record;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConstraintError') throw error;
    const stored = await withStore<KeyRecord | undefined>(KEYS, 'readonly', (s) => s.get(slot));
    if (stored === undefined) throw error;
    return stored;
  }
}

/** Whether this browser's WebCrypto makes Ed25519 keys. */
export async function webCryptoHasEd25519(): Promise<boolean> {
  try {
    await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify']);
    return true;
  } catch {
    return false;
  }
}

async function newRecord(name: string, fallback: boolean): Promise<KeyRecord> {
  const createdMs = Date.now();
  if (!fallback) {
    const pair = await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify']) as CryptoKeyPair;
    const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
    return { kind: 'webcrypto', name, createdMs, publicKey, privateKey: pair.privateKey, publicCryptoKey: pair.publicKey };
  }
  const wrapKey = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
  const key = SigningKey.generate();
  const seed = key.exportSeed();
  try {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealedSeed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, wrapKey, seed as Uint8Array<ArrayBuffer>));
    return { kind: 'wasm-fallback', name, createdMs, publicKey: key.publicKey, wrapKey, iv, sealedSeed };
  } finally {
    seed.fill(0);
    key.free();
  }
}

/** The browser's signing key (see the module comment). */
export class DeviceKey {
  private constructor(private record: KeyRecord, private readonly slot: string) {}

  /**
   * This origin's key for `account` (or the signed-out key without one), made (and stored) on
   * first use; an existing key is never replaced here (see {@link DeviceKey.rotate}).
   * `fallback` makes a new key with the WASM fallback (tests; it is chosen by itself where
   * WebCrypto has no Ed25519). The WASM module must be loaded for the fallback.
   *
   * A signed-out key that an earlier version registered to `account` becomes that account's key
   * (its certificate names the account), so a browser that already signed for it keeps its key;
   * the next signed-out use makes a new, unregistered signed-out key.
   */
  static async open(options: KeyOwner & { name?: string; fallback?: boolean } = {}): Promise<DeviceKey> {
    const slot = options.account === undefined ? CURRENT : accountRecord(options.account);
    const stored = await withStore<KeyRecord | undefined>(KEYS, 'readonly', (s) => s.get(slot));
    if (stored !== undefined) return new DeviceKey(stored, slot);
    if (options.account === undefined) {
      const record = await newRecord(options.name ?? defaultKeyName(), options.fallback ?? !(await webCryptoHasEd25519()));
      return new DeviceKey(await keepFirst(CURRENT, record), CURRENT);
    }
    const signedOut = await withStore<KeyRecord | undefined>(KEYS, 'readonly', (s) => s.get(CURRENT));
    if (signedOut?.certificate?.accountId === options.account) {
      const kept = await keepFirst(slot, signedOut);
      await withStore(KEYS, 'readwrite', (s) => s.delete(CURRENT));
      return new DeviceKey(kept, slot);
    }
    const record = await newRecord(options.name ?? defaultKeyName(), options.fallback ?? !(await webCryptoHasEd25519()));
    return new DeviceKey(await keepFirst(slot, record), slot);
  }

  /**
   * Replaces `account`'s key on this browser by a new one (after the account revoked it): the
   * old record, private key included, is overwritten, so nothing can sign with it again. The
   * new key is not registered yet.
   */
  static async rotate(account: string, options: { name?: string; fallback?: boolean; email?: string } = {}): Promise<DeviceKey> {
    const slot = accountRecord(account);
    const old = await withStore<KeyRecord | undefined>(KEYS, 'readonly', (s) => s.get(slot));
    const fallback = options.fallback ?? (old === undefined ? !(await webCryptoHasEd25519()) : old.kind === 'wasm-fallback');
    const email = options.email ?? old?.email;
    const record: KeyRecord = { ...await newRecord(options.name ?? old?.name ?? defaultKeyName(), fallback), ...(email === undefined ? {} : { email }) };
    await withStore(KEYS, 'readwrite', (s) => s.put(record, slot));
    return new DeviceKey(record, slot);
  }

  /**
   * `account`'s key on this browser, registered with the account signed in to `keyService`: when
   * the account revoked it, a new key replaces it and is registered (`rotated` says so). Refusals
   * other than the revocation (an unverified address, the service unreachable) are thrown.
   */
  static async registered(keyService: KeyServiceApi, account: string, email?: string): Promise<{ key: DeviceKey; rotated: boolean }> {
    const key = await DeviceKey.open({ account });
    if (email !== undefined && key.record.email !== email) {
      key.record = { ...key.record, email };
      await withStore(KEYS, 'readwrite', (s) => s.put(key.record, key.slot));
    }
    try {
      await key.register(keyService, account);
      return { key, rotated: false };
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SIGNING_KEY_REVOKED') throw error;
    }
    const fresh = await DeviceKey.rotate(account, email === undefined ? {} : { email });
    await fresh.register(keyService, account);
    return { key: fresh, rotated: true };
  }

  /**
   * Whether `account` signed in on this browser (it has a key here), and its e-mail address as it
   * signed in: a file for it can be called "your other account" by this browser's pages.
   */
  static async knownAccount(account: string): Promise<{ email?: string } | undefined> {
    const stored = await withStore<KeyRecord | undefined>(KEYS, 'readonly', (s) => s.get(accountRecord(account)));
    return stored === undefined ? undefined : stored.email === undefined ? {} : { email: stored.email };
  }

  /** Deletes this origin's key for `owner` (the signed-out one by default; a new one is made by the next `open`). */
  static async forget(owner: KeyOwner = {}): Promise<void> {
    await withStore(KEYS, 'readwrite', (s) => s.delete(owner.account === undefined ? CURRENT : accountRecord(owner.account)));
  }

  /** What the page may show. */
  info(): DeviceKeyInfo {
    const r = this.record;
    return {
      kind: r.kind, name: r.name, fingerprint: toBase64Url(r.publicKey), publicKey: r.publicKey.slice(), createdMs: r.createdMs,
      ...(r.certificate === undefined ? {} : { registeredAccount: r.certificate.accountId }),
    };
  }

  /** The stored certificate's fields, when the key is registered. */
  async certificate(): Promise<CertificateFields | undefined> {
    return this.record.certificate === undefined ? undefined : describeCertificate(this.record.certificate.text);
  }

  /**
   * The signer for saving: claims `account` with its certificate when `accountId` is the account
   * it is registered with (a certificate still valid), else a plain `device` key.
   */
  async signer(accountId?: string): Promise<ExternalSigner> {
    const r = this.record;
    const cert = r.certificate;
    let claim: SignerClaim = { kind: 'device', name: r.name };
    if (cert !== undefined && cert.accountId === accountId) {
      const fields = await describeCertificate(cert.text);
      if (fields.expiresMs === 0 || fields.expiresMs > Date.now()) claim = { kind: 'account', name: r.name, account: cert.accountId, certificate: cert.text };
    }
    if (r.kind === 'webcrypto') return cryptoKeySigner({ privateKey: r.privateKey, publicKey: r.publicCryptoKey }, claim);
    return { publicKey: r.publicKey.slice(), claim, sign: (message) => this.signWithSeed(message) };
  }

  /** The fallback: the seed is opened into WASM for one signature, and wiped. */
  private async signWithSeed(message: Uint8Array): Promise<Uint8Array> {
    const r = this.record;
    if (r.kind !== 'wasm-fallback') throw new Error('not a fallback key');
    const seed = new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: r.iv as Uint8Array<ArrayBuffer> }, r.wrapKey,
      r.sealedSeed as Uint8Array<ArrayBuffer>));
    const key = SigningKey.fromSeed(seed);
    seed.fill(0);
    try {
      return await keySigner(key).sign(message);
    } finally {
      key.free();
    }
  }

  /**
   * Registers the key with the account signed in to `keyService` and keeps the certificate.
   * A key that already has a certificate for the account (valid for at least a day) is looked
   * up instead: a key its account revoked (on this page or elsewhere) is refused with
   * `SIGNING_KEY_REVOKED`, so no save claims the account with it (the caller rotates); when the
   * service cannot be reached the certificate stands. The service refuses an unverified e-mail
   * address (`EMAIL_NOT_VERIFIED`) and a revoked key (`SIGNING_KEY_REVOKED`). Only the key of
   * `accountId` (`open({ account })`) registers with it.
   */
  async register(keyService: KeyServiceApi, accountId: string): Promise<void> {
    if (this.slot !== accountRecord(accountId)) throw new TypeError('only the account\'s own key on this browser registers with it');
    const cert = this.record.certificate;
    if (cert?.accountId === accountId) {
      const fields = await describeCertificate(cert.text);
      if (fields.expiresMs === 0 || fields.expiresMs > Date.now() + 86_400_000) {
        const found = await keyService.keyStatus(this.record.publicKey).catch((error: unknown) => {
          if (error instanceof ServiceError && error.code === 'SERVICE_UNREACHABLE') return 'offline' as const;
          throw error;
        });
        if (found === 'offline' || found?.status === 'active') return;
        if (found?.status === 'revoked') throw new ServiceError('SIGNING_KEY_REVOKED', 'the account revoked this browser\'s key', 409);
      }
    }
    const signer = await this.signer();
    const registration = await registerSigner(keyService, signer, this.record.name);
    this.record = { ...this.record, certificate: { accountId: registration.claim.account, text: registration.claim.certificate } };
    await withStore(KEYS, 'readwrite', (s) => s.put(this.record, this.slot));
  }
}

/**
 * A name that says where a key was made ("Chrome on Linux"), shown in the account's key list and
 * when revoking, so its owner can tell their browsers apart. It is not secret and is sent with
 * the registration.
 */
export function defaultKeyName(): string {
  const agent = typeof navigator === 'undefined' ? '' : navigator.userAgent;
  const browser = /Edg\//.test(agent) ? 'Edge' : /Firefox\//.test(agent) ? 'Firefox'
    : /Chrom(e|ium)\//.test(agent) ? 'Chrome' : /Safari\//.test(agent) ? 'Safari' : 'A browser';
  const system = /Android/.test(agent) ? 'Android' : /iPhone|iPad/.test(agent) ? 'iOS' : /Mac OS X/.test(agent) ? 'macOS'
    : /Windows/.test(agent) ? 'Windows' : /CrOS/.test(agent) ? 'ChromeOS' : /Linux/.test(agent) ? 'Linux' : '';
  return system === '' ? browser : `${browser} on ${system}`;
}

/** The key service's certificate key as last seen (the verdict's offline fallback). */
export async function lastKnownIssuer(): Promise<Uint8Array | undefined> {
  const text = await withStore<string | undefined>(SERVICE, 'readonly', (s) => s.get('certificatePublicKey'));
  return text === undefined ? undefined : fromBase64Url(text, 32);
}

/** Remembers the key service's certificate key (public) for the next verdict offline. */
export async function rememberIssuer(key: Uint8Array): Promise<void> {
  await withStore(SERVICE, 'readwrite', (s) => s.put(toBase64Url(key), 'certificatePublicKey'));
}
