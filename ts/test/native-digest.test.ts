import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashBlob, hashBytes, ONE_SHOT_HASH_BYTES } from '../src/native-digest.js';

const nodeSha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

describe('native digest', () => {
  it('gives the SHA-256 and size of bytes, natively up to the one-shot limit and in WASM past it', async () => {
    for (const length of [0, 1, 64 * 1024 + 3, ONE_SHOT_HASH_BYTES, ONE_SHOT_HASH_BYTES + 1]) {
      const bytes = length > 1 << 20 ? new Uint8Array(length).fill(0x5a) : new Uint8Array(randomBytes(length));
      if (length > 0) bytes[length - 1] = 0x17;
      expect(await hashBytes(bytes), `${length} bytes`).toEqual({ size: length, sha256: nodeSha256(bytes) });
    }
  });

  it('gives the SHA-256 and size of a Blob, read whole up to the limit and in pieces past it', async () => {
    for (const length of [0, 300_000, ONE_SHOT_HASH_BYTES + 1]) {
      const bytes = new Uint8Array(length).fill(0xa5);
      if (length > 0) bytes[length >> 1] = 7;
      expect(await hashBlob(new Blob([bytes])), `${length} bytes`).toEqual({ size: length, sha256: nodeSha256(bytes) });
    }
  });
});
