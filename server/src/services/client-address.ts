/**
 * The client key the per-client limits count under (sign-in failures, verification mail).
 *
 * An IPv4 address counts alone. An IPv6 address counts by its /64 prefix: that is one
 * customer's subnet at most providers (RFC 6177 recommends at least a /64 per site), and a
 * client holding a /64 could otherwise start a fresh count with each of its 2^64 addresses.
 * An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, how a dual-stack socket reports IPv4)
 * counts as the IPv4 address. Anything else (no address at all) counts as `unknown`.
 */
import { isIP } from 'node:net';
import { memoized } from './memo.js';

/** The key for `ip` as Express reports it (`req.ip`); remembered per address (services/memo.ts). */
export function clientKey(ip: string | undefined): string {
  return ip === undefined ? 'unknown' : keyOfAddress(ip);
}

const keyOfAddress = memoized((ip: string): string => {
  const address = ip.split('%')[0] ?? '';
  if (isIP(address) === 4) return address;
  if (isIP(address) !== 6) return 'unknown';
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
});

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail split). */
export function ipv6Groups(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').flatMap((g) => {
    if (!g.includes('.')) return [Number.parseInt(g, 16)];
    const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number);
    return [(a << 8) | b, (c << 8) | d];
  }));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
