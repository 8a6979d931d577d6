/**
 * The player's device id per license (issue 29 item 1): what lets the service count the
 * distinct players a license's keys go to without fingerprinting anything. The player keeps
 * one random 32-byte seed in `localStorage` under {@link PLAYER_DEVICE_STORAGE_KEY} (43
 * base64url characters; it is not a key to anything and nothing decrypted is stored), and the
 * id it sends for a license (`X-Iki-Device` on the key release and the copy download) is the
 * first 16 bytes of HMAC-SHA-256(key = the seed's 43 characters, "iki-player-device-v1" 0x00
 * licenseId), 22 base64url
 * characters: stable for this browser and license, different for every license, so two sellers
 * (or two licenses) cannot link their buyers' devices by it.
 *
 * Where storage is blocked, there is no id and the player sends none: the service counts
 * such releases without a device and never refuses them.
 */

/** The one `localStorage` item the player writes (documented; the browser tests allow exactly it). */
export const PLAYER_DEVICE_STORAGE_KEY = 'iki.playerDevice';
/** The header that carries the id (validated by the service, never a reason to refuse). */
export const DEVICE_HEADER = 'x-iki-device';

const SEED_BYTES = 32;
const ID_BYTES = 16;
const LABEL = 'iki-player-device-v1\0';

/** What of `Storage` the id needs. */
export type DeviceIdStorage = Pick<Storage, 'getItem' | 'setItem'>;

function defaultStorage(): DeviceIdStorage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    // A sandboxed or storage-blocked page throws on the mere access.
    return null;
  }
}

/**
 * Unpadded base64url (RFC 4648 §5), here rather than from `../keys.js`, which would bring the
 * WebAssembly glue into every page.
 */
function base64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The stored seed (43 base64url characters), made and stored first when there is none (or it is not one). */
function seed(storage: DeviceIdStorage): string {
  const kept = storage.getItem(PLAYER_DEVICE_STORAGE_KEY);
  if (kept !== null && /^[A-Za-z0-9_-]{43}$/.test(kept)) return kept;
  const fresh = base64Url(crypto.getRandomValues(new Uint8Array(SEED_BYTES)));
  storage.setItem(PLAYER_DEVICE_STORAGE_KEY, fresh);
  return fresh;
}

/** This browser's device id for `licenseId` (22 base64url characters), or null where storage is blocked. */
export async function licenseDeviceId(licenseId: string, storage: DeviceIdStorage | null = defaultStorage()): Promise<string | null> {
  if (typeof licenseId !== 'string' || licenseId.length === 0 || licenseId.length > 64) throw new RangeError('licenseId: 1 to 64 characters');
  if (storage === null) return null;
  let secret: string;
  try {
    secret = seed(storage);
  } catch {
    return null;
  }
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(LABEL + licenseId)));
  return base64Url(mac.subarray(0, ID_BYTES));
}
