/**
 * The `LicenseCrypto` used when no WASM implementation was supplied to `serve()`. It does not
 * pretend: every operation fails with `CRYPTO_UNAVAILABLE` (503), so the routes that need the
 * port answer honestly while every other route works.
 */
import { ApiError } from '../errors.js';
import type { LicenseCrypto } from './crypto-port.js';

function unavailable(): never {
  throw new ApiError('CRYPTO_UNAVAILABLE', 'the key service module is not loaded');
}

/** A port whose every method rejects with `CRYPTO_UNAVAILABLE`. */
export function unavailableCrypto(): LicenseCrypto {
  return {
    servicePublicKeys: unavailable,
    verifyMasterStream: async () => unavailable(),
    streamLicenseCopy: () => ({
      [Symbol.asyncIterator]: () => ({ next: async () => unavailable() }),
    }),
    sealLicenseKey: async () => unavailable(),
    identify: async () => unavailable(),
    wrapAccountSlot: async () => unavailable(),
    unwrapAccountSlot: async () => unavailable(),
    certifySigningKey: async () => unavailable(),
  };
}
