/**
 * What `verify` and `inspect` can say about who signed a file (docs/format.md 7.1, 7.2). A
 * signature that verifies proves only that its key signed. The signer JSON may claim more:
 * an account (with a key certificate) or a service, and that claim holds only once the
 * certificate verifies under the key service's key and the key is not revoked. This is the one
 * place that words it: the full verdict of the core (`../project/verdict.ts`: the certificate
 * checked in WASM against the key service's certificate key, the key's revocation looked up;
 * `verdict.ts` gets it with `--service`) decides an account claim; without it, or when it
 * does not hold, the claim is reported unverified with the reason, never silently.
 */
import type { Verified } from '../container.js';
import { toBase64Url } from '../keys.js';
import { parseCertificate } from './certificate.js';
import { show } from './describe.js';
import type { Verdict } from '../project/verdict.js';

/** The verdict on the signer's claim. */
export interface SignerVerdict {
  /** What the signer claims beyond its key: nothing (`key`), an account or a service. */
  claim: 'key' | 'account' | 'service';
  /** Whether the claim was verified; a `key` claim is what the signature itself proves. */
  verified: boolean;
  /** Why a claim is not verified (or, verified, that its key was revoked). */
  reason?: string;
  /** A verified account claim: the key's status at the service (`unknown` offline). */
  revocation?: 'active' | 'revoked' | 'unknown';
}

/** Why an account claim is not verified: the certificate's defects first, then what the full verdict found. */
function accountReason(verified: Verified, full: Verdict | undefined): string {
  const { certificate, account } = verified.signer;
  if (certificate === undefined) return 'no key certificate';
  const parsed = parseCertificate(certificate);
  if ('error' in parsed) return `the key certificate is malformed (${parsed.error})`;
  if (Buffer.compare(Buffer.from(parsed.subjectKey), Buffer.from(verified.publicKey)) !== 0) {
    return 'the key certificate is for another key';
  }
  if (parsed.accountId !== account) return `the key certificate names account ${show(parsed.accountId)}`;
  const found = full?.kind === 'device' ? full.unverifiedAccount?.reason : undefined;
  if (found === undefined || found.startsWith('not checked')) {
    return 'the key certificate was not checked against the key service\'s key (offline: give --service <url> to check it and the key\'s revocation)';
  }
  return found;
}

/** The verdict on `verified`'s signer claim; `full` is the core's verdict when one was decided. */
export function signerVerdict(verified: Verified, full?: Verdict): SignerVerdict {
  if (full?.kind === 'account') {
    return { claim: 'account', verified: true, revocation: full.revocation,
      ...(full.revocation === 'revoked' ? { reason: 'the account revoked this key' } : {}) };
  }
  switch (verified.signer.kind) {
    case 'account':
      return { claim: 'account', verified: false, reason: accountReason(verified, full) };
    case 'service':
      return { claim: 'service', verified: false, reason: 'the signing key was not checked against the service\'s published key' };
    default:
      return { claim: 'key', verified: true };
  }
}

const REVOCATION: Record<string, string> = {
  active: 'key active', revoked: 'key REVOKED by the account', unknown: 'revocation unknown (the service could not be reached)',
};

/** One line about the signer for `verify`'s text output. */
export function signerLine(verified: Verified, full?: Verdict): string {
  const verdict = signerVerdict(verified, full);
  const key = toBase64Url(verified.publicKey);
  const { account, service } = verified.signer;
  if (verdict.claim === 'account' && verdict.verified) {
    return `signed by the key ${key} for the verified account ${show(account ?? '?')}; ${REVOCATION[verdict.revocation ?? 'unknown']}`;
  }
  if (verdict.claim === 'key') return `signed by the device key ${key}; no account is claimed`;
  const who = verdict.claim === 'account' ? `account ${show(account ?? '?')}` : `service ${show(service ?? '?')}`;
  return `signed by the key ${key}, which claims ${who}: UNVERIFIED (${verdict.reason ?? 'not checked'})`;
}
