/**
 * `iki shops` (issue 26 item 6, parity for item 5): connect a Stripe account or a Gumroad
 * store so its sales become licenses, list and disconnect connections, and set or roll a
 * Stripe connection's signing secret. The secret is read from a file (first line), never from
 * the command line, where other users of the machine could read it in the process list.
 */
import { readFile } from 'node:fs/promises';
import { helpRequested, parseCommand, positionals, printJson, required, type Command } from './args.js';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { AUTH_OPTIONS, SIGN_IN, tokenFor } from './sell-commands.js';
import { callService, showUrl } from './service-api.js';

const KINDS = ['stripe', 'gumroad'];
const ON_REFUND = ['suspend', 'revoke', 'none'];
const SHOP_ID = /^shop_[0-9a-f]{24}$/u;
const MASTER_ID = /^mst_[0-9a-f]{32}$/u;
/** As the service: at most this many products per connection, each id at most this long. */
const MAX_PRODUCTS = 100;
const MAX_PRODUCT_ID = 200;
/** The longest signing secret file read (a Stripe secret is well under 100 bytes). */
const MAX_SECRET_FILE = 4096;

const USAGE = `Usage: iki shops create --kind stripe|gumroad --product <price or product id>=<master id>...
                         [--on-refund suspend|revoke|none] [--signing-secret-file <file>] ...
       iki shops list ...
       iki shops delete <shop id> ...
       iki shops set-secret <shop id> --signing-secret-file <file> ...

Connects a shop so each sale becomes a license for the buyer's e-mail (once per sale, however
often the shop sends it); a refund or dispute suspends or revokes it (--on-refund, default
suspend). Enter the printed URL (the service's URL + the endpoint path) in the shop: in Stripe
as a webhook endpoint (checkout.session.completed, charge.refunded, charge.dispute.created),
then set the endpoint's signing secret (whsec_…) here; in Gumroad as the ping URL, which is
printed only when the connection is made (it holds the shop's secret). --token may be an API
key (iki_sk_…) with the webhooks:write scope.

      --kind <kind>                create: stripe or gumroad
      --product <id>=<master id>   create (repeat it): which Stripe price or product id, or
                                   Gumroad product id, licenses which master
      --on-refund <action>         create: suspend (default), revoke or none
      --signing-secret-file <file> create (stripe) and set-secret: the Stripe endpoint's
                                   signing secret on the first line of <file>
${SIGN_IN}`;

function shopLine(s: Record<string, unknown>, base: URL): string {
  const products = Object.entries(s['products'] as Record<string, string>).map(([p, m]) => `${p}=${m}`).join(',');
  const secret = s['kind'] === 'stripe' ? (s['signingSecretSet'] === true ? 'secret set' : 'no signing secret yet') : '';
  return `${String(s['shopId'])}  ${String(s['kind'])}  on refund ${String(s['onRefund'])}  ${products}`
    + `${secret === '' ? '' : `  ${secret}`}\n  ${showUrl(base)}${String(s['endpointPath'])}`;
}

function parseProducts(items: readonly string[]): Record<string, string> {
  if (items.length === 0) throw new UsageError('give at least one --product <price or product id>=<master id>');
  if (items.length > MAX_PRODUCTS) throw new UsageError(`at most ${MAX_PRODUCTS} --product`);
  const products: Record<string, string> = {};
  for (const item of items) {
    const at = item.lastIndexOf('=');
    const [id, master] = [item.slice(0, at), item.slice(at + 1)];
    if (at <= 0 || id.length > MAX_PRODUCT_ID || !MASTER_ID.test(master)) {
      throw new UsageError(`--product ${JSON.stringify(item)}: give <price or product id>=<master id> (mst_ and 32 hex digits)`);
    }
    if (id in products) throw new UsageError(`--product ${JSON.stringify(id)} is given twice`);
    products[id] = master;
  }
  return products;
}

