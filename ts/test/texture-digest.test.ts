// The manifest pass of a texture (decodeImageDigest / textureDigest): the SHA-256 of the same
// pixels decodeImage gives, with the same errors, the pixels kept in WASM memory.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeImage, decodeImageDigest, encodePng } from '../src/image.js';
import { textureDigest } from '../src/package/model-plan.js';
import { loadWasm } from '../src/wasm.js';

const ATLAS = new URL('../../../shared/fixtures/textures/kenney-platformer-pack-redux_spritesheet_players.png', import.meta.url);
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  await loadWasm();
});

describe('decodeImageDigest', () => {
  it('gives the size and SHA-256 of the pixels decodeImage gives, for a fixture atlas and a small PNG', () => {
    const small = encodePng(3, 2, Uint8Array.from({ length: 24 }, (_, i) => i * 10));
    for (const png of [new Uint8Array(readFileSync(ATLAS)), small]) {
      const image = decodeImage(png);
      expect(decodeImageDigest(png)).toEqual({ width: image.width, height: image.height, sha256: sha256(image.rgba) });
    }
  });

  it('refuses what is not an image with the decoder\'s error', () => {
    expect(() => decodeImageDigest(new Uint8Array([1, 2, 3, 4]))).toThrow(expect.objectContaining({ code: 'IMAGE_DECODE_FAILED' }));
  });
});

describe('textureDigest', () => {
  const png = (): Uint8Array => encodePng(4, 4, new Uint8Array(64).fill(200));

  it('is the SHA-256 of the decoded pixels when the header\'s size is the image\'s', () => {
    expect(textureDigest(png(), 'a.png', 4, 4)).toBe(sha256(new Uint8Array(64).fill(200)));
  });

  it('refuses a texture whose pixels are not the size its header said, as decodeTexture does', () => {
    expect(() => textureDigest(png(), 'a.png', 4, 5)).toThrow(expect.objectContaining({ code: 'NOT_PNG', path: 'a.png' }));
    expect(() => textureDigest(new Uint8Array([0x89, 0x50]), 'b.png', 1, 1)).toThrow(expect.objectContaining({ code: 'NOT_PNG', path: 'b.png' }));
  });
});
