/**
 * Who signs and who signed (docs/format.md sections 7, 7.1, 7.2): the external signer that
 * the writer takes (a key that need not live in WASM, such as a browser's non-extractable
 * WebCrypto key), the one check of a signer's account claim (Rust's
 * `iki_format::certificate::check_signer` through WASM, shared with the CLI and the service),
 * a certificate's fields for display, and registering a signer with an account.
 */
import { IkiError, callWasm } from './errors.js';
import type { KeyServiceApi, SigningKeyStatus } from './key-service.js';
import { SigningKey, toBase64Url } from './keys.js';
import { checkBytes, checkString } from './streams.js';
import { loadWasm } from './wasm.js';

/** What the signer JSON claims (section 7.1): a plain device key, or one certified for an account. */
export interface SignerClaim {
  kind: 'device' | 'account';
  /** Display name, at most 256 bytes. */
  name?: string;
  /** With `account`: the account id the certificate names. */
  account?: string;
  /** With `account`: the key certificate, base64url. */
  certificate?: string;
}

/**
 * A key that signs outside this library. `sign` receives the exact message of section 7,
 * `"IKIFMT-SIGNATURE-V1" || 0x00 || SHA-256(file up to the signature)` (52 bytes), and must
 * return its plain Ed25519 signature (RFC 8032 PureEdDSA, 64 bytes), as WebCrypto's
 * `sign({ name: 'Ed25519' }, key, message)` does. The writer checks the signature strictly
 * against `publicKey` before the file's last bytes are released.
 */
export interface ExternalSigner {
  /** The Ed25519 public key (32 bytes). */
  readonly publicKey: Uint8Array;
  /** The signer JSON to write; `{ kind: 'device' }` when absent. */
  readonly claim?: SignerClaim;
  sign(message: Uint8Array): Promise<Uint8Array>;
}

/** A key held in WASM (a key file's, or a browser's fallback key) as an {@link ExternalSigner}. */
export function keySigner(key: SigningKey, claim?: SignerClaim): ExternalSigner {
  if (!(key instanceof SigningKey)) throw new TypeError('key must be a SigningKey');
  if (claim !== undefined) checkClaim(claim, 'claim');
  return { publicKey: key.publicKey, ...(claim === undefined ? {} : { claim }), sign: async (message) => key.sign(message) };
}

/**
 * A WebCrypto Ed25519 key pair as an {@link ExternalSigner}: the private key may be (and in
 * the browser is) non-extractable; only the public key is exported, to name the signer.
 */
export async function cryptoKeySigner(pair: CryptoKeyPair, claim?: SignerClaim): Promise<ExternalSigner> {
  if (claim !== undefined) checkClaim(claim, 'claim');
  const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  return {
    publicKey, ...(claim === undefined ? {} : { claim }),
    sign: async (message) => new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, pair.privateKey, message as Uint8Array<ArrayBuffer>)),
  };
}

/** The fields of a key certificate (section 7.2). Parsed only: nothing is verified. */
export interface CertificateFields {
  accountId: string;
  issuerKey: Uint8Array;
  subjectKey: Uint8Array;
  issuedMs: number;
  /** 0: never expires. */
  expiresMs: number;
}

/** Throws a `TypeError` naming `name` unless `value` is an {@link ExternalSigner}. */
export function checkExternalSigner(value: unknown, name: string): asserts value is ExternalSigner {
  const s = value as ExternalSigner | null;
  if (typeof s !== 'object' || s === null || typeof s.sign !== 'function') throw new TypeError(`${name} must be { publicKey, sign(message) }`);
  checkBytes(s.publicKey, `${name}.publicKey`, 32);
  if (s.claim !== undefined) checkClaim(s.claim, `${name}.claim`);
}

function checkClaim(claim: unknown, name: string): asserts claim is SignerClaim {
  const c = claim as SignerClaim | null;
  if (typeof c !== 'object' || c === null || (c.kind !== 'device' && c.kind !== 'account')) {
    throw new TypeError(`${name}.kind must be 'device' or 'account'`);
  }
  for (const field of ['name', 'account', 'certificate'] as const) {
    if (c[field] !== undefined) checkString(c[field], `${name}.${field}`);
  }
  if (c.kind === 'account' && (c.account === undefined || c.certificate === undefined)) {
    throw new TypeError(`${name} of kind 'account' needs account and certificate`);
  }
}

