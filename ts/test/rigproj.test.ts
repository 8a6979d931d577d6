// Legacy .rigproj bundles (docs/format.md section 13): read only, with zip.js, every limit at
// and just past its edge, names that escape or repeat, encrypted and unsupported entries.
import { BlobWriter, TextReader, Uint8ArrayReader, ZipWriter } from '@zip.js/zip.js/index-native.js';
import { describe, expect, it } from 'vitest';
import { openProject, RIGPROJ_LIMITS, type RigprojLimits } from '../src/project/index.js';
import { craftZip, type CraftEntry } from '../../tests/fixtures/zip-craft.mjs';

const SNAPSHOT = JSON.stringify({ name: 'Old poster', canvas: { width: 300, height: 200 }, text: '<svg onload=alert(1)>' });
const snapshotEntry: CraftEntry = { name: 'snapshot.json', content: new TextEncoder().encode(SNAPSHOT) };

async function bundle(files: Record<string, Uint8Array | string>, options: { password?: string } = {}): Promise<Blob> {
  const writer = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false, ...options });
  for (const [name, content] of Object.entries(files)) {
    await writer.add(name, typeof content === 'string' ? new TextReader(content) : new Uint8ArrayReader(content));
  }
  return writer.close();
}

async function refusal(source: Blob | Uint8Array, limits?: Partial<RigprojLimits>): Promise<{ code?: string; details?: Record<string, unknown> }> {
  try {
    const opened = await openProject(source, limits === undefined ? {} : { rigprojLimits: limits });
    return { code: `opened (${opened.assets.length} assets)` };
  } catch (error) {
    return error as { code?: string; details?: Record<string, unknown> };
  }
}

const zeros = (n: number) => new Uint8Array(n);

