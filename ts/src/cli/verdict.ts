/**
 * The signer's verdict in `verify` and `inspect` (docs/format.md 7.3), and opening account
 * files in `verify`, `inspect` and `unpack`, with the library's one check: the certificate is
 * checked in WASM against the key service's certificate key and the key's revocation looked up
 * with `--service <url>`; without it, "not checked (offline)". An account slot opens only for
 * the signed-in account it names (`--service` with `--email` or `--token`), through the key
 * service's unwrap; the content key stays in WASM.
 */
import type { Header, SlotInfo, Unlock, Verified } from '../container.js';
import type { IkiError } from '../errors.js';
import { AccountUnwrap } from '../player.js';
import type { ContentKey } from '../keys.js';
import { decideVerdict, type Verdict } from '../project/verdict.js';
import { show } from './describe.js';
import { CliError } from './errors.js';
import type { CliIo } from './io.js';
import type { UnlockPlan } from './keyfiles.js';
import { parseServiceUrl } from './service-api.js';
import { keyServiceAt, optionalAuthPlan, SESSION_OPTIONS, signedIn, type Session } from './session.js';
import { toBase64Url } from '../keys.js';

/** `--service` and signing in, for the commands that read a file. */
export const SERVICE_READ_OPTIONS = { service: { type: 'string' }, ...SESSION_OPTIONS } as const;

/** The help lines of {@link SERVICE_READ_OPTIONS}. */
export const SERVICE_READ_HELP = `      --service <url>        the iki service that certifies signing keys: check the
                             signer's certificate and whether its key was revoked
                             (without it: "not checked (offline)")
      --email <address>      sign in at --service to open a file protected for your
                             account (the password is asked without echo, or
                             --account-password-file <file>)
      --token <bearer>       an access token instead (default: IKI_TOKEN)
`;

/** The service a command reads with: none, or its base URL and the signed-in account. */
export interface ReadService {
  base?: URL;
  session?: Session;
}

/** Parses `--service` and signs in when `--email` or `--token` was given. */
export async function readService(values: { service?: string; email?: string; token?: string; 'account-password-file'?: string },
  io: CliIo): Promise<ReadService> {
  const plan = optionalAuthPlan(values, ['account-password-file', values['account-password-file']], io);
  if (values.service === undefined) {
    if (values.email !== undefined || values.token !== undefined) throw new CliError('USAGE', '--email and --token sign in at --service; give --service <url>', 2);
    return {};
  }
  const base = parseServiceUrl(values.service);
  // IKI_TOKEN alone does not sign in a read that has no account slot to open; it is used when one does.
  if (plan === undefined) return { base };
  return { base, session: await signedIn(base, plan, values['account-password-file'], io) };
}

/**
 * `plan` extended to account slots: when no password or identity was given and the file has an
 * account slot, it is opened for the signed-in account, or refused naming the account it is for.
 */
export function withAccount(plan: UnlockPlan, service: ReadService): UnlockPlan {
  if (plan.given || service.session === undefined) return plan;
  const session = service.session;
  const keys: ContentKey[] = [];
  const unlock = async (slots: SlotInfo[], refused?: IkiError): Promise<Unlock | undefined> => {
    if (refused !== undefined) throw refused;
    const accounts = slots.filter((s): s is Extract<SlotInfo, { type: 'account' }> => s.type === 'account');
    if (accounts.length === 0) return undefined;
    const slot = accounts.find((s) => s.accountId === session.accountId);
    if (slot === undefined) {
      const named = (accounts[0] as { accountId: string }).accountId;
      throw new CliError('WRONG_ACCOUNT', `the file opens only for the account ${show(named)}, not for ${show(session.accountId)}`);
    }
    const ephemeral = AccountUnwrap.create();
    try {
      const sealed = await session.keyService.unwrap(slot.accountId, slot.blob, ephemeral.publicKey);
      const contentKey = ephemeral.open(slot.accountId, sealed);
      keys.push(contentKey);
      return { contentKey };
    } finally {
      ephemeral.free();
    }
  };
  return { given: true, unlock, free: () => { plan.free(); for (const key of keys) key.free(); } };
}

/** Why `unpack` cannot open an encrypted file without a key: the account it is for, when it has one. */
export function keyRequired(file: string, slots: SlotInfo[] | undefined): CliError {
  const account = slots?.find((s): s is Extract<SlotInfo, { type: 'account' }> => s.type === 'account');
  if (account !== undefined) {
    return new CliError('SIGN_IN_REQUIRED', `${file} opens only for the account ${show(account.accountId)}; `
      + 'give --service <url> and sign in as that account (--email or --token)');
  }
  return new CliError('KEY_REQUIRED', `${file} is encrypted; give --password, --password-file or --identity`);
}

/**
 * The verdict on a file read to its end (its signature verified); none for a license copy,
 * which the service signs as itself (its signer line says so).
 */
export async function fileVerdict(verified: Verified, header: Header, service: ReadService): Promise<Verdict | undefined> {
  if (verified.signer.kind === 'service') return undefined;
  const context = service.base === undefined ? {} : {
    keyService: service.session?.keyService ?? keyServiceAt(service.base),
    ...(service.session === undefined ? {} : { session: { accountId: service.session.accountId } }),
  };
  const { verdict } = await decideVerdict({ publicKey: verified.publicKey, signerJson: verified.signerJson,
    createdMs: header.createdMs, modified: false, damaged: [] }, context);
  return verdict;
}

/** The verdict as plain JSON. */
export function verdictJson(verdict: Verdict): Record<string, unknown> {
  switch (verdict.kind) {
    case 'account':
      return { kind: 'account', accountId: verdict.accountId, publicKey: verdict.fingerprint, revocation: verdict.revocation,
        offline: verdict.offline, issuer: verdict.issuer, certificate: { issuerKey: toBase64Url(verdict.certificate.issuerKey),
          issued: new Date(verdict.certificate.issuedMs).toISOString(),
          expires: verdict.certificate.expiresMs === 0 ? null : new Date(verdict.certificate.expiresMs).toISOString() } };
    case 'device':
      return { kind: 'device', publicKey: verdict.fingerprint, ...(verdict.name === undefined ? {} : { name: verdict.name }),
        ...(verdict.unverifiedAccount === undefined ? {} : { unverifiedAccount: verdict.unverifiedAccount }) };
    default:
      return { kind: verdict.kind };
  }
}