/**
 * The certificate of an account claim checked as every reader checks it: `null` when the
 * signer JSON claims no account, the certificate's fields when it attributes the file to the
 * claimed account (issued by `trustedIssuer`, the key service's certificate key, for
 * `publicKey`, valid at `createdMs`). Throws `IkiError` `BAD_CERTIFICATE` (details `reason`)
 * when the claim does not hold. Revocation is a separate, online question.
 */
export async function checkSignerCertificate(publicKey: Uint8Array, signerJson: string, createdMs: number,
  trustedIssuer: Uint8Array): Promise<CertificateFields | null> {
  checkBytes(publicKey, 'publicKey', 32);
  checkString(signerJson, 'signerJson');
  checkBytes(trustedIssuer, 'trustedIssuer', 32);
  const w = await loadWasm();
  return callWasm(() => w.checkSignerCertificate(publicKey, signerJson, createdMs, trustedIssuer) as CertificateFields | null);
}

/** A certificate's fields (base64url text) for display; `BAD_CERTIFICATE` when malformed. */
export async function describeCertificate(text: string): Promise<CertificateFields> {
  checkString(text, 'text');
  const w = await loadWasm();
  return callWasm(() => w.describeCertificate(text) as CertificateFields);
}

/** How far a certificate's issue time may lie ahead of this clock (clock skew with the service). */
export const MAX_CLOCK_SKEW_MS = 10 * 60 * 1000;

/**
 * The `created_ms` of a file signed under `certificate` at `nowMs`: now, or the issue time
 * when this clock is a little behind the service's (a certificate applies from its issue
 * time on). Throws `BAD_CERTIFICATE` for a certificate expired at `nowMs` or issued more
 * than {@link MAX_CLOCK_SKEW_MS} ahead.
 */
export function createdUnder(certificate: CertificateFields, nowMs: number): number {
  if (certificate.expiresMs !== 0 && nowMs >= certificate.expiresMs) {
    throw new IkiError('BAD_CERTIFICATE', `the key certificate expired on ${new Date(certificate.expiresMs).toISOString()}`,
      { reason: 'expired' });
  }
  if (certificate.issuedMs > nowMs + MAX_CLOCK_SKEW_MS) {
    throw new IkiError('BAD_CERTIFICATE', `the key certificate is issued on ${new Date(certificate.issuedMs).toISOString()}, in the future; check this clock`,
      { reason: 'issued in the future' });
  }
  return Math.max(nowMs, certificate.issuedMs);
}

/** What {@link registerSigner} got: the account claim to sign with, and the key's record. */
export interface SignerRegistration {
  claim: SignerClaim & { kind: 'account'; account: string; certificate: string };
  certificate: CertificateFields;
  key: SigningKeyStatus;
}

/**
 * Registers `signer`'s key with the signed-in account of `keyService` (`POST
 * /api/keys/signing`): the key signs `"IKI-KEY-REGISTRATION-V1" || 0x00 || accountId` itself
 * (proof of possession), and the certificate answered is checked to certify this key for this
 * account before it is returned. The service refuses an unverified e-mail address
 * (`EMAIL_NOT_VERIFIED`), a revoked key (`SIGNING_KEY_REVOKED`) and another account's key.
 */
export async function registerSigner(keyService: KeyServiceApi, signer: ExternalSigner, name?: string): Promise<SignerRegistration> {
  checkExternalSigner(signer, 'signer');
  const { accountId } = await keyService.me();
  const w = await loadWasm();
  const message = callWasm(() => w.registrationMessage(accountId));
  const proof = await signer.sign(message);
  checkBytes(proof, 'the proof signer.sign returned', 64);
  const answer = await keyService.registerKey(signer.publicKey, proof, name);
  const certificate = await describeCertificate(answer.certificate);
  if (toBase64Url(certificate.subjectKey) !== toBase64Url(signer.publicKey) || certificate.accountId !== accountId) {
    throw new IkiError('BAD_CERTIFICATE', 'the service answered a certificate for another key or account', { reason: 'not for this key' });
  }
  const claim = { kind: 'account' as const, account: accountId, certificate: answer.certificate,
    ...(signer.claim?.name === undefined ? {} : { name: signer.claim.name }) };
  return { claim, certificate, key: answer.key };
}
