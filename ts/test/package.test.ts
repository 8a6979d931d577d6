// ts/src/package: reading model and project folders into entries (what `iki pack` writes),
// the refusals, and the unpack layout (where `iki unpack` writes each entry).
import { mkdir, mkdtemp, rm, symlink, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkEntryPath, hashSource, normalizeReference, PackageError, readModelFolder, readProjectFolder, unpackLayout,
  type FolderPackage,
} from '../src/package/index.js';
import { writeModelPackage, writeProjectFolder } from '../../tests/fixtures/packages.mjs';
import { decodePng } from '../../tests/fixtures/png.mjs';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'iki-package-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let counter = 0;
const fresh = () => join(root, `case-${counter++}`);

async function refusal(promise: Promise<unknown>): Promise<PackageError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(PackageError);
  return error as PackageError;
}

async function editModel3(dir: string, name: string, edit: (refs: Record<string, unknown>) => void): Promise<void> {
  const file = join(dir, name);
  const model = JSON.parse(await readFile(file, 'utf8')) as { FileReferences: Record<string, unknown> };
  edit(model.FileReferences);
  await writeFile(file, JSON.stringify(model));
}

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('readModelFolder', () => {
  it('packs the model3.json and every referenced file, textures as rgba8 with their pixels', async () => {
    const fixture = await writeModelPackage(fresh());
    const pkg = await readModelFolder(fixture.dir);
    expect(pkg.meta).toEqual({ format: 'iki-model', version: 1, name: 'Fixture', role: 'master' });
    expect(pkg.entries.map((e) => e.path).sort()).toEqual(fixture.files);
    expect(pkg.ignored).toEqual(fixture.unreferenced);
    for (const entry of pkg.entries) {
      const { size, sha256 } = await hashSource(entry.data);
      expect({ size, sha256 }).toEqual({ size: entry.size, sha256: entry.sha256 });
      if (fixture.textures.includes(entry.path)) {
        const png = decodePng(new Uint8Array(await readFile(join(fixture.dir, entry.path))));
        expect(entry).toMatchObject({ type: 'image/x-rgba8', encoding: 'rgba8', sha256: sha(png.rgba),
          meta: { kind: 'texture', width: png.width, height: png.height, source: 'image/png' } });
      } else {
        expect(entry.encoding).toBe('deflate');
        expect(entry.sha256).toBe(sha(new Uint8Array(await readFile(join(fixture.dir, entry.path)))));
      }
    }
  });

  it('lists a file referenced twice once, and takes --name', async () => {
    const fixture = await writeModelPackage(fresh());
    const pkg = await readModelFolder(fixture.dir, { name: 'Renamed' });
    const paths = pkg.entries.map((e) => e.path);
    expect(paths.filter((p) => p === 'motions/idle_00.motion3.json')).toHaveLength(1);
    expect(new Set(paths).size).toBe(paths.length);
    expect(pkg.meta.name).toBe('Renamed');
  });

  it('refuses a reference that leaves the folder', async () => {
    const fixture = await writeModelPackage(fresh());
    await writeFile(join(fixture.dir, '..', 'outside.json'), '{}');
    await editModel3(fixture.dir, fixture.model3, (refs) => (refs.Physics = '../outside.json'));
    const error = await refusal(readModelFolder(fixture.dir));
    expect(error.code).toBe('PATH_ESCAPES');
  });

  it('refuses an absolute reference and a backslash', async () => {
    const fixture = await writeModelPackage(fresh());
    await editModel3(fixture.dir, fixture.model3, (refs) => (refs.Pose = '/etc/passwd'));
    expect((await refusal(readModelFolder(fixture.dir))).code).toBe('PATH_ESCAPES');
    await editModel3(fixture.dir, fixture.model3, (refs) => (refs.Pose = 'a\\b.json'));
    expect((await refusal(readModelFolder(fixture.dir))).code).toBe('BAD_PATH');
  });

  it('refuses a symbolic link that leads outside the folder', async () => {
    const fixture = await writeModelPackage(fresh());
    const outside = join(fixture.dir, '..', 'secret.json');
    await writeFile(outside, '{"secret":true}');
    await rm(join(fixture.dir, 'Fixture.pose3.json'));
    await symlink(outside, join(fixture.dir, 'Fixture.pose3.json'));
    expect((await refusal(readModelFolder(fixture.dir))).code).toBe('PATH_ESCAPES');
  });

  it('refuses a missing file, naming it', async () => {
    const fixture = await writeModelPackage(fresh());
    await rm(join(fixture.dir, 'sounds/tap_00.wav'));
    const error = await refusal(readModelFolder(fixture.dir));
    expect(error.code).toBe('MISSING_FILE');
    expect(error.path).toBe('sounds/tap_00.wav');
  });

  it('refuses a texture that is not a PNG', async () => {
    const fixture = await writeModelPackage(fresh());
    await writeFile(join(fixture.dir, fixture.textures[1] as string), Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 1, 2, 3));
    const error = await refusal(readModelFolder(fixture.dir));
    expect(error.code).toBe('NOT_PNG');
    expect(error.path).toBe(fixture.textures[1]);
  });

  it('refuses a folder with no model3.json or two', async () => {
    const fixture = await writeModelPackage(fresh());
    await writeFile(join(fixture.dir, 'Other.model3.json'), '{}');
    expect((await refusal(readModelFolder(fixture.dir))).code).toBe('BAD_MODEL');
    const empty = fresh();
    await mkdir(empty);
    expect((await refusal(readModelFolder(empty))).code).toBe('BAD_MODEL');
  });

  it('refuses a model3.json without Moc or with a mistyped field', async () => {
    const fixture = await writeModelPackage(fresh());
    await editModel3(fixture.dir, fixture.model3, (refs) => (refs.Textures = 'not-a-list.png'));
    expect((await refusal(readModelFolder(fixture.dir))).code).toBe('BAD_MODEL');
    await editModel3(fixture.dir, fixture.model3, (refs) => delete refs.Moc);
    expect((await refusal(readModelFolder(fixture.dir))).code).toBe('BAD_MODEL');
  });
});

