// `iki watermark embed` / `read` round trip on a CC0 atlas read in place from
// ../shared/fixtures/textures, with the marked pixels checked by an independent PNG decoder.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CC0_ATLAS, writeModelPackage } from '../../tests/fixtures/packages.mjs';
import { cropRgba, decodePng, encodePng } from '../../tests/fixtures/png.mjs';
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

  it('reads a resized crop of a marked texture with --original (a texture or a model folder)', async () => {
    const model = join(dir, 'model');
    await writeModelPackage(model, { atlasSize: 512 });
    const texture = join(model, 'Fixture.1024', 'texture_00.png');
    const marked = join(dir, 'marked-512.png');
    expect((await iki(['watermark', 'embed', '--key', KEY, '--id', ID, texture, marked])).code).toBe(0);
    // The leak: 380 x 300 from (60, 40), halved by 2 x 2 averaging (scale 0.5).
    const part = cropRgba(decodePng(new Uint8Array(await readFile(marked))), 60, 40, 380, 300);
    const half = new Uint8Array(190 * 150 * 4);
    for (let y = 0; y < 150; y++) {
      for (let x = 0; x < 190; x++) {
        for (let c = 0; c < 4; c++) {
          const at = (yy: number, xx: number) => part.rgba[(yy * 380 + xx) * 4 + c] as number;
          half[(y * 190 + x) * 4 + c] = Math.round((at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) + at(2 * y + 1, 2 * x + 1)) / 4);
        }
      }
    }
    const leak = join(dir, 'leak.png');
    await writeFile(leak, encodePng(190, 150, half));
    const blind = JSON.parse((await iki(['watermark', 'read', '--key', KEY, leak])).out);
    expect(blind).toMatchObject({ found: false, method: 'blind' });
    for (const original of [texture, model]) {
      const read = await iki(['watermark', 'read', '--key', KEY, '--original', original, leak]);
      expect(read.code, read.err).toBe(0);
      const answer = JSON.parse(read.out);
      expect(answer).toMatchObject({ found: true, licenseId: ID, method: 'registered', texture: { width: 512, height: 512 } });
      expect(answer.texture.path).toBe(original === model ? 'Fixture.1024/texture_00.png' : texture);
      expect(answer.texture.scale.x).toBeCloseTo(0.5, 2);
      expect(answer.texture.offset.x).toBeCloseTo(60, 0);
      expect(answer.texture.offset.y).toBeCloseTo(40, 0);
    }
    // The unmarked texture's crop matches, and carries no mark; a tiny image cannot carry one.
    const unmarked = join(dir, 'unmarked-crop.png');
    const plain = cropRgba(decodePng(new Uint8Array(await readFile(texture))), 100, 100, 300, 300);
    await writeFile(unmarked, encodePng(300, 300, plain.rgba));
    const miss = JSON.parse((await iki(['watermark', 'read', '--key', KEY, '--original', model, unmarked])).out);
    expect(miss).toMatchObject({ found: false, licenseId: null, method: 'registered', reason: 'not_marked',
      texture: { path: 'Fixture.1024/texture_00.png', region: { x: 100, y: 100, width: 300, height: 300 } } });
    const tiny = join(dir, 'tiny.png');
    await writeFile(tiny, encodePng(30, 20, cropRgba(plain, 0, 0, 30, 20).rgba));
    const small = JSON.parse((await iki(['watermark', 'read', '--key', KEY, '--original', model, tiny])).out);
    expect(small).toMatchObject({ found: false, method: 'blind', reason: 'too_small' });
    expectFailure(await iki(['watermark', 'read', '--key', KEY, '--budget', '5', leak]), 'USAGE', 2);
    expectFailure(await iki(['watermark', 'read', '--key', KEY, '--original', model, '--budget', '-1', leak]), 'USAGE', 2);
  });

  it('scores the issued licenses with --licenses: names the license, and the colluders of a mean of two copies', async () => {
    const model = join(dir, 'model-licenses');
    await writeModelPackage(model, { atlasSize: 512 });
    const texture = join(model, 'Fixture.1024', 'texture_00.png');
    const SECOND = '5a17c0ffee1234b6';
    const [one, two] = [join(dir, 'one.png'), join(dir, 'two.png')];
    expect((await iki(['watermark', 'embed', '--key', KEY, '--id', ID, texture, one])).code).toBe(0);
    expect((await iki(['watermark', 'embed', '--key', KEY, '--id', SECOND, texture, two])).code).toBe(0);
    const [a, b] = [decodePng(new Uint8Array(await readFile(one))), decodePng(new Uint8Array(await readFile(two)))];
    const mean = join(dir, 'mean.png');
    await writeFile(mean, encodePng(a.width, a.height, a.rgba.map((v, i) => (i % 4 === 3 ? v : Math.round((v + (b.rgba[i] as number)) / 2)))));
    const innocents = Array.from({ length: 98 }, (_, i) => (0x1000_0000_0000_0000n + BigInt(i) * 0x0123_4567_89ab_cdefn).toString(16).slice(-16).padStart(16, '0'));
    const list = join(dir, 'issued.txt');
    await writeFile(list, `# issued for the master\n${ID}, ${SECOND.toUpperCase()}\n${innocents.join('\n')}\n`);

    const single = JSON.parse((await iki(['watermark', 'read', '--key', KEY, '--licenses', list, one])).out);
    expect(single).toMatchObject({ found: true, licenseId: ID, match: 'decoded', mixed: false });
    expect(single.candidates[0]).toMatchObject({ licenseId: ID, named: true });
    expect(single.candidates.filter((c: { named: boolean }) => c.named)).toHaveLength(1);

    const mixed = JSON.parse((await iki(['watermark', 'read', '--key', KEY, '--licenses', list, mean])).out);
    expect(mixed).toMatchObject({ found: false, reason: 'mixed', mixed: true });
    const named = mixed.candidates.filter((c: { named: boolean }) => c.named).map((c: { licenseId: string }) => c.licenseId);
    expect(named.length).toBeGreaterThan(0);
    expect(named.every((id: string) => id === ID || id === SECOND)).toBe(true);
    // Without --licenses the mean reads nothing; with another master's key it names nobody.
    expect(JSON.parse((await iki(['watermark', 'read', '--key', KEY, mean])).out)).toMatchObject({ found: false });
    const foreign = JSON.parse((await iki(['watermark', 'read', '--key', OTHER_KEY, '--licenses', list, mean])).out);
    expect(foreign).toMatchObject({ found: false, mixed: false });
    expect(foreign.candidates.every((c: { named: boolean }) => !c.named)).toBe(true);

    const bad = join(dir, 'bad-issued.txt');
    await writeFile(bad, `${ID}\nnot-an-id\n`);
    const refused = await iki(['watermark', 'read', '--key', KEY, '--licenses', bad, one]);
    expectFailure(refused, 'USAGE', 2);
    expect(refused.err).toContain(':2:');
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
