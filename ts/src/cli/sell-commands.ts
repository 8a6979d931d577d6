/**
 * Selling from the command line (issue 26 items 1 to 3), over the service's HTTP API (its
 * OpenAPI document): `iki api-keys create|list|revoke` (a signed-in account's keys; the secret
 * is printed once) and `iki licenses create|list|suspend|reinstate|revoke` (as the seller, with
 * a session or an API key given as `--token iki_sk_…` or `IKI_TOKEN`). `licenses create` takes
 * the seller's reference (`--ref`), an expiry (`--expires`) and an `--idempotency-key`, so a
 * shop's script can retry it safely.
 */
import { helpRequested, parseCommand, positionals, printJson, required, type Command } from './args.js';
import { show } from './describe.js';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { callService, parseServiceUrl } from './service-api.js';
import { accessToken, authPlan, warnPlainHttp } from './session.js';

/** The sign-in options' help, shared by the selling commands. */
export const SIGN_IN = `      --service <url>        the service's base URL, e.g. https://iki.example
      --email <address>      sign in with this address; the password is asked at the
                             terminal without echo
      --password-file <file> with --email: the password on the first line of <file>
      --token <bearer>       use this access token or API key (default: IKI_TOKEN)
      --json                 print the answer as JSON
  -h, --help                 show this help
`;

/** The sign-in options, shared by the selling commands. */
export const AUTH_OPTIONS = {
  service: { type: 'string' },
  email: { type: 'string' },
  'password-file': { type: 'string' },
  token: { type: 'string' },
} as const;

const SCOPES = ['licenses:write', 'licenses:read', 'masters:read', 'events:read', 'webhooks:write'];
const DEFAULT_SCOPES = ['licenses:write', 'licenses:read', 'masters:read'];
const ACCOUNT_ID = /^acct_[0-9a-f]{32}$/u;
const LICENSE_ID = /^[0-9a-f]{16}$/u;
const API_KEY_ID = /^ak_[0-9a-f]{24}$/u;
const MASTER_ID = /^mst_[0-9a-f]{32}$/u;

/** The sign-in option values. */
export type Values = { service?: string; email?: string; token?: string; 'password-file'?: string };

/** The service URL and a bearer token from the sign-in options. */
export async function tokenFor(values: Values, io: CliIo, command: string): Promise<{ base: URL; token: string }> {
  const base = parseServiceUrl(required(values.service, 'service', command));
  const plan = authPlan(values, ['password-file', values['password-file']], io, command);
  warnPlainHttp(base, plan, io);
  return { base, token: await accessToken(base, plan, values['password-file'], io) };
}

const API_KEYS_USAGE = `Usage: iki api-keys create --name <name> [--scope <scope>]... --service <url> (--email <address> | --token <bearer>)
       iki api-keys list --service <url> (--email <address> | --token <bearer>) [--json]
       iki api-keys revoke <api key id> --service <url> (--email <address> | --token <bearer>)

Makes, lists or revokes the API keys a shop's server uses to create and read licenses for
you. A new key's secret (iki_sk_…) is printed once: keep it in the shop's secret settings.
Revoking stops a key at once. An API key can never sign in, change the account, make keys,
download a copy or release a model key. Signing in needs your session, not an API key.

      --name <name>          what the key is for, e.g. "shop server" (create)
      --scope <scope>        what it may do (create; repeat it): ${SCOPES.join(', ')};
                             default: ${DEFAULT_SCOPES.join(', ')}
${SIGN_IN}`;

