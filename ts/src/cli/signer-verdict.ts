/**
 * What `verify` and `inspect` can say about who signed a file (docs/format.md 7.1, 7.2). A
 * signature that verifies proves only that its key signed. The signer JSON may claim more:
 * an account (with a key certificate) or a service, and that claim holds only once the
 * certificate verifies under the key service's key and the key is not revoked. The CLI checks
 * neither yet, so every claim beyond the key is reported unverified, with the reason; never
 * silently. This is the one place that decides it: a fuller verdict (certificate signature,
 * issuer, validity window, revocation lookup) extends {@link signerVerdict}.
 */
import type { Verified } from '../container.js';
import { toBase64Url } from '../keys.js';
import { parseCertificate } from './certificate.js';
import { show } from './describe.js';

/** The verdict on the signer's claim. */
export interface SignerVerdict {
  /** What the signer claims beyond its key: nothing (`key`), an account or a service. */
  claim: 'key' | 'account' | 'service';
  /** Whether the claim was verified; a `key` claim is what the signature itself proves. */
  verified: boolean;
  /** Why a claim is not verified. */
  reason?: string;
}

/** Why an account claim is not verified: the certificate's defects first, then what was not checked. */
function accountReason(verified: Verified): string {
  const { certificate, account } = verified.signer;
  if (certificate === undefined) return 'no key certificate';
  const parsed = parseCertificate(certificate);
  if ('error' in parsed) return `the key certificate is malformed (${parsed.error})`;
  if (Buffer.compare(Buffer.from(parsed.subjectKey), Buffer.from(verified.publicKey)) !== 0) {
    return 'the key certificate is for another key';
  }
  if (parsed.accountId !== account) return `the key certificate names account ${show(parsed.accountId)}`;
  return 'the key certificate was not checked against the key service\'s key';
}

/** The verdict on `verified`'s signer claim. */
export function signerVerdict(verified: Verified): SignerVerdict {
  switch (verified.signer.kind) {
    case 'account':
      return { claim: 'account', verified: false, reason: accountReason(verified) };
    case 'service':
      return { claim: 'service', verified: false, reason: 'the signing key was not checked against the service\'s published key' };
    default:
      return { claim: 'key', verified: true };
  }
}

/** One line about the signer for `verify`'s text output. */
export function signerLine(verified: Verified): string {
  const verdict = signerVerdict(verified);
  const key = toBase64Url(verified.publicKey);
  const { account, service } = verified.signer;
  if (verdict.claim === 'key') return `signed by the device key ${key}; no account is claimed`;
  const who = verdict.claim === 'account' ? `account ${show(account ?? '?')}` : `service ${show(service ?? '?')}`;
  return `signed by the key ${key}, which claims ${who}: UNVERIFIED (${verdict.reason ?? 'not checked'})`;
}