describe('readProjectFolder', () => {
  let fixture: Awaited<ReturnType<typeof writeProjectFolder>>;
  let pkg: FolderPackage;
  beforeAll(async () => {
    fixture = await writeProjectFolder(fresh());
    pkg = await readProjectFolder(fixture.dir, { app: 'test 1', savedAt: new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 6)) });
  });

  it('writes the project meta of docs/format.md 5.1 with the asset names', async () => {
    expect(pkg.meta).toMatchObject({ format: 'iki-project', version: 1, name: 'Fixture project',
      savedAt: '2025-01-02T03:04:05.006Z', canvas: { width: 1920, height: 1080 }, app: 'test 1' });
    const names = pkg.meta.assetNames as Record<string, string>;
    const assets = fixture.files.filter((f) => f.startsWith('assets/'));
    expect(Object.keys(names).sort()).toEqual(assets.map((a) => a.slice('assets/'.length)).sort());
    for (const [name, hash] of Object.entries(names)) {
      expect(hash).toBe(sha(new Uint8Array(await readFile(join(fixture.dir, 'assets', name)))));
    }
  });

  it('stores the snapshot first and each distinct asset once at assets/<sha256>', () => {
    expect(pkg.entries[0]).toMatchObject({ path: 'snapshot.json', type: 'application/x-iki-snapshot', encoding: 'deflate' });
    const names = pkg.meta.assetNames as Record<string, string>;
    expect(names['images/hero.png']).toBe(names['images/hero copy.png']);
    const assetPaths = pkg.entries.slice(1).map((e) => e.path);
    expect(assetPaths.sort()).toEqual([...new Set(Object.values(names))].map((h) => `assets/${h}`).sort());
    const png = pkg.entries.find((e) => e.path === `assets/${names['images/hero.png']}`);
    expect(png).toMatchObject({ type: 'image/png', encoding: 'stored' });
    expect(pkg.entries.find((e) => e.path === `assets/${names['notes.txt']}`)).toMatchObject({ type: 'text/plain', encoding: 'deflate' });
  });

  it('needs a canvas from the snapshot or the options', async () => {
    const dir = fresh();
    await mkdir(dir);
    await writeFile(join(dir, 'snapshot.json'), '{"layers":[]}');
    expect((await refusal(readProjectFolder(dir, { app: 'x' }))).code).toBe('BAD_PROJECT');
    const pkg2 = await readProjectFolder(dir, { app: 'x', canvas: { width: 10, height: 20 } });
    expect(pkg2.meta.canvas).toEqual({ width: 10, height: 20 });
    expect(pkg2.entries).toHaveLength(1);
  });

  it('refuses a snapshot that is not a JSON object and a missing snapshot', async () => {
    const dir = fresh();
    await mkdir(dir);
    expect((await refusal(readProjectFolder(dir, { app: 'x' }))).code).toBe('MISSING_FILE');
    await writeFile(join(dir, 'snapshot.json'), '[1,2]');
    expect((await refusal(readProjectFolder(dir, { app: 'x' }))).code).toBe('BAD_PROJECT');
  });

  it('refuses an asset link that leaves the folder, and ignores files beside assets/', async () => {
    const dir = (await writeProjectFolder(fresh())).dir;
    await writeFile(join(dir, 'stray.txt'), 'not packed');
    const plain = await readProjectFolder(dir, { app: 'x' });
    expect(plain.ignored).toEqual(['stray.txt']);
    await symlink('/etc/hostname', join(dir, 'assets', 'link.txt'));
    expect((await refusal(readProjectFolder(dir, { app: 'x' }))).code).toBe('PATH_ESCAPES');
  });
});