async function apiKeysRun(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, { ...AUTH_OPTIONS, name: { type: 'string' }, scope: { type: 'string', multiple: true } });
  if (helpRequested(values, apiKeys, io)) return 0;
  const [action, ...args] = rest;
  if (action !== 'create' && action !== 'list' && action !== 'revoke') {
    throw new UsageError('give a subcommand: iki api-keys create, list or revoke (see iki api-keys --help)');
  }
  const command = `api-keys ${action}`;
  const target = action === 'revoke' ? positionals(args, ['api key id'], command)[0] as string : (positionals(args, [], command), '');
  if (action === 'revoke' && !API_KEY_ID.test(target)) throw new UsageError(`${JSON.stringify(target)} is not an API key id (ak_ and 24 hex digits)`);
  const scopes = values.scope ?? DEFAULT_SCOPES;
  const unknown = scopes.find((s) => !SCOPES.includes(s));
  if (unknown !== undefined) throw new UsageError(`unknown scope ${JSON.stringify(unknown)}; the scopes are ${SCOPES.join(', ')}`);
  const name = action === 'create' ? required(values.name, 'name', command) : '';
  const { base, token } = await tokenFor(values, io, command);
  if (action === 'create') {
    const made = (await callService(base, 'POST', '/api/api-keys', { token, json: { name, scopes } })).body;
    if (values.json === true) printJson(io, made);
    else io.out(`${String(made['secret'])}\ncreated API key ${String(made['apiKeyId'])} "${show(name)}" (${scopes.join(', ')}); `
      + 'the key above is shown only this once\n');
    return 0;
  }
  if (action === 'revoke') {
    const key = (await callService(base, 'POST', `/api/api-keys/${target}/revoke`, { token })).body;
    if (values.json === true) printJson(io, key);
    else io.out(`revoked API key ${target} "${show(String(key['name']))}" at ${String(key['revokedAt'])}\n`);
    return 0;
  }
  const list = (await callService(base, 'GET', '/api/api-keys', { token })).body;
  if (values.json === true) {
    printJson(io, list);
    return 0;
  }
  const keys = list['apiKeys'] as Record<string, unknown>[];
  if (keys.length === 0) io.out('no API keys\n');
  for (const k of keys) {
    const state = k['revokedAt'] === null ? 'active' : `revoked ${String(k['revokedAt'])}`;
    io.out(`${String(k['apiKeyId'])}  ${String(k['hint'])}  ${state}  last used ${String(k['lastUsedAt'] ?? 'never')}  `
      + `"${show(String(k['name']))}"  ${(k['scopes'] as string[]).join(',')}\n`);
  }
  return 0;
}

/** The `api-keys` command. */
export const apiKeys: Command = { name: 'api-keys', summary: 'create, list or revoke your seller API keys', usage: API_KEYS_USAGE, run: apiKeysRun };

const LICENSES_USAGE = `Usage: iki licenses create <master id> --buyer <e-mail or account id> [--ref <reference>]
                   [--expires <time>] [--idempotency-key <key>] --service <url> (--email | --token)
       iki licenses list [--master <id>] [--buyer <who>] [--state <state>] [--ref <reference>] [--limit <n>] ...
       iki licenses suspend|reinstate|revoke <license id> [--reason <text>] ...

As the seller of a master: create a license for a buyer (by verified e-mail or account id),
list and search your licenses, suspend one (no copies or keys until reinstated), reinstate it,
or revoke it (final). --token may be an API key (iki_sk_…) with the licenses scopes.

      --buyer <who>          the buyer's verified e-mail address or account id
      --ref <reference>      your reference, e.g. the order id (create: stored; list: search)
      --expires <time>       create: when the license ends (ISO 8601, e.g. 2031-01-31T00:00:00Z)
      --idempotency-key <k>  create: the same key and request give the same license on a retry
      --master <id>          list: only licenses of this master
      --state <state>        list: active, suspended, expired or revoked
      --limit <n>            list: at most n licenses (1 to 200, default 50)
      --reason <text>        suspend, reinstate, revoke: kept in the license's history
${SIGN_IN}`;

function licenseLine(l: Record<string, unknown>): string {
  const licensee = l['licensee'] as { name?: string; email?: string; accountId?: string };
  const ref = typeof l['externalRef'] === 'string' ? `  ref ${show(l['externalRef'])}` : '';
  const expires = typeof l['expiresAt'] === 'string' ? `  until ${l['expiresAt']}` : '';
  return `${String(l['licenseId'])}  ${String(l['state']).padEnd(9)}  ${show(String(l['masterName']))}  `
    + `${show(licensee.email ?? licensee.accountId ?? '')}${ref}${expires}`;
}

function expiresOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const at = new Date(text);
  if (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}T/u.test(text)) {
    throw new UsageError(`--expires ${JSON.stringify(text)} is not an ISO 8601 time such as 2031-01-31T00:00:00Z`);
  }
  return at.toISOString();
}

async function licensesRun(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, { ...AUTH_OPTIONS, buyer: { type: 'string' }, ref: { type: 'string' },
    expires: { type: 'string' }, 'idempotency-key': { type: 'string' }, master: { type: 'string' }, state: { type: 'string' },
    limit: { type: 'string' }, reason: { type: 'string' } });
  if (helpRequested(values, licenses, io)) return 0;
  const [action, ...args] = rest;
  const actions = ['create', 'list', 'suspend', 'reinstate', 'revoke'];
  if (action === undefined || !actions.includes(action)) {
    throw new UsageError(`give a subcommand: iki licenses ${actions.join(', ')} (see iki licenses --help)`);
  }
  const command = `licenses ${action}`;
  if (action === 'create') {
    const [masterId] = positionals(args, ['master id'], command) as [string];
    if (!MASTER_ID.test(masterId)) throw new UsageError(`${JSON.stringify(masterId)} is not a master id (mst_ and 32 hex digits)`);
    const buyer = required(values.buyer, 'buyer', command);
    const expiresAt = expiresOf(values.expires);
    const json = { ...(ACCOUNT_ID.test(buyer) ? { accountId: buyer } : { email: buyer }),
      ...(values.ref === undefined ? {} : { externalRef: values.ref }), ...(expiresAt === undefined ? {} : { expiresAt }) };
    const key = values['idempotency-key'];
    const { base, token } = await tokenFor(values, io, command);
    const answer = await callService(base, 'POST', `/api/licenses/masters/${masterId}/licenses`,
      { token, json, ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }) });
    const replayed = answer.headers.get('idempotent-replayed') === 'true';
    if (values.json === true) printJson(io, { ...answer.body, replayed });
    else io.out(`${replayed ? 'already created' : 'created'} ${licenseLine(answer.body)}\n`);
    return 0;
  }
  if (action === 'list') {
    positionals(args, [], command);
    const query = new URLSearchParams();
    for (const [name, value] of [['masterId', values.master], ['buyer', values.buyer], ['state', values.state], ['ref', values.ref],
      ['limit', values.limit]] as const) if (value !== undefined) query.set(name, value);
    const { base, token } = await tokenFor(values, io, command);
    const page = (await callService(base, 'GET', `/api/seller/licenses?${query.toString()}`, { token })).body;
    if (values.json === true) printJson(io, page);
    else {
      const list = page['licenses'] as Record<string, unknown>[];
      if (list.length === 0) io.out('no licenses match\n');
      for (const l of list) io.out(`${licenseLine(l)}\n`);
      if (page['nextCursor'] !== null) io.out('(more: narrow the filters or raise --limit)\n');
    }
    return 0;
  }
  const [licenseId] = positionals(args, ['license id'], command) as [string];
  if (!LICENSE_ID.test(licenseId)) throw new UsageError(`${JSON.stringify(licenseId)} is not a license id (16 hex digits)`);
  const { base, token } = await tokenFor(values, io, command);
  const answer = await callService(base, 'POST', `/api/licenses/${licenseId}/${action}`,
    { token, json: values.reason === undefined ? {} : { reason: values.reason } });
  if (values.json === true) printJson(io, answer.body);
  else io.out(`${licenseLine(answer.body)}\n`);
  return 0;
}

/** The `licenses` command. */
export const licenses: Command = { name: 'licenses', summary: 'create, list, suspend, reinstate or revoke licenses as a seller', usage: LICENSES_USAGE, run: licensesRun };
