/**
 * Reads a key certificate (docs/format.md section 7.2) for display only. Whether it is valid
 * (signature, issuer = the key service's published key, validity window) is the key
 * service's business; `inspect` says so instead of guessing.
 */

/** The fields of a well-formed certificate. */
export interface CertificateSummary {
  version: number;
  issuerKey: Uint8Array;
  subjectKey: Uint8Array;
  accountId: string;
  issuedMs: number;
  /** 0 = never expires. */
  expiresMs: number;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/u;
const FIXED_BYTES = 1 + 32 + 32 + 2 + 8 + 8 + 64;

/** The certificate fields, or why the text is not a well-formed certificate. */
export function parseCertificate(text: string): CertificateSummary | { error: string } {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return { error: 'not base64url' };
  const bytes = new Uint8Array(Buffer.from(text, 'base64url'));
  if (bytes.length < FIXED_BYTES) return { error: `${bytes.length} bytes is too short` };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = bytes[0] as number;
  if (version !== 1) return { error: `version ${version} is unknown` };
  const idLength = view.getUint16(65, true);
  if (bytes.length !== FIXED_BYTES + idLength) return { error: 'length does not match its account id' };
  let accountId: string;
  try {
    accountId = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(67, 67 + idLength));
  } catch {
    return { error: 'account id is not UTF-8' };
  }
  const at = 67 + idLength;
  const issued = view.getBigUint64(at, true);
  const expires = view.getBigUint64(at + 8, true);
  if (issued > BigInt(Number.MAX_SAFE_INTEGER) || expires > BigInt(Number.MAX_SAFE_INTEGER)) return { error: 'time out of range' };
  return {
    version, issuerKey: bytes.slice(1, 33), subjectKey: bytes.slice(33, 65), accountId,
    issuedMs: Number(issued), expiresMs: Number(expires),
  };
}
