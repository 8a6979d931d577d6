// `iki watermark embed` / `read` round trip on a CC0 atlas read in place from
// ../shared/fixtures/textures, with the marked pixels checked by an independent PNG decoder.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CC0_ATLAS } from '../../tests/fixtures/packages.mjs';
import { decodePng } from '../../tests/fixtures/png.mjs';
import { expectFailure, iki, spawnIki } from './cli-helpers.js';

// Spawned binaries and Argon2id (64 MiB per password) take seconds on a busy machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const KEY = '4b'.repeat(32);
const OTHER_KEY = '4c'.repeat(32);
const ID = '0123456789abcdef';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'iki-wm-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('iki watermark', () => {
  it('embeds a license id into the CC0 atlas and reads it back, and only with the right key', async () => {
    const marked = join(dir, 'marked.png');
    const embed = await iki(['watermark', 'embed', '--key', KEY, '--id', ID.toUpperCase(), CC0_ATLAS, marked]);
    expect(embed.code, embed.err).toBe(0);
    const before = decodePng(new Uint8Array(await readFile(CC0_ATLAS)));
    const after = decodePng(new Uint8Array(await readFile(marked)));
    expect([after.width, after.height]).toEqual([before.width, before.height]);
    let changed = 0;
    let maxStep = 0;
    let alphaChanged = 0;
    for (let i = 0; i < before.rgba.length; i++) {
      const step = Math.abs((before.rgba[i] as number) - (after.rgba[i] as number));
      if (step > 0) changed++;
      if (step > maxStep) maxStep = step;
      if (i % 4 === 3 && step > 0) alphaChanged++;
    }
    expect(changed).toBeGreaterThan(before.rgba.length / 10);
    expect(maxStep).toBeLessThanOrEqual(2);
    expect(alphaChanged).toBe(0);

    const read = await spawnIki(['watermark', 'read', '--key', KEY, marked]);
    expect(read.code, read.err).toBe(0);
    expect(JSON.parse(read.out)).toMatchObject({ found: true, licenseId: ID });
    for (const [key, image] of [[OTHER_KEY, marked], [KEY, CC0_ATLAS]] as const) {
      const miss = await iki(['watermark', 'read', '--key', key, image]);
      expect(miss.code).toBe(0);
      expect(JSON.parse(miss.out)).toMatchObject({ found: false, licenseId: null });
    }
  });

  it('refuses bad keys, ids and images', async () => {
    expectFailure(await iki(['watermark', 'read', '--key', 'abcd', CC0_ATLAS]), 'USAGE', 2);
    expectFailure(await iki(['watermark', 'embed', '--key', KEY, '--id', '123', CC0_ATLAS, join(dir, 'x.png')]), 'USAGE', 2);
    expectFailure(await iki(['watermark', 'frame', '--key', KEY]), 'USAGE', 2);
    expectFailure(await iki(['watermark', 'read', '--key', KEY, join(dir, 'missing.png')]), 'NOT_FOUND');
    const notImage = await iki(['watermark', 'read', '--key', KEY, new URL(import.meta.url).pathname]);
    expectFailure(notImage, '[A-Z_]+');
  });
});
