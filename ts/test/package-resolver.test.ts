// The package resolver of @iki/core/browser (issue 12 item 3) and the model checks shared by
// `iki pack` and the browser's master export (item 1). Path logic, fetch answers and 404s
// run in Node (Response, URL and TextDecoder are the same there); bitmaps and audio are
// covered in Chromium by server/test/browser/master-export.test.ts.
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NotInPackage, PACKAGE_ORIGIN, PackageResolver } from '../src/browser/package-resolver.js';
import type { OpenedPackage } from '../src/browser/package-assembler.js';
import { PackageError } from '../src/package/errors.js';
import { pickModel3, planModel } from '../src/package/model-plan.js';
import { normalizePosix, normalizeReference } from '../src/package/reference.js';

const text = (s: string) => new TextEncoder().encode(s);
const MODEL = { Version: 3, FileReferences: { Moc: 'm.moc3', Textures: ['tex/t0.png'], Motions: { Idle: [{ File: 'motions/idle.motion3.json', Sound: 'sounds/a b.wav' }] } } };

function pkg(): OpenedPackage {
  const file = (path: string, bytes: Uint8Array, type: string, encoding: 'deflate' | 'rgba8' = 'deflate', meta?: object) =>
    ({ info: { path, type, encoding, size: bytes.length, ...(meta === undefined ? {} : { meta }) }, bytes, verified: true });
  return {
    manifest: { entries: [], meta: {} },
    verified: { publicKey: new Uint8Array(32), signer: { kind: 'service' }, signerJson: '{}' } as never,
    files: [
      file('m.model3.json', text(JSON.stringify(MODEL)), 'application/json'),
      file('m.moc3', new Uint8Array([0x4d, 0x4f, 0x43, 0x33]), 'application/octet-stream'),
      file('tex/t0.png', new Uint8Array(2 * 1 * 4).fill(7), 'image/x-rgba8', 'rgba8', { kind: 'texture', width: 2, height: 1 }),
      file('motions/idle.motion3.json', text('{"Curves":[]}'), 'application/json'),
      file('sounds/a b.wav', new Uint8Array([1, 2, 3]), 'audio/wav'),
    ],
  };
}

describe('PackageResolver', () => {
  it('resolves references like URLs against the model JSON, and answers from memory', async () => {
    const r = new PackageResolver(pkg(), { id: 'lic_123' });
    expect(r.baseUrl).toBe(`${PACKAGE_ORIGIN}/lic_123/`);
    expect(r.modelUrl).toBe(`${PACKAGE_ORIGIN}/lic_123/m.model3.json`);
    for (const ref of ['m.moc3', './m.moc3', 'tex/../m.moc3', '%6D.moc3', `${PACKAGE_ORIGIN}/lic_123/m.moc3`]) {
      expect(r.pathOf(ref)).toBe('m.moc3');
    }
    expect(r.pathOf('../sounds/a%20b.wav', 'motions/idle.motion3.json')).toBe('sounds/a b.wav');
    expect(r.pathOf(r.urlOf('sounds/a b.wav'))).toBe('sounds/a b.wav');
    const moc = await r.fetch(new URL('m.moc3', r.modelUrl));
    expect(moc.status).toBe(200);
    expect(moc.headers.get('content-type')).toBe('application/octet-stream');
    expect([...new Uint8Array(await moc.arrayBuffer())]).toEqual([0x4d, 0x4f, 0x43, 0x33]);
    expect(await (await r.fetch(r.modelUrl)).json()).toEqual(MODEL);
    const texture = r.resolve('tex/t0.png');
    expect(texture.headers.get('content-type')).toBe('image/x-rgba8; width=2; height=1');
    expect((await texture.arrayBuffer()).byteLength).toBe(8);
    expect(r.json('m.model3.json')).toEqual(MODEL);
    const head = await r.fetch(r.modelUrl, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
  });

  it('answers 404 (and NotInPackage) for anything outside or missing, and never the network', async () => {
    const r = new PackageResolver(pkg(), { id: 'lic_123' });
    for (const ref of ['../../etc/passwd', '../lic_999/m.moc3', 'https://example.com/m.moc3', 'blob:https://x/1',
      'data:text/plain,hi', 'missing.json', 'tex/']) {
      const answer = await r.fetch(ref);
      expect(answer.status, ref).toBe(404);
      expect(answer.headers.get('x-iki-error'), ref).toBe('NOT_IN_PACKAGE');
      expect(() => r.file(ref), ref).toThrow(NotInPackage);
    }
    expect((await r.fetch(r.modelUrl, { method: 'POST', body: 'x' })).status).toBe(405);
    expect(() => r.imageData('m.moc3')).toThrow(TypeError);
  });

  it('gives copies, and zero-fills the package when closed', async () => {
    const opened = pkg();
    const r = new PackageResolver(opened);
    const copy = new Uint8Array(await r.resolve('m.moc3').arrayBuffer());
    copy.fill(0);
    expect(r.file('m.moc3').bytes[0]).toBe(0x4d);
    r.close();
    expect(opened.files.every((f) => f.bytes.every((b) => b === 0))).toBe(true);
    expect((await r.fetch(r.modelUrl)).status).toBe(404);
  });
});

describe('model checks shared by iki pack and the browser export', () => {
  it('normalises like path.posix.normalize', () => {
    for (const p of ['a/./b', 'a//b/', '../a', 'a/../../b', '/a/../b', '.', '', 'a/..', './', 'x/y/../../..', '/..', 'a/b/..']) {
      expect(normalizePosix(p), p).toBe(posix.normalize(p));
    }
    expect(normalizeReference('./a/x/../b.png')).toBe('a/b.png');
    expect(() => normalizeReference('../a')).toThrow(expect.objectContaining({ code: 'PATH_ESCAPES' }));
  });

  it('picks the one model JSON and lists missing and unreferenced files', () => {
    expect(() => pickModel3(['a.txt'], 'f')).toThrow(expect.objectContaining({ code: 'BAD_MODEL' }));
    expect(() => pickModel3(['a.model3.json', 'b.model3.json'], 'f')).toThrow(PackageError);
    const plan = planModel('m.model3.json', JSON.stringify(MODEL), ['m.model3.json', 'm.moc3', 'tex/t0.png', 'README.txt']);
    expect(plan).toEqual({
      model3: 'm.model3.json', name: 'm', files: ['m.model3.json', 'm.moc3', 'motions/idle.motion3.json', 'sounds/a b.wav'],
      textures: ['tex/t0.png'], missing: ['motions/idle.motion3.json', 'sounds/a b.wav'], ignored: ['README.txt'],
    });
    const self = { FileReferences: { Moc: 'm.model3.json' } };
    expect(() => planModel('m.model3.json', JSON.stringify(self), [])).toThrow(expect.objectContaining({ code: 'BAD_MODEL' }));
  });
});