describe('.rigproj bundles', () => {
  it('a good bundle opens read only as a new project: legacy, not signed, assets readable', async () => {
    const png = new Uint8Array(5000).map((_, i) => (i * 7919) & 0xff);
    const opened = await openProject(await bundle({ 'snapshot.json': SNAPSHOT, 'assets/img/a.png': png, 'assets/notes.txt': 'hello',
      'thumbnail.png': png }));
    expect(opened.source).toBe('rigproj');
    expect(opened.verdict).toEqual({ kind: 'legacy' });
    expect(opened.meta).toEqual({ name: 'Old poster', canvas: { width: 300, height: 200 } });
    expect(opened.snapshot()).toEqual(JSON.parse(SNAPSHOT));
    expect(opened.assets.map((a) => [a.name, a.type, a.size])).toEqual([['img/a.png', 'image/png', 5000], ['notes.txt', 'text/plain', 5]]);
    expect(await opened.readAsset('img/a.png')).toEqual(png);
    expect(new TextDecoder().decode(await opened.readAsset('notes.txt'))).toBe('hello');
    opened.close();
  });

  it('entry count at and past the default limit', async () => {
    const many = (n: number) => craftZip([snapshotEntry, ...Array.from({ length: n - 1 }, (_, i) => ({ name: `assets/${i}`, content: zeros(0) }))]);
    expect((await refusal(many(RIGPROJ_LIMITS.maxEntries))).code).toBe(`opened (${RIGPROJ_LIMITS.maxEntries - 1} assets)`);
    expect(await refusal(many(RIGPROJ_LIMITS.maxEntries + 1))).toMatchObject({ code: 'RIGPROJ_LIMIT', details: { limit: 'entry count', max: 10_000 } });
  });

  it('declared sizes at and past the default limits are judged before anything is inflated', async () => {
    const declared = (size: number) => craftZip([snapshotEntry, { name: 'assets/big', content: zeros(1), method: 8, declaredSize: size }]);
    // Past the per-entry limit, and past the ratio when within it.
    expect(await refusal(declared(RIGPROJ_LIMITS.maxEntryBytes + 1))).toMatchObject({ code: 'RIGPROJ_LIMIT', details: { limit: 'entry size' } });
    expect(await refusal(declared(RIGPROJ_LIMITS.maxEntryBytes))).toMatchObject({ code: 'RIGPROJ_LIMIT', details: { limit: 'compression ratio' } });
  });

  it('per-entry and total sizes at and past their edge', async () => {
    const files = (a: number, b: number) => craftZip([snapshotEntry, { name: 'assets/a', content: zeros(a) }, { name: 'assets/b', content: zeros(b) }]);
    const limits = { maxEntryBytes: 1000, maxTotalBytes: 1000 + SNAPSHOT.length + 500 };
    expect((await refusal(files(1000, 500), limits)).code).toBe('opened (2 assets)');
    expect(await refusal(files(1001, 10), limits)).toMatchObject({ code: 'RIGPROJ_LIMIT', details: { limit: 'entry size', value: 1001, max: 1000 } });
    expect(await refusal(files(1000, 501), limits)).toMatchObject({ code: 'RIGPROJ_LIMIT', details: { limit: 'total size' } });
  });

  it('compression ratio at and past its edge: a zip bomb is refused, small files are not held to it', async () => {
    const bomb = (n: number) => craftZip([snapshotEntry, { name: 'assets/zeros', content: zeros(n), method: 8 }]);
    // 4 MiB of zeros deflate to about 4 KiB: a ratio near 1000.
    expect(await refusal(bomb(4 * 1024 * 1024))).toMatchObject({ code: 'RIGPROJ_LIMIT', details: { limit: 'compression ratio', max: 100 } });
    expect((await refusal(bomb(RIGPROJ_LIMITS.ratioFloorBytes))).code).toBe('opened (1 assets)');
    expect(await refusal(bomb(RIGPROJ_LIMITS.ratioFloorBytes + 1))).toMatchObject({ code: 'RIGPROJ_LIMIT', details: { limit: 'compression ratio' } });
    const compressed = new Uint8Array(2000).fill(65);
    const ratio = (max: number) => refusal(craftZip([snapshotEntry, { name: 'assets/a', content: compressed, method: 8 }]),
      { ratioFloorBytes: 0, maxRatio: max });
    const actual = (await ratio(1)).details?.value as number;
    expect((await ratio(actual)).code).toBe('opened (1 assets)');
    expect((await ratio(actual - 1)).code).toBe('RIGPROJ_LIMIT');
  });

  it('an entry that inflates past its declared size stops there', async () => {
    const lying = craftZip([snapshotEntry, { name: 'assets/liar', content: zeros(50_000), method: 8, declaredSize: 1000 }]);
    const opened = await openProject(lying, { rigprojLimits: { maxRatio: 1e9 } });
    const error = await opened.readAsset('liar').catch((e: unknown) => e);
    expect(['RIGPROJ_LIMIT', 'RIGPROJ_DAMAGED']).toContain((error as { code: string }).code);
    opened.close();
  });

  it('names that are absolute, escape, repeat or hide are refused', async () => {
    for (const name of ['/etc/passwd', 'assets/../../x', '../x', 'assets/./a', 'assets//a', 'C:/x', 'assets\\..\\x', 'assets/a\u0000b']) {
      const result = await refusal(craftZip([snapshotEntry, { name, content: zeros(1) }]));
      expect(result, name).toMatchObject({ code: 'RIGPROJ_BAD_NAME' });
    }
    const twice = await refusal(craftZip([snapshotEntry, { name: 'assets/a', content: zeros(1) }, { name: 'assets/a', content: zeros(2) }]));
    expect(twice).toMatchObject({ code: 'RIGPROJ_BAD_NAME', details: { reason: 'repeated' } });
    const nfc = await refusal(craftZip([snapshotEntry, { name: 'assets/\u00e9', content: zeros(1) }, { name: 'assets/e\u0301', content: zeros(1) }]));
    expect(nfc).toMatchObject({ code: 'RIGPROJ_BAD_NAME', details: { reason: 'repeated' } });
  });

  it('encrypted and unsupported entries are refused clearly; damage too', async () => {
    expect(await refusal(await bundle({ 'snapshot.json': SNAPSHOT, 'assets/a.txt': 'secret' }, { password: 'pw' })))
      .toMatchObject({ code: 'RIGPROJ_ENCRYPTED' });
    expect(await refusal(craftZip([snapshotEntry, { name: 'assets/a', content: zeros(5), flags: 1 }]))).toMatchObject({ code: 'RIGPROJ_ENCRYPTED' });
    expect(await refusal(craftZip([snapshotEntry, { name: 'assets/a', content: zeros(5), method: 12 }])))
      .toMatchObject({ code: 'RIGPROJ_UNSUPPORTED', details: { method: 12 } });
    // Entries sharing their data (the overlapping zip bomb): bounded at open by the total size,
    // and the second read of the same bytes is refused (here its local header names the first).
    const overlapping = await openProject(craftZip([snapshotEntry, { name: 'assets/a', content: zeros(10) },
      { name: 'assets/b', content: zeros(10), sameDataAs: 1 }]));
    await overlapping.readAsset('a');
    const second = await overlapping.readAsset('b').catch((e: { code: string }) => e);
    expect(['RIGPROJ_LIMIT', 'RIGPROJ_DAMAGED']).toContain((second as { code: string }).code);
    overlapping.close();
    const good = craftZip([snapshotEntry]);
    expect(await refusal(good.subarray(0, good.length - 5))).toMatchObject({ code: 'RIGPROJ_DAMAGED' });
    expect(await refusal(craftZip([{ name: 'assets/a', content: zeros(1) }]))).toMatchObject({ code: 'BAD_SNAPSHOT' });
    expect(await refusal(craftZip([{ name: 'snapshot.json', content: new TextEncoder().encode('{"name":"x"}') }]))).toMatchObject({ code: 'BAD_SNAPSHOT' });
  });
});
