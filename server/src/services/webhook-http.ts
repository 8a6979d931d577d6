/**
 * One webhook POST that is safe to point anywhere (issue 26 item 4, "Safe to point anywhere";
 * OWASP Server-Side Request Forgery Prevention Cheat Sheet): only http and https URLs without
 * credentials; every address the destination resolves to, on every attempt, is checked against
 * the private, loopback, link-local, shared, multicast and reserved ranges and refused unless
 * `allowPrivate` (a development setting); the check runs inside the connection's own DNS
 * look-up, so the address checked is the address connected to (no rebinding between a check
 * and the connection); redirects are not followed (a 3xx is a failed delivery); the whole
 * exchange has a deadline; at most `maxResponseBytes` of the answer are read.
 *
 * Not wired to any route yet: the endpoints, the outbox and the delivery loop of item 4 are
 * still to be built on it.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';

/** How one delivery may go. */
export interface WebhookPostOptions {
  /** Lets private, loopback and link-local destinations through (development only). */
  allowPrivate: boolean;
  /** Deadline of the whole exchange, connection to last byte read. */
  timeoutMs: number;
  /** Bytes of the answer read at most; the rest is dropped with the connection. */
  maxResponseBytes: number;
  /** DNS look-up (tests give one that answers a fixed address); `dns.lookup` by default. */
  resolve?: typeof dnsLookup;
}

/** What happened to one delivery. */
export type WebhookPostResult =
  | { kind: 'delivered'; status: number; body: string }
  | { kind: 'failed'; reason: 'bad_url' | 'refused_destination' | 'timeout' | 'network' | 'redirect' | 'http_status';
    status?: number; detail?: string };

/** Ranges no webhook may reach by default (IANA special-purpose registries, RFC 6890). */
const BLOCKED = new BlockList();
for (const [net, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32],
  ['64:ff9b::', 96], ['100::', 64]] as const) BLOCKED.addSubnet(net, prefix, 'ipv6');

/** Whether `address` is one a webhook may not reach by default (an IPv4-mapped IPv6 address as its IPv4). */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return BLOCKED.check(mapped[1], 'ipv4');
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

class Refused extends Error {}

/** A `lookup` for the connection that fails when any resolved address is blocked. */
function guardedLookup(resolve: typeof dnsLookup, allowPrivate: boolean) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err !== null) return callback(err, []);
      const list = addresses as LookupAddress[];
      if (!allowPrivate && (list.length === 0 || list.some((a) => isBlockedAddress(a.address)))) {
        return callback(new Refused(`${hostname} resolves to a private, loopback or reserved address`), []);
      }
      if ((options as LookupAllOptions).all === true) return callback(null, list);
      const first = list[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

/** The URL when it is one a webhook may have; undefined otherwise. */
export function webhookUrl(text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') return undefined;
  return url;
}

/** POSTs `body` to `target` once (see the module comment). */
export async function postWebhook(target: string, body: Uint8Array, headers: Record<string, string>,
  options: WebhookPostOptions): Promise<WebhookPostResult> {
  const url = webhookUrl(target);
  if (url === undefined) return { kind: 'failed', reason: 'bad_url' };
  // An address literal is never looked up, so it is checked here.
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) !== 0 && !options.allowPrivate && isBlockedAddress(literal)) return { kind: 'failed', reason: 'refused_destination' };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: WebhookPostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(result);
    };
    const req = send(url, {
      method: 'POST', agent: false, lookup: guardedLookup(options.resolve ?? dnsLookup, options.allowPrivate) as never,
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), 'user-agent': 'iki-webhooks/1', ...headers },
    }, (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (part: Buffer) => {
        if (size >= options.maxResponseBytes) return;
        const room = options.maxResponseBytes - size;
        parts.push(part.subarray(0, room));
        size += Math.min(room, part.length);
        if (size >= options.maxResponseBytes) {
          res.destroy();
          done();
        }
      });
      const done = () => {
        const text = Buffer.concat(parts).toString('utf8');
        if (status >= 300 && status < 400) finish({ kind: 'failed', reason: 'redirect', status });
        else if (status >= 200 && status < 300) finish({ kind: 'delivered', status, body: text });
        else finish({ kind: 'failed', reason: 'http_status', status });
      };
      res.on('end', done);
      res.on('error', () => finish({ kind: 'failed', reason: 'network', status }));
    });
    const deadline = setTimeout(() => {
      finish({ kind: 'failed', reason: 'timeout' });
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (err) => finish(err instanceof Refused ? { kind: 'failed', reason: 'refused_destination', detail: err.message }
      : { kind: 'failed', reason: 'network', detail: (err as NodeJS.ErrnoException).code ?? 'error' }));
    req.end(body);
  });
}
