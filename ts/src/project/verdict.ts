/**
 * The signer's verdict on an opened file (SPEC "What the service does" 7 and "Errors";
 * docs/format.md section 7.3), decided on the client:
 *
 * - `account`: the signer JSON claims an account and its certificate verifies strictly under
 *   the key service's published certificate key, for this signing key, at the file's
 *   `created_ms` (the one check of `checkSignerCertificate`); then the key's status is looked
 *   up (`GET /api/keys/signing/{publicKey}`): `active`, `revoked`, or `unknown` when the
 *   service cannot be reached (offline; the certificate is then checked against the last
 *   known service key, if the caller kept one);
 * - `device`: a key without a certificate, or whose account claim does not hold (the reason
 *   is given): it says only that this key signed the file;
 * - `modified`: the signature does not verify, or content is damaged: nothing is presented as
 *   signed, and the app shows the content only after the user acknowledged the warning;
 * - `legacy`: a `.rigproj` bundle, which carries no signature at all.
 */
import { IkiError } from '../errors.js';
import { ServiceError, type KeyServiceApi } from '../key-service.js';
import { toBase64Url } from '../keys.js';
import { checkSignerCertificate, type CertificateFields } from '../signer.js';

/** Where the key service's certificate key came from. */
export type IssuerSource = 'service' | 'last-known';

/** The signer of an opened file, as far as the client could check. */
export type Verdict =
  | {
    kind: 'account';
    accountId: string;
    /** The signed-in owner's e-mail address, when the owner is signed in. */
    email?: string;
    publicKey: Uint8Array;
    /** The public key, base64url: what `GET /api/keys/signing/{publicKey}` takes. */
    fingerprint: string;
    /** Whether this app's own key signed it. */
    thisDevice: boolean;
    /** `unknown` when the service could not be asked (offline). */
    revocation: 'active' | 'revoked' | 'unknown';
    offline: boolean;
    issuer: IssuerSource;
    certificate: CertificateFields;
    name?: string;
  }
  | {
    kind: 'device';
    publicKey: Uint8Array;
    fingerprint: string;
    thisDevice: boolean;
    name?: string;
    /** An account claim that does not hold, and why (or why it could not be checked). */
    unverifiedAccount?: { accountId: string; reason: string };
  }
  | {
    kind: 'modified';
    publicKey: Uint8Array;
    fingerprint: string;
    /** The unverified signer JSON, as found. */
    claimedSigner: string;
    /** Entry paths whose content is damaged. */
    damaged: string[];
    /** Whether the signature itself failed (false: it verified, but content is damaged). */
    signatureFailed: boolean;
  }
  | { kind: 'legacy' };

/** What the reader found at the end of a file. */
export interface SignatureFinding {
  publicKey: Uint8Array;
  signerJson: string;
  createdMs: number;
  /** The signature did not verify. */
  modified: boolean;
  /** Paths of damaged entries. */
  damaged: string[];
}

/** Who asks, and what the app knows. */
export interface VerdictContext {
  /** The key service: its certificate key and the revocation look-up. */
  keyService?: KeyServiceApi;
  /** The key service's certificate key as last seen (offline fallback). */
  lastKnownIssuer?: Uint8Array;
  /** This app's own signing key. */
  thisDeviceKey?: Uint8Array;
  /** The signed-in account, for the owner's e-mail. */
  session?: { accountId: string; email?: string };
}

/** The verdict and, when the service answered, its certificate key (to remember). */
export interface VerdictResult {
  verdict: Verdict;
  /** The certificate key fetched from the service now, for the caller to keep as last known. */
  fetchedIssuer?: Uint8Array;
}

const offline = (error: unknown): boolean => error instanceof ServiceError && error.code === 'SERVICE_UNREACHABLE';

function parseClaim(json: string): { kind?: unknown; name?: unknown; account?: unknown } {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null ? value as Record<string, unknown> : {};
  } catch {
    return {};
  }
}

/** The certificate key: fetched, or the last known one when the service is unreachable. */
async function issuerKey(context: VerdictContext): Promise<{ key?: Uint8Array; source?: IssuerSource; fetched?: Uint8Array; why?: string }> {
  if (context.keyService !== undefined) {
    try {
      const key = (await context.keyService.serviceKeys()).certificatePublicKey;
      return { key, source: 'service', fetched: key };
    } catch (error) {
      if (!offline(error)) throw error;
    }
  }
  if (context.lastKnownIssuer !== undefined) return { key: context.lastKnownIssuer, source: 'last-known' };
  return { why: 'not checked: the key service\'s certificate key is unknown here (offline)' };
}