async function readSecret(file: string): Promise<string> {
  let text: string;
  try {
    const bytes = await readFile(file);
    if (bytes.length > MAX_SECRET_FILE) throw new UsageError(`--signing-secret-file ${file}: longer than ${MAX_SECRET_FILE} bytes`);
    text = bytes.toString('utf8');
    bytes.fill(0);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--signing-secret-file ${file}: cannot be read`);
  }
  const secret = (text.split(/\r?\n/u)[0] ?? '').trim();
  if (secret === '') throw new UsageError(`--signing-secret-file ${file}: the first line is empty`);
  return secret;
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, { ...AUTH_OPTIONS, kind: { type: 'string' },
    product: { type: 'string', multiple: true }, 'on-refund': { type: 'string' }, 'signing-secret-file': { type: 'string' } });
  if (helpRequested(values, shops, io)) return 0;
  const [action, ...args] = rest;
  const actions = ['create', 'list', 'delete', 'set-secret'];
  if (action === undefined || !actions.includes(action)) {
    throw new UsageError(`give a subcommand: iki shops ${actions.join(', ')} (see iki shops --help)`);
  }
  const command = `shops ${action}`;
  if (action === 'create') {
    positionals(args, [], command);
    const kind = required(values.kind, 'kind', command);
    if (!KINDS.includes(kind)) throw new UsageError(`--kind must be ${KINDS.join(' or ')}`);
    const onRefund = values['on-refund'] ?? 'suspend';
    if (!ON_REFUND.includes(onRefund)) throw new UsageError(`--on-refund must be ${ON_REFUND.join(', ')}`);
    const products = parseProducts(values.product ?? []);
    const file = values['signing-secret-file'];
    if (kind === 'gumroad' && file !== undefined) throw new UsageError('--signing-secret-file is for stripe: Gumroad\'s URL holds its secret');
    const signingSecret = file === undefined ? undefined : await readSecret(file);
    const { base, token } = await tokenFor(values, io, command);
    const made = (await callService(base, 'POST', '/api/shops', { token,
      json: { kind, products, onRefund, ...(signingSecret === undefined ? {} : { signingSecret }) } })).body;
    if (values.json === true) printJson(io, made);
    else {
      const note = kind === 'gumroad' ? 'the ping URL above holds its secret and is shown only this once'
        : 'enter the URL above in Stripe';
      io.out(`connected ${shopLine(made, base)}\n${note}\n`);
    }
    return 0;
  }
  if (action === 'list') {
    positionals(args, [], command);
    const { base, token } = await tokenFor(values, io, command);
    const list = (await callService(base, 'GET', '/api/shops', { token })).body;
    if (values.json === true) printJson(io, list);
    else {
      const all = list['shops'] as Record<string, unknown>[];
      if (all.length === 0) io.out('no shops connected\n');
      for (const s of all) io.out(`${shopLine(s, base)}\n`);
    }
    return 0;
  }
  const [id] = positionals(args, ['shop id'], command) as [string];
  if (!SHOP_ID.test(id)) throw new UsageError(`${JSON.stringify(id)} is not a shop id (shop_ and 24 hex digits)`);
  if (action === 'delete') {
    const { base, token } = await tokenFor(values, io, command);
    await callService(base, 'DELETE', `/api/shops/${id}`, { token });
    if (values.json === true) printJson(io, { shopId: id, deleted: true });
    else io.out(`disconnected shop ${id}\n`);
    return 0;
  }
  const signingSecret = await readSecret(required(values['signing-secret-file'], 'signing-secret-file', command));
  const { base, token } = await tokenFor(values, io, command);
  const answer = (await callService(base, 'POST', `/api/shops/${id}/signing-secret`, { token, json: { signingSecret } })).body;
  if (values.json === true) printJson(io, answer);
  else io.out(`${shopLine(answer, base)}\n`);
  return 0;
}

/** The `shops` command. */
export const shops: Command = { name: 'shops', summary: 'connect Stripe or Gumroad so sales become licenses', usage: USAGE, run };