describe('paths and unpack layout', () => {
  it('accepts entry paths the manifest accepts and refuses the rest', () => {
    for (const ok of ['a', 'a/b.png', 'héllo/wörld.json', 'x'.repeat(1024)]) expect(() => checkEntryPath(ok)).not.toThrow();
    for (const bad of ['', '/a', 'a//b', './a', 'a/..', 'a\\b', 'a\u0000b', 'a\nb', 'C:x', 'x'.repeat(1025)]) {
      expect(() => checkEntryPath(bad), bad).toThrow(PackageError);
    }
  });

  it('normalises references the way a player resolves them', () => {
    expect(normalizeReference('./motions/a.json')).toBe('motions/a.json');
    expect(normalizeReference('a/x/../b.json')).toBe('a/b.json');
    expect(() => normalizeReference('a/../../b')).toThrow(/outside/u);
  });

  const sha1 = 'a'.repeat(64);
  const sha2 = 'b'.repeat(64);

  it('sends project assets to every name they had', () => {
    const layout = unpackLayout('project', {
      entries: [{ path: 'snapshot.json' }, { path: `assets/${sha1}` }, { path: `assets/${sha2}` }],
      meta: { assetNames: { 'x/one.png': sha1, 'two.png': sha1 } },
    });
    expect(layout).toEqual([['snapshot.json'], ['assets/x/one.png', 'assets/two.png'], [`assets/${sha2}`]]);
  });

  it('ignores asset names that escape or name nothing (docs/format.md 5.1, issue 22 item 12); refuses collisions', () => {
    const entries = [{ path: `assets/${sha1}` }];
    const hashName = [[`assets/${sha1}`]];
    expect(unpackLayout('project', { entries, meta: { assetNames: { '../../etc/x': sha1 } } })).toEqual(hashName);
    expect(unpackLayout('project', { entries, meta: { assetNames: { 'a.png': sha2 } } })).toEqual(hashName);
    expect(unpackLayout('project', { entries, meta: { assetNames: ['a.png'] } })).toEqual(hashName);
    expect(unpackLayout('project', { entries, meta: { assetNames: { '../x': sha1, 'ok.png': sha1 } } })).toEqual([['assets/ok.png']]);
    expect(() => unpackLayout('model', { entries: [{ path: 'a' }, { path: 'a/b' }], meta: {} })).toThrow(/both a file and a folder/u);
  });
});
