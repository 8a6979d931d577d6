/**
 * The tarballs the service serves: the CLI (issue 12 item 2) and `@iki/core`'s browser entry
 * (issue 25 item 3; embed-example.test.ts installs and runs it). `GET /downloads/iki-cli.tgz`
 * answers the tarball `make build` made, and npm installs it from that URL into an empty prefix with no
 * registry reachable (the registry is pointed at a closed port, the cache is empty), after
 * which the installed `iki` prints its version and packs the tests' look-alike model folder
 * into a file that the repository's reader verifies.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as iki from '@iki/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeModelPackage } from '../../tests/fixtures/packages.mjs';
import { startApp, type TestApp } from './helpers/app.js';

const run = promisify(execFile);
let app: TestApp;
let dir: string;

beforeAll(async () => {
  app = await startApp();
  dir = await mkdtemp(join(tmpdir(), 'iki-cli-tgz-test-'));
});
afterAll(async () => {
  await app?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('GET /downloads/iki-cli.tgz and /downloads/iki-core.tgz', () => {
  for (const [base, header] of [['iki-cli', 'x-iki-cli-version'], ['iki-core', 'x-iki-core-version']] as const) {
    it(`${base}: answers the built tarball with its version and SHA-256`, async () => {
      const answer = await app.call('GET', `/downloads/${base}.tgz`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('application/gzip');
      const version = JSON.parse(await readFile(new URL('../../ts/package.json', import.meta.url), 'utf8')).version as string;
      expect(answer.headers.get(header)).toBe(version);
      expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="${base}-${version}.tgz"`);
      expect(answer.headers.get('etag')).toBe(`"${createHash('sha256').update(answer.bytes).digest('hex')}"`);
      // A gzip stream (RFC 1952 magic).
      expect([...answer.bytes.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
      const again = await app.call('GET', `/downloads/${base}.tgz`, { headers: { 'if-none-match': answer.headers.get('etag') ?? '' } });
      expect(again.status).toBe(304);
      // Issue 22 item 12: `*`, a weak tag and a list match as on the copy route (RFC 9110 §13.1.2); another tag does not.
      const etag = answer.headers.get('etag') ?? '';
      for (const match of ['*', `W/${etag}`, `"0000", ${etag}`, ` W/"1111" ,W/${etag} `]) {
        const matched = await app.call('GET', `/downloads/${base}.tgz`, { headers: { 'if-none-match': match } });
        expect([matched.status, matched.bytes.length], match).toEqual([304, 0]);
      }
      for (const match of [`"${'0'.repeat(64)}"`, etag.slice(1, -1), '']) {
        expect((await app.call('GET', `/downloads/${base}.tgz`, { headers: { 'if-none-match': match } })).status, match).toBe(200);
      }
    });
  }

  it('installs with npm from the service alone, then runs iki --version and iki pack', async () => {
    const prefix = join(dir, 'global');
    const env = {
      ...process.env, npm_config_registry: 'http://127.0.0.1:9/', npm_config_cache: join(dir, 'npm-cache'),
      npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', npm_config_prefix: prefix,
    };
    await mkdir(prefix, { recursive: true });
    await run('npm', ['install', '-g', `${app.url}/downloads/iki-cli.tgz`], { cwd: dir, env, timeout: 120_000 });
    const bin = join(prefix, 'bin', 'iki');
    expect((await stat(bin)).isFile()).toBe(true);
    // Run from an empty folder with a PATH of the prefix only beside node: nothing of this repository is reachable.
    const work = join(dir, 'empty');
    await mkdir(work);
    const cliEnv = { PATH: `${join(prefix, 'bin')}:${join(process.execPath, '..')}`, HOME: dir };
    const version = await run(bin, ['--version'], { cwd: work, env: cliEnv });
    expect(version.stdout).toMatch(/^iki \d+\.\d+\.\d+ \(core \d+\.\d+\.\d+\)\n$/);
    await run(bin, ['keygen', '-o', 'seller.key'], { cwd: work, env: cliEnv });
    const model = await writeModelPackage(join(work, 'model'), { name: 'Tarball', atlasSize: 64, mocBytes: 2000, soundSamples: 200 });
    const packed = await run(bin, ['pack', 'model', '--key', 'seller.key', '-o', 'model.ikm', '--json'], { cwd: work, env: cliEnv });
    const summary = JSON.parse(packed.stdout) as { entries: number; kind: string };
    expect(summary).toMatchObject({ kind: 'model', entries: model.files.length });
    const opened = await iki.openContainer(new Uint8Array(await readFile(join(work, 'model.ikm'))), { kind: 'model' });
    expect([...opened.entries.keys()].sort()).toEqual([...model.files].sort());
  }, 180_000);
});
