/**
 * `iki webhooks …` (issue 26 item 4): a seller's webhook endpoints over the service's HTTP API.
 * `create` prints the endpoint's signing secret (whsec_…) once; `deliveries` prints the log;
 * `resend` queues a delivery again with its event id.
 */
import { helpRequested, parseCommand, positionals, printJson, required, type Command } from './args.js';
import { show } from './describe.js';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { AUTH_OPTIONS, SIGN_IN, tokenFor } from './sell-commands.js';
import { callService } from './service-api.js';

const EVENTS = ['license.created', 'license.revoked', 'license.suspended', 'license.reinstated', 'license.expired',
  'key.released', 'copy.downloaded', 'leak.identified', 'rate_limit.exceeded'];
const WEBHOOK_ID = /^we_[0-9a-f]{24}$/u;
const DELIVERY_ID = /^[1-9][0-9]{0,17}$/u;

const USAGE = `Usage: iki webhooks create --url <url> --event <type>... --service <url> (--email <address> | --token <bearer>)
       iki webhooks list ...
       iki webhooks delete|enable|disable|deliveries <webhook id> ...
       iki webhooks resend <webhook id> <delivery id> ...

Registers the addresses the service POSTs your sales events to, signed with the endpoint's
secret (Iki-Signature, checked with verifyWebhookSignature of @iki/core). The secret
(whsec_…) is printed once when the endpoint is created. Failed deliveries are retried for
days; an endpoint that keeps failing is disabled until you enable it. --token may be an API
key (iki_sk_…) with the webhooks:write scope.

      --url <url>            create: the https address of your shop's endpoint
      --event <type>         create (repeat it): ${EVENTS.join(', ')}
${SIGN_IN}`;

function endpointLine(w: Record<string, unknown>): string {
  const state = w['enabled'] === true ? 'enabled' : `disabled (${show(String(w['disabledReason'] ?? ''))})`;
  return `${String(w['webhookId'])}  ${state}  ${show(String(w['url']))}  ${(w['events'] as string[]).join(',')}`;
}

function deliveryLine(d: Record<string, unknown>): string {
  const last = d['lastAttemptAt'] === null ? 'never tried'
    : `last ${String(d['lastAttemptAt'])} ${String(d['lastStatus'] ?? d['lastError'] ?? '')}`;
  const next = d['nextAttemptAt'] === null ? '' : `  next ${String(d['nextAttemptAt'])}`;
  return `${String(d['deliveryId'])}  ${String(d['state']).padEnd(9)}  ${String(d['type'])}  ${String(d['eventId'])}  `
    + `attempts ${String(d['attempts'])}  ${last}${next}`;
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals: rest } = parseCommand(argv, { ...AUTH_OPTIONS, url: { type: 'string' },
    event: { type: 'string', multiple: true } });
  if (helpRequested(values, webhooks, io)) return 0;
  const [action, ...args] = rest;
  const actions = ['create', 'list', 'delete', 'enable', 'disable', 'deliveries', 'resend'];
  if (action === undefined || !actions.includes(action)) {
    throw new UsageError(`give a subcommand: iki webhooks ${actions.join(', ')} (see iki webhooks --help)`);
  }
  const command = `webhooks ${action}`;
  if (action === 'create') {
    positionals(args, [], command);
    const url = required(values.url, 'url', command);
    const events = values.event ?? [];
    if (events.length === 0) throw new UsageError(`give at least one --event: ${EVENTS.join(', ')}`);
    const unknown = events.find((e) => !EVENTS.includes(e));
    if (unknown !== undefined) throw new UsageError(`unknown event ${JSON.stringify(unknown)}; the events are ${EVENTS.join(', ')}`);
    const { base, token } = await tokenFor(values, io, command);
    const made = (await callService(base, 'POST', '/api/webhooks', { token, json: { url, events } })).body;
    if (values.json === true) printJson(io, made);
    else io.out(`${String(made['secret'])}\ncreated ${endpointLine(made)}; the signing secret above is shown only this once\n`);
    return 0;
  }
  if (action === 'list') {
    positionals(args, [], command);
    const { base, token } = await tokenFor(values, io, command);
    const list = (await callService(base, 'GET', '/api/webhooks', { token })).body;
    if (values.json === true) printJson(io, list);
    else {
      const all = list['webhooks'] as Record<string, unknown>[];
      if (all.length === 0) io.out('no webhook endpoints\n');
      for (const w of all) io.out(`${endpointLine(w)}\n`);
    }
    return 0;
  }
  const names = action === 'resend' ? ['webhook id', 'delivery id'] : ['webhook id'];
  const [id, deliveryId] = positionals(args, names, command) as [string, string | undefined];
  if (!WEBHOOK_ID.test(id)) throw new UsageError(`${JSON.stringify(id)} is not a webhook id (we_ and 24 hex digits)`);
  if (deliveryId !== undefined && !DELIVERY_ID.test(deliveryId)) throw new UsageError(`${JSON.stringify(deliveryId)} is not a delivery id`);
  const { base, token } = await tokenFor(values, io, command);
  if (action === 'delete') {
    await callService(base, 'DELETE', `/api/webhooks/${id}`, { token });
    if (values.json === true) printJson(io, { webhookId: id, deleted: true });
    else io.out(`deleted webhook endpoint ${id}\n`);
    return 0;
  }
  if (action === 'deliveries') {
    const list = (await callService(base, 'GET', `/api/webhooks/${id}/deliveries`, { token })).body;
    if (values.json === true) printJson(io, list);
    else {
      const all = list['deliveries'] as Record<string, unknown>[];
      if (all.length === 0) io.out('no deliveries yet\n');
      for (const d of all) io.out(`${deliveryLine(d)}\n`);
    }
    return 0;
  }
  const path = action === 'resend' ? `/api/webhooks/${id}/deliveries/${String(deliveryId)}/resend` : `/api/webhooks/${id}/${action}`;
  const answer = (await callService(base, 'POST', path, { token })).body;
  if (values.json === true) printJson(io, answer);
  else io.out(`${action === 'resend' ? deliveryLine(answer) : endpointLine(answer)}\n`);
  return 0;
}

/** The `webhooks` command. */
export const webhooks: Command = { name: 'webhooks', summary: 'register and inspect the webhook endpoints of your shop', usage: USAGE, run };
