// The per-client limits' key: IPv4 alone, IPv6 by /64, IPv4-mapped IPv6 as IPv4.
import { describe, expect, it } from 'vitest';
import { clientKey } from '../src/services/client-address.js';

describe('clientKey', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['::FFFF:c000:0207', '192.0.2.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002::ffff', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.7', '64:ff9b:0:0::/64'],
    ['1:2:3:4:5:6:1.2.3.4', '1:2:3:4::/64'],
    ['not an address', 'unknown'],
    [undefined, 'unknown'],
  ])('%s counts as %s', (ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });

  it('puts every address of one /64 under one key and the next /64 under another', () => {
    const keys = new Set(['2001:db8:a:b::1', '2001:db8:a:b:ffff:ffff:ffff:ffff', '2001:db8:a:b:1234::'].map(clientKey));
    expect([...keys]).toEqual(['2001:db8:a:b::/64']);
    expect(clientKey('2001:db8:a:c::1')).not.toBe(clientKey('2001:db8:a:b::1'));
  });
});
