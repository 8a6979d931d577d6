/**
 * The address prefixes and device ids of issue 29 (services/activity-address.ts): /24 of
 * IPv4, /48 of IPv6, an IPv4-mapped IPv6 address as IPv4; the kept hash is keyed (another
 * root secret, another hash) and 16 bytes; a device id is 22 base64url characters or ignored.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RootSecret } from '../src/secrets.js';
import {
  activityAddressKey, addressPrefix, ADDRESS_HASH_BYTES, clientMark, deviceIdOf, hashAddress,
} from '../src/services/activity-address.js';

describe('activity address prefixes', () => {
  it('takes the /24 of IPv4 and the /48 of IPv6, IPv4-mapped addresses as IPv4', () => {
    expect(addressPrefix('203.0.113.77')).toBe('v4:203.0.113.0/24');
    expect(addressPrefix('::ffff:203.0.113.9')).toBe('v4:203.0.113.0/24');
    expect(addressPrefix('::ffff:cb00:7101')).toBe('v4:203.0.113.0/24');
    expect(addressPrefix('2001:db8:abcd:12::5')).toBe('v6:2001:db8:abcd::/48');
    expect(addressPrefix('2001:db8:abcd:ffff:1:2:3:4')).toBe('v6:2001:db8:abcd::/48');
    expect(addressPrefix('fe80::1%eth0')).toBe('v6:fe80:0:0::/48');
    for (const bad of [undefined, '', 'unknown', '203.0.113', '2001:db8::g', '203.0.113.256']) expect(addressPrefix(bad)).toBeUndefined();
  });

  it('hashes a prefix under a key from the root secret, 16 bytes, never the address', () => {
    const key = activityAddressKey(new RootSecret(randomBytes(32)));
    const other = activityAddressKey(new RootSecret(randomBytes(32)));
    const a = hashAddress(key, '203.0.113.77');
    expect(a).toHaveLength(ADDRESS_HASH_BYTES);
    expect(hashAddress(key, '203.0.113.1')).toEqual(a);
    expect(hashAddress(key, '203.0.114.77')).not.toEqual(a);
    expect(hashAddress(other, '203.0.113.77')).not.toEqual(a);
    expect(hashAddress(key, '::ffff:203.0.113.200')).toEqual(a);
    expect(hashAddress(key, undefined)).toBeUndefined();
    expect(Buffer.from(a ?? []).toString('latin1')).not.toContain('203');
  });

  it('takes a device id of 22 base64url characters and ignores anything else', () => {
    expect(deviceIdOf('AbCdEfGhIjKlMnOpQrSt-_')).toBe('AbCdEfGhIjKlMnOpQrSt-_');
    for (const bad of [undefined, '', 'short', 'AbCdEfGhIjKlMnOpQrSt-_x', 'AbCdEfGhIjKlMnOpQrSt+/', ['AbCdEfGhIjKlMnOpQrSt-_'], 42]) {
      expect(deviceIdOf(bad)).toBeUndefined();
    }
    expect(clientMark(new Uint8Array(32), undefined, 'nope')).toEqual({ addrHash: undefined, deviceId: undefined });
  });
});
