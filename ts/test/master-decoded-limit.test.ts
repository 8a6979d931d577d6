// Issue 22 item 10: the upload check refuses a master whose entries decode to more than a
// configured size, from the manifest, before any entry is decoded: at the limit it passes,
// one byte past it is `LIMIT_EXCEEDED` naming the limit, and a master cut off right after its
// manifest (so never fully checkable) is refused for its size, not for being truncated.
import { beforeAll, describe, expect, it } from 'vitest';
import { IkiError } from '../src/errors.js';
import { SigningKey } from '../src/keys.js';
import type { ServiceKeys } from '../src/service.js';
import { loadWasm } from '../src/wasm.js';
import { FAKE_SEED, inPieces, rejection, writeAll } from './container-support.js';
import { masterOptions, modelEntries, serviceKeys } from './service-support.js';

let keys: ServiceKeys;
let master: Uint8Array;
let decoded: number;

beforeAll(async () => {
  await loadWasm();
  keys = serviceKeys();
  const seller = SigningKey.fromSeed(FAKE_SEED);
  master = await writeAll(modelEntries(), masterOptions(seller, keys.x25519PublicKey));
  decoded = modelEntries().reduce((sum, e) => sum + e.size, 0);
});

describe('the decoded-size limit of the upload check', () => {
  it('passes a master at the limit and refuses one byte past it, naming the limit', async () => {
    expect((await keys.verifyMaster(inPieces(master, 4096), { maxDecodedBytes: decoded })).size).toBe(master.length);
    const refused = await rejection(keys.verifyMaster(inPieces(master, 4096), { maxDecodedBytes: decoded - 1 }));
    expect(refused).toBeInstanceOf(IkiError);
    expect((refused as IkiError).code).toBe('LIMIT_EXCEEDED');
    expect((refused as IkiError).details).toMatchObject({ limit: 'IKI_MASTER_MAX_DECODED_BYTES', value: String(decoded),
      max: String(decoded - 1) });
  });

  it('refuses from the manifest: a master cut off after it is refused for its size, not as truncated', async () => {
    // The manifest sits near the start; the first texture's data (512x512 RGBA) comes after it.
    const head = master.subarray(0, Math.min(master.length, 8192));
    expect((await rejection(keys.verifyMaster(head))) as IkiError).toMatchObject({ code: 'TRUNCATED' });
    expect((await rejection(keys.verifyMaster(head, { maxDecodedBytes: decoded - 1 }))) as IkiError).toMatchObject({ code: 'LIMIT_EXCEEDED' });
  });

  it('checks its argument', () => {
    const verifier = keys.masterVerifier();
    try {
      for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) expect(() => verifier.limitDecodedBytes(bad)).toThrow(RangeError);
    } finally {
      verifier.free();
    }
  });
});
