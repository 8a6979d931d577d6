/**
 * Who a release or download came from, as much as issue 29 item 1 lets the service keep: the
 * client's address prefix (/24 of IPv4, /48 of IPv6; an IPv4-mapped IPv6 address as IPv4) as
 * HMAC-SHA-256 under a key derived from the root secret, truncated to 16 bytes, and the
 * player's random device id for the license (`X-Iki-Device`). The address itself is never
 * stored, logged or returned; keyed, so that a copy of the database cannot confirm a guessed
 * prefix (2^24 IPv4 prefixes are too few for a plain hash). 16 bytes: a collision among the
 * few prefixes of one license's quarter hour is out of reach, and a distinct count is all the
 * hash is for.
 *
 * The client address is `req.ip`, which honours `IKI_TRUST_PROXY` (app.ts): behind a trusted
 * proxy the forwarded address, otherwise the peer (services/client-address.ts).
 */
import { createHmac, hkdfSync } from 'node:crypto';
import { isIP } from 'node:net';
import type { RootSecret } from '../secrets.js';
import type { ClientMark } from '../storage/activity-records.js';
import { ipv6Groups } from './client-address.js';

/** HKDF info label for the HMAC-SHA256 key of the activity address prefixes (HKDF salt is empty). */
export const ACTIVITY_ADDRESS_KEY_LABEL = 'activity-address-v1';
/** Bytes of the kept address-prefix hash. */
export const ADDRESS_HASH_BYTES = 16;
/** The device id the player sends: 22 base64url characters (128 random bits). */
export const DEVICE_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;
/** The header that carries it. */
export const DEVICE_HEADER = 'x-iki-device';

/**
 * The 32-byte key of the address hashes: HKDF-SHA256(root, "", "activity-address-v1"). The
 * copy of the root's bytes is zeroized here; the key lives as long as the service.
 */
export function activityAddressKey(root: RootSecret): Uint8Array {
  const bytes = root.expose();
  try {
    return new Uint8Array(hkdfSync('sha256', bytes, new Uint8Array(0), ACTIVITY_ADDRESS_KEY_LABEL, 32));
  } finally {
    bytes.fill(0);
  }
}

/** The prefix `ip` is counted by (`v4:a.b.c.0/24`, `v6:x:y:z::/48`), or undefined for no valid address. */
export function addressPrefix(ip: string | undefined): string | undefined {
  if (ip === undefined) return undefined;
  const address = ip.split('%')[0] ?? '';
  if (isIP(address) === 4) return `v4:${address.split('.').slice(0, 3).join('.')}.0/24`;
  if (isIP(address) !== 6) return undefined;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const hi = groups[6] ?? 0;
    const lo = groups[7] ?? 0;
    return `v4:${hi >> 8}.${hi & 255}.${lo >> 8}.0/24`;
  }
  return `v6:${groups.slice(0, 3).map((g) => g.toString(16)).join(':')}::/48`;
}

/** The kept hash of `ip`'s prefix under `key`, or undefined without a valid address. */
export function hashAddress(key: Uint8Array, ip: string | undefined): Uint8Array | undefined {
  const prefix = addressPrefix(ip);
  if (prefix === undefined) return undefined;
  return new Uint8Array(createHmac('sha256', key).update(prefix, 'utf8').digest().subarray(0, ADDRESS_HASH_BYTES));
}

/** The device id of a header value, or undefined when absent or not one (ignored, never refused). */
export function deviceIdOf(header: unknown): string | undefined {
  return typeof header === 'string' && DEVICE_ID_PATTERN.test(header) ? header : undefined;
}

/** The mark of a request: its address prefix hash and device id. */
export function clientMark(key: Uint8Array, ip: string | undefined, deviceHeader: unknown): ClientMark {
  return { addrHash: hashAddress(key, ip), deviceId: deviceIdOf(deviceHeader) };
}
