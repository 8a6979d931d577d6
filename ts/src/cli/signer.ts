/**
 * Who `iki pack` says signed a file (docs/format.md 7.1): a plain `device` key, or an
 * `account` signer with the key certificate (7.2) that `iki register-key` wrote next to the
 * key as `<key file>.cert`. The certificate's fields are checked against the signing key
 * here so a mismatch is refused before anything is written; its signature is the readers'
 * and the key service's business (they know the issuer key).
 */
import { open } from 'node:fs/promises';
import type { SignerInfo } from '../container.js';
import { toBase64Url } from '../keys.js';
import { parseCertificate, type CertificateSummary } from './certificate.js';
import { show } from './describe.js';
import { CliError, naming } from './errors.js';
import { inputName } from './files.js';
import type { CliIo } from './io.js';

/** Largest certificate file read, in bytes (a certificate is about 300 characters). */
const MAX_CERTIFICATE_FILE_BYTES = 16 * 1024;
import { createdUnder, MAX_CLOCK_SKEW_MS } from '../signer.js';

export { MAX_CLOCK_SKEW_MS };

/** The certificate file `iki register-key` writes for the key file `keyFile`. */
export const certificateFileOf = (keyFile: string): string => `${keyFile}.cert`;

/** The certificate text of `file`: one line of base64url. Resolves to undefined when `optional` and it does not exist. */
export async function readCertificateFile(file: string, optional = false): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(inputName(file, '--certificate'), 'r');
  } catch (error) {
    if (optional && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const buffer = new Uint8Array(MAX_CERTIFICATE_FILE_BYTES + 1);
    const { bytesRead } = await naming(file, () => handle.read(buffer, 0, buffer.length, 0));
    if (bytesRead > MAX_CERTIFICATE_FILE_BYTES) throw new CliError('BAD_CERTIFICATE', `${file} is not a key certificate (too large)`);
    return Buffer.from(buffer.subarray(0, bytesRead)).toString('utf8').trim();
  } finally {
    await handle.close();
  }
}

/**
 * The certificate's fields, refused unless it certifies `publicKey` and, when `nowMs` is
 * given, is valid then (allowing {@link MAX_CLOCK_SKEW_MS} before its issue time).
 */
export function checkCertificate(text: string, file: string, publicKey: Uint8Array, nowMs?: number): CertificateSummary {
  const parsed = parseCertificate(text);
  if ('error' in parsed) throw new CliError('BAD_CERTIFICATE', `${file} is not a key certificate (${parsed.error})`);
  if (Buffer.compare(Buffer.from(parsed.subjectKey), Buffer.from(publicKey)) !== 0) {
    throw new CliError('BAD_CERTIFICATE', `${file} certifies the key ${toBase64Url(parsed.subjectKey)}, not the signing key `
      + `${toBase64Url(publicKey)} (--key); give the key's own certificate (iki register-key)`);
  }
  if (nowMs === undefined) return parsed;
  if (parsed.expiresMs !== 0 && nowMs >= parsed.expiresMs) {
    throw new CliError('BAD_CERTIFICATE', `${file} expired on ${new Date(parsed.expiresMs).toISOString()}; run iki register-key again`);
  }
  if (parsed.issuedMs > nowMs + MAX_CLOCK_SKEW_MS) {
    throw new CliError('BAD_CERTIFICATE', `${file} is issued on ${new Date(parsed.issuedMs).toISOString()}, in the future; check this machine's clock`);
  }
  return parsed;
}

/** The signer JSON and the file's creation time for `iki pack`. */
export interface PackSigner {
  signer: SignerInfo;
  /** The certificate file used, if any. */
  certificateFile?: string;
  /**
   * The container's `created_ms`: now, or the certificate's issue time when this machine's
   * clock is a little behind the service's (readers apply a certificate only from then on).
   */
  createdMs: number;
}

/**
 * The signer for `--key keyFile`: `account` with the certificate of `--certificate`, else of
 * `<keyFile>.cert` when that exists (said on stderr), else `device`.
 */
export async function packSigner(keyFile: string, certificateOption: string | undefined, publicKey: Uint8Array,
  io: CliIo, nowMs = Date.now()): Promise<PackSigner> {
  const file = certificateOption ?? certificateFileOf(keyFile);
  const text = await readCertificateFile(file, certificateOption === undefined);
  if (text === undefined) return { signer: { kind: 'device' }, createdMs: nowMs };
  const certificate = checkCertificate(text, file, publicKey, nowMs);
  if (certificateOption === undefined) io.err(`iki: note: signing as account ${show(certificate.accountId)} with the certificate ${file}\n`);
  return {
    signer: { kind: 'account', account: certificate.accountId, certificate: text },
    certificateFile: file,
    createdMs: createdUnder(certificate, nowMs),
  };
}
