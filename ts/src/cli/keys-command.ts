/**
 * `iki keys list` and `iki keys revoke`: the signing keys registered to your account on an
 * iki service (`GET /api/keys/signing`, `POST /api/keys/signing/{publicKey}/revoke`). A revoked
 * key's files show as "revoked" to everyone who checks them online; it cannot be registered
 * again. Signing in is as for `register-key`.
 */
import { toBase64Url } from '../keys.js';
import { helpRequested, parseCommand, positionals, printJson, required, type Command } from './args.js';
import { show } from './describe.js';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { loadSigningKey } from './keyfiles.js';
import { parseServiceUrl, showUrl } from './service-api.js';
import { authPlan, signedIn } from './session.js';

const USAGE = `Usage: iki keys list --service <url> (--email <address> | --token <bearer>) [--json]
       iki keys revoke <public key> --service <url> (--email <address> | --token <bearer>) [--json]
       iki keys revoke --key <file> --service <url> ...

Lists the signing keys registered to your account, or revokes one of them. Everyone who
checks a file signed by a revoked key with the service sees it marked revoked.

      --service <url>        the service's base URL, e.g. https://iki.example
      --email <address>      sign in with this address; the password is asked at the
                             terminal without echo
      --password-file <file> with --email: the password on the first line of <file>
      --token <bearer>       use this access token (default: IKI_TOKEN)
  -k, --key <file>           revoke: the key of this key file (instead of its public key)
      --json                 print the keys as JSON
  -h, --help                 show this help
`;

const OPTIONS = {
  service: { type: 'string' },
  email: { type: 'string' },
  'password-file': { type: 'string' },
  token: { type: 'string' },
  key: { type: 'string', short: 'k' },
} as const;

const KEY = /^[A-Za-z0-9_-]{43}$/u;

async function publicKeyOf(given: string | undefined, keyFile: string | undefined): Promise<string> {
  if ((given === undefined) === (keyFile === undefined)) throw new UsageError('give the public key to revoke, or --key <file> (see iki keys --help)');
  if (given !== undefined) {
    if (!KEY.test(given)) throw new UsageError(`${JSON.stringify(given)} is not a base64url Ed25519 public key (43 characters)`);
    return given;
  }
  const key = await loadSigningKey(keyFile as string);
  try {
    return toBase64Url(key.publicKey);
  } finally {
    key.free();
  }
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, OPTIONS);
  if (helpRequested(values, keys, io)) return 0;
  const [action, ...args] = rest;
  if (action !== 'list' && action !== 'revoke') throw new UsageError('give a subcommand: iki keys list, or iki keys revoke (see iki keys --help)');
  const base = parseServiceUrl(required(values.service, 'service', `keys ${action}`));
  const plan = authPlan(values, ['password-file', values['password-file']], io, `keys ${action}`);
  const target = action === 'revoke' ? await publicKeyOf(positionals(args, args.length === 0 ? [] : ['public key'], 'keys revoke')[0], values.key)
    : (positionals(args, [], 'keys list'), undefined);
  const session = await signedIn(base, plan, values['password-file'], io);
  if (target !== undefined) {
    const key = await session.keyService.revokeKey(target);
    if (values.json === true) printJson(io, key);
    else io.out(`revoked ${key.publicKey}${key.name === '' ? '' : ` ("${show(key.name)}")`} of account ${show(key.accountId)} at ${showUrl(base)}; since ${key.revokedAt ?? 'now'}\n`);
    return 0;
  }
  const list = await session.keyService.listKeys();
  if (values.json === true) {
    printJson(io, { accountId: session.accountId, keys: list });
    return 0;
  }
  if (list.length === 0) io.out(`no signing keys are registered to ${show(session.accountId)} at ${showUrl(base)}\n`);
  for (const key of list) {
    const state = key.status === 'revoked' ? `revoked ${key.revokedAt ?? ''}` : 'active';
    io.out(`${key.publicKey}  ${state.padEnd(32)} registered ${key.createdAt}${key.name === '' ? '' : `  "${show(key.name)}"`}\n`);
  }
  return 0;
}

/** The `keys` command. */
export const keys: Command = { name: 'keys', summary: 'list or revoke the signing keys registered to your account', usage: USAGE, run };