/** Revocation status, `unknown` (offline) when the service cannot be reached. */
async function revocation(context: VerdictContext, publicKey: Uint8Array): Promise<{ status: 'active' | 'revoked' | 'unknown'; offline: boolean }> {
  if (context.keyService === undefined) return { status: 'unknown', offline: true };
  try {
    const found = await context.keyService.keyStatus(publicKey);
    return { status: found?.status ?? 'unknown', offline: false };
  } catch (error) {
    if (offline(error)) return { status: 'unknown', offline: true };
    throw error;
  }
}

/**
 * The verdict of a file whose signature was checked by the reader (see the module comment).
 * Throws only for a service answer that is neither a result nor unreachable (a bug or a
 * misconfigured service); offline is an answer.
 */
export async function decideVerdict(finding: SignatureFinding, context: VerdictContext = {}): Promise<VerdictResult> {
  const fingerprint = toBase64Url(finding.publicKey);
  const thisDevice = context.thisDeviceKey !== undefined && toBase64Url(context.thisDeviceKey) === fingerprint;
  if (finding.modified || finding.damaged.length > 0) {
    return { verdict: { kind: 'modified', publicKey: finding.publicKey, fingerprint, claimedSigner: finding.signerJson,
      damaged: finding.damaged, signatureFailed: finding.modified } };
  }
  const claim = parseClaim(finding.signerJson);
  const name = typeof claim.name === 'string' ? { name: claim.name } : {};
  const device = { kind: 'device' as const, publicKey: finding.publicKey, fingerprint, thisDevice, ...name };
  if (claim.kind !== 'account' || typeof claim.account !== 'string') return { verdict: device };
  const issuer = await issuerKey(context);
  const fetched = issuer.fetched === undefined ? {} : { fetchedIssuer: issuer.fetched };
  if (issuer.key === undefined || issuer.source === undefined) {
    return { verdict: { ...device, unverifiedAccount: { accountId: claim.account, reason: issuer.why ?? 'not checked' } }, ...fetched };
  }
  let certificate: CertificateFields | null;
  try {
    certificate = await checkSignerCertificate(finding.publicKey, finding.signerJson, finding.createdMs, issuer.key);
  } catch (error) {
    if (!(error instanceof IkiError) || error.code !== 'BAD_CERTIFICATE') throw error;
    const reason = String(error.details?.reason ?? error.message);
    return { verdict: { ...device, unverifiedAccount: { accountId: claim.account, reason } }, ...fetched };
  }
  if (certificate === null) return { verdict: device, ...fetched };
  const status = await revocation(context, finding.publicKey);
  const email = context.session?.accountId === certificate.accountId && context.session.email !== undefined
    ? { email: context.session.email } : {};
  return {
    verdict: {
      kind: 'account', accountId: certificate.accountId, ...email, publicKey: finding.publicKey, fingerprint, thisDevice,
      revocation: status.status, offline: status.offline, issuer: issuer.source, certificate, ...name,
    },
    ...fetched,
  };
}

/** One line in plain words, for logs, the CLI and tests. */
export function verdictText(verdict: Verdict): string {
  switch (verdict.kind) {
    case 'account': {
      const state = verdict.revocation === 'revoked' ? 'REVOKED: the account revoked this key'
        : verdict.revocation === 'active' ? 'key active' : 'revocation unknown (offline)';
      return `verified account ${verdict.accountId}${verdict.email === undefined ? '' : ` (${verdict.email})`}; ${state}`;
    }
    case 'device': {
      const own = verdict.thisDevice ? ' (this device\'s key)' : '';
      const claim = verdict.unverifiedAccount === undefined ? ''
        : `; claims account ${verdict.unverifiedAccount.accountId}, ${verdict.unverifiedAccount.reason}`;
      return `unverified device key ${verdict.fingerprint}${own}${claim}`;
    }
    case 'modified':
      return verdict.signatureFailed ? 'modified after it was signed: the signature does not match'
        : `damaged content (${verdict.damaged.join(', ')})`;
    case 'legacy':
      return 'legacy bundle, not signed';
  }
}
