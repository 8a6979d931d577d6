/**
 * Reads a key certificate (docs/format.md section 7.2) for display and for `pack`'s checks,
 * with the core's one parser (Rust's `KeyCertificate`, through WASM). Whether it attributes a
 * file to its account (signature, issuer = the key service's published key, validity) is the
 * verdict's business (`verdict.ts`, `check_signer`), not this module's.
 */
import type { CertificateFields } from '../signer.js';
import { wasm } from '../wasm.js';

/** The fields of a well-formed certificate. */
export interface CertificateSummary extends CertificateFields {
  version: number;
}

/** The certificate fields, or why the text is not a well-formed certificate. */
export function parseCertificate(text: string): CertificateSummary | { error: string } {
  let fields: CertificateFields;
  try {
    fields = wasm().describeCertificate(text) as CertificateFields;
  } catch (thrown) {
    const reason = (thrown as { details?: { reason?: unknown } }).details?.reason;
    return { error: typeof reason === 'string' ? reason : (thrown as Error).message };
  }
  // Times cross as JS numbers: beyond 2^53 they would not be the certificate's.
  if (fields.issuedMs > Number.MAX_SAFE_INTEGER || fields.expiresMs > Number.MAX_SAFE_INTEGER) return { error: 'time out of range' };
  return { version: 1, ...fields };
}
