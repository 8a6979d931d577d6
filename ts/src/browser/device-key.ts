/**
 * The browser's signing key (SPEC "Authentication": project files are signed with the browser's
 * key; docs/format.md 7.3): one Ed25519 key per origin and browser profile, made by WebCrypto as
 * non-extractable and kept as that `CryptoKey` in IndexedDB (structured cloning keeps it
 * non-extractable), with a display name and, once registered with an account, its certificate.
 * Its private half is never exported; `crypto.subtle.exportKey` on it is refused.
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
import type { KeyServiceApi } from '../key-service.js';
import {
  cryptoKeySigner, describeCertificate, keySigner, registerSigner, type CertificateFields, type ExternalSigner, type SignerClaim,
} from '../signer.js';

const DB_NAME = 'iki-device-key';
const DB_VERSION = 1;
const KEYS = 'keys';
const SERVICE = 'service';
const CURRENT = 'current';

/** What IndexedDB holds for the key. */
type KeyRecord = {
  name: string;
  createdMs: number;
  publicKey: Uint8Array;
  /** The certificate of the account it was registered with (base64url), and that account. */
  certificate?: { accountId: string; text: string };
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
  private constructor(private record: KeyRecord) {}

  /**
   * This origin's key, made (and stored) on first use; an existing key is never replaced.
   * `fallback` makes a new key with the WASM fallback (tests; it is chosen by itself where
   * WebCrypto has no Ed25519). The WASM module must be loaded for the fallback.
   */
  static async open(options: { name?: string; fallback?: boolean } = {}): Promise<DeviceKey> {
    const stored = await withStore<KeyRecord | undefined>(KEYS, 'readonly', (s) => s.get(CURRENT));
    if (stored !== undefined) return new DeviceKey(stored);
    const fallback = options.fallback ?? !(await webCryptoHasEd25519());
    const record = await newRecord(options.name ?? 'this browser', fallback);
    await withStore(KEYS, 'readwrite', (s) => s.put(record, CURRENT));
    return new DeviceKey(record);
  }

  /** Deletes this origin's key (a new one is made by the next `open`). */
  static async forget(): Promise<void> {
    await withStore(KEYS, 'readwrite', (s) => s.delete(CURRENT));
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
   * Registers the key with the account signed in to `keyService` (unless it already is, with a
   * certificate valid for at least a day) and keeps the certificate. The service refuses an
   * unverified e-mail address (`EMAIL_NOT_VERIFIED`) and a revoked key (`SIGNING_KEY_REVOKED`).
   */
  async register(keyService: KeyServiceApi, accountId: string): Promise<void> {
    const cert = this.record.certificate;
    if (cert?.accountId === accountId) {
      const fields = await describeCertificate(cert.text);
      if (fields.expiresMs === 0 || fields.expiresMs > Date.now() + 86_400_000) return;
    }
    const signer = await this.signer();
    const registration = await registerSigner(keyService, signer, this.record.name);
    this.record = { ...this.record, certificate: { accountId: registration.claim.account, text: registration.claim.certificate } };
    await withStore(KEYS, 'readwrite', (s) => s.put(this.record, CURRENT));
  }
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
