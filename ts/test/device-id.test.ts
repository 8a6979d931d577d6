/**
 * The player's device id (issue 29, ts/src/browser/device-id.ts): 22 base64url characters,
 * stable per browser and license, different per license, one seed in storage and nothing else,
 * a malformed seed replaced, and no id at all where storage is blocked.
 */
import { describe, expect, it } from 'vitest';
import { PLAYER_DEVICE_STORAGE_KEY, licenseDeviceId, type DeviceIdStorage } from '../src/browser/device-id.js';

function memoryStorage(): DeviceIdStorage & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return { items, getItem: (k) => items.get(k) ?? null, setItem: (k, v) => void items.set(k, v) };
}

describe('licenseDeviceId', () => {
  it('is 22 base64url characters, the same for a license again, different for another license and another browser', async () => {
    const storage = memoryStorage();
    const a = await licenseDeviceId('0123456789abcdef', storage);
    expect(a).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(await licenseDeviceId('0123456789abcdef', storage)).toBe(a);
    expect(await licenseDeviceId('fedcba9876543210', storage)).not.toBe(a);
    expect(await licenseDeviceId('0123456789abcdef', memoryStorage())).not.toBe(a);
    // One item: the seed (32 random bytes), never the ids themselves.
    expect([...storage.items.keys()]).toEqual([PLAYER_DEVICE_STORAGE_KEY]);
    expect(storage.items.get(PLAYER_DEVICE_STORAGE_KEY)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect([...storage.items.values()]).not.toContain(a);
  });

  it('replaces a seed that is not one, and keeps a good one', async () => {
    const storage = memoryStorage();
    storage.items.set(PLAYER_DEVICE_STORAGE_KEY, 'not a seed');
    const id = await licenseDeviceId('0123456789abcdef', storage);
    const seed = storage.items.get(PLAYER_DEVICE_STORAGE_KEY);
    expect(seed).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await licenseDeviceId('0123456789abcdef', storage)).toBe(id);
    expect(storage.items.get(PLAYER_DEVICE_STORAGE_KEY)).toBe(seed);
  });

  it('gives no id where storage is blocked or throws, and refuses a license id that is not one', async () => {
    expect(await licenseDeviceId('0123456789abcdef', null)).toBeNull();
    const throwing: DeviceIdStorage = { getItem: () => { throw new Error('SecurityError'); }, setItem: () => {} };
    expect(await licenseDeviceId('0123456789abcdef', throwing)).toBeNull();
    await expect(licenseDeviceId('', memoryStorage())).rejects.toThrow(RangeError);
    await expect(licenseDeviceId('x'.repeat(65), memoryStorage())).rejects.toThrow(RangeError);
  });
});
