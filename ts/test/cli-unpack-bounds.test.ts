// Issue 22 item 12 against the CLI: `iki unpack` writes an asset named many times in
// `meta.assetNames` once and links the other names (an 8 KiB file must not become hundreds of
// megabytes); a bad name there is ignored as docs/format.md section 5.1 says (and never
// echoed); a reader that closes the pipe early (`iki inspect … | head -c 100`) ends the
// command quietly with status 0.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeContainer } from '../src/container.js';
import { SigningKey } from '../src/keys.js';
import { loadWasm } from '../src/wasm.js';
import { BIN, iki } from './cli-helpers.js';

let root: string;
const at = (name: string) => join(root, name);
const NAMES = 50;
const ASSET_BYTES = 1 << 20;
const LONG_NAME = `${'n'.repeat(2000)}.bin`;

beforeAll(async () => {
  await loadWasm();
  root = await mkdtemp(join(tmpdir(), 'iki-unpack-bounds-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A project whose one 1 MiB asset has `names` in `assetNames` (and whatever `extra` adds). */
async function project(file: string, names: Record<string, string>): Promise<string> {
  const key = SigningKey.generate();
  try {
    const snapshot = new TextEncoder().encode('{}');
    const asset = new Uint8Array(ASSET_BYTES).fill(7);
    const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
    const assetSha = sha(asset);
    const assetNames = Object.fromEntries(Object.entries(names).map(([name, target]) => [name, target === 'asset' ? assetSha : target]));
    const stream = writeContainer([
      { path: 'snapshot.json', type: 'application/x-iki-snapshot', encoding: 'deflate', data: snapshot, size: snapshot.length, sha256: sha(snapshot) },
      { path: `assets/${assetSha}`, type: 'application/octet-stream', encoding: 'deflate', data: asset, size: asset.length, sha256: assetSha },
    ], { kind: 'project', signingKey: key, meta: { format: 'iki-project', version: 1, name: 'n', savedAt: '2025-01-01T00:00:00Z',
      canvas: { width: 1, height: 1 }, app: 'test', assetNames }, signer: { kind: 'device', name: 'test' } });
    const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
    await writeFile(at(file), bytes);
    return assetSha;
  } finally {
    key.free();
  }
}

describe('iki unpack bounds what it writes (issue 22 item 12)', () => {
  it('writes an asset named 50 times once, and links the other 49 names to it', async () => {
    const names = Object.fromEntries(Array.from({ length: NAMES }, (_, i) => [`copies/name-${i}.bin`, 'asset']));
    await project('many.iki', names);
    const run = await iki(['unpack', at('many.iki'), '-o', at('many-out')]);
    expect(run.code, run.err).toBe(0);
    const files = await readdir(at('many-out/assets/copies'));
    expect(files).toHaveLength(NAMES);
    const stats = await Promise.all(files.map((f) => stat(join(at('many-out/assets/copies'), f))));
    expect(new Set(stats.map((s) => s.ino)).size).toBe(1);
    expect(stats.every((s) => s.size === ASSET_BYTES && s.nlink === NAMES)).toBe(true);
    // What the disk holds: one asset's blocks, not fifty.
    expect((stats[0]?.blocks ?? 0) * 512).toBeLessThan(2 * ASSET_BYTES);
  });

  it('ignores bad names in assetNames as docs/format.md 5.1 says, and never echoes one', async () => {
    const sha = await project('bad-names.iki', { 'good/name.bin': 'asset', '../escape.bin': 'asset', [LONG_NAME]: 'asset',
      'nul\u0000.bin': 'asset', 'missing.bin': 'f'.repeat(64), 'not-a-hash.bin': 'zz' });
    const run = await iki(['unpack', at('bad-names.iki'), '-o', at('bad-out')]);
    expect(run.code, run.err).toBe(0);
    expect(run.err + run.out).not.toContain('n'.repeat(100));
    expect((await readdir(at('bad-out'), { recursive: true })).sort()).toEqual(['assets', 'assets/good', 'assets/good/name.bin', 'snapshot.json']);
    expect((await stat(at('bad-out/assets/good/name.bin'))).size).toBe(ASSET_BYTES);
    // With only bad names, the asset keeps its hash name.
    await project('only-bad.iki', { '../escape.bin': 'asset' });
    expect((await iki(['unpack', at('only-bad.iki'), '-o', at('only-bad-out')])).code).toBe(0);
    expect((await stat(at(`only-bad-out/assets/${sha}`))).size).toBe(ASSET_BYTES);
  });
});

describe('a closed pipe (issue 22 item 12)', () => {
  it('iki inspect into a reader that stopped: no stack trace, status 0', async () => {
    await project('inspect.iki', { 'a.bin': 'asset' });
    for (const argv of [['inspect', at('inspect.iki')], ['--help']]) {
      const { code, err } = await new Promise<{ code: number | null; err: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
        // The reader goes away before the command writes (as `head -c 100` does once it has its bytes).
        child.stdout.destroy();
        let text = '';
        child.stderr.setEncoding('utf8').on('data', (t: string) => { text += t; });
        child.on('error', reject);
        child.on('close', (status) => resolve({ code: status, err: text }));
      });
      expect([code, err], argv.join(' ')).toEqual([0, '']);
    }
  });
});
