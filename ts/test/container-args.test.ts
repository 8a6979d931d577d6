// Argument checks of the container API: wrong types are TypeErrors, wrong
// lengths and ranges RangeErrors, each naming the argument, thrown before
// WASM is called.
import { beforeAll, describe, expect, it } from 'vitest';
import { type NewEntry, type WriteOptions, hashEntry, openContainer, readContainer, writeContainer } from '../src/container.js';
import { ContentKey, SigningKey } from '../src/keys.js';
import { loadWasm } from '../src/wasm.js';
import { PASSWORD, entry, options, rejection, sample } from './container-support.js';

let key: SigningKey;
let good: NewEntry;
beforeAll(async () => {
  await loadWasm();
  key = SigningKey.generate();
  good = entry('a', 'stored', sample(10, 1));
});

/** Expects `fn` to throw `type` with a message naming `name`. */
function refuses(fn: () => unknown, type: typeof TypeError | typeof RangeError, name: string) {
  expect(fn).toThrow(type);
  expect(fn).toThrow(name);
}

describe('readContainer and openContainer', () => {
  it('check the source, kind and unlock', async () => {
    const file = new Uint8Array(0);
    const cases: [unknown, unknown, typeof TypeError, string][] = [
      ['bytes', { kind: 'project' }, TypeError, 'source'],
      [[1, 2, 3], { kind: 'project' }, TypeError, 'source'],
      [file, undefined, TypeError, 'options'],
      [file, { kind: 'Project' }, TypeError, 'options.kind'],
      [file, { kind: 'model', unlock: 'hunter2' }, TypeError, 'options.unlock'],
      [file, { kind: 'model', unlock: { password: 42 } }, TypeError, 'options.unlock.password'],
      [file, { kind: 'model', unlock: { identity: new Uint8Array(32) } }, TypeError, 'options.unlock.identity'],
      [file, { kind: 'model', unlock: { contentKey: new Uint8Array(32) } }, TypeError, 'options.unlock.contentKey'],
      [file, { kind: 'model', unlock: { player: {} } }, TypeError, 'options.unlock.player'],
    ];
    for (const [source, opts, type, name] of cases) {
      const error = await rejection(readContainer(source as Uint8Array, opts as { kind: 'project' }).next());
      expect(error, name).toBeInstanceOf(type);
      expect((error as Error).message).toContain(name);
    }
    const error = await rejection(openContainer(new Uint8Array(0), { kind: 'x' as 'project' }));
    expect(error).toBeInstanceOf(TypeError);
  });

  it('a source yielding something else than bytes is a TypeError', async () => {
    async function* strings() {
      yield 'not bytes' as unknown as Uint8Array;
    }
    const error = await rejection(openContainer(strings(), { kind: 'project' }));
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toContain('source');
  });

  it('hashEntry checks its source', async () => {
    expect(await rejection(hashEntry(123 as unknown as Uint8Array))).toBeInstanceOf(TypeError);
  });
});

describe('writeContainer', () => {
  const write = (entries: unknown, extra: Partial<WriteOptions> | Record<string, unknown> = {}) => () =>
    writeContainer(entries as NewEntry[], { ...options('project', key), ...extra } as WriteOptions);

  it('checks the entries', () => {
    refuses(write('a'), TypeError, 'entries');
    refuses(write([{ ...good, path: 1 }]), TypeError, 'entries[0].path');
    refuses(write([good, { ...good, type: undefined }]), TypeError, 'entries[1].type');
    refuses(write([{ ...good, encoding: 'gzip' }]), TypeError, 'entries[0].encoding');
    refuses(write([{ ...good, data: 'x' }]), TypeError, 'entries[0].data');
    refuses(write([{ ...good, size: -1 }]), RangeError, 'entries[0].size');
    refuses(write([{ ...good, size: 1.5 }]), TypeError, 'entries[0].size');
    refuses(write([{ ...good, size: 2 ** 53 }]), RangeError, 'entries[0].size');
    refuses(write([{ ...good, size: 11 }]), RangeError, 'entries[0].size');
    refuses(write([{ ...good, sha256: 'ABC' }]), TypeError, 'entries[0].sha256');
    refuses(write([{ ...good, sha256: undefined }]), TypeError, 'entries[0].sha256');
    refuses(write([{ ...good, meta: [] }]), TypeError, 'entries[0].meta');
  });

  it('checks the options', () => {
    refuses(() => writeContainer([], undefined as unknown as WriteOptions), TypeError, 'options');
    refuses(write([], { kind: 'both' }), TypeError, 'options.kind');
    refuses(write([], { signingKey: new Uint8Array(32) }), TypeError, 'options.signingKey');
    refuses(write([], { signer: { kind: 'robot' } }), TypeError, 'options.signer.kind');
    refuses(write([], { signer: { kind: 'device', name: 7 } }), TypeError, 'options.signer.name');
    refuses(write([], { meta: 'x' }), TypeError, 'options.meta');
    refuses(write([], { chunkSize: 4095 }), RangeError, 'options.chunkSize');
    refuses(write([], { chunkSize: 16 * 1024 * 1024 + 1 }), RangeError, 'options.chunkSize');
    refuses(write([], { createdMs: -1 }), RangeError, 'options.createdMs');
    refuses(write([], { deflateLevel: 11 }), RangeError, 'options.deflateLevel');
  });

  it('checks the protection', () => {
    refuses(write([], { protection: {} }), TypeError, 'options.protection');
    refuses(write([], { protection: { password: new Uint8Array(3) } }), TypeError, 'options.protection.password');
    refuses(write([], { protection: { recipients: [new Uint8Array(31)] } }), RangeError, 'options.protection.recipients[0]');
    refuses(write([], { protection: { recipients: 'x' } }), TypeError, 'options.protection.recipients');
    refuses(write([], { protection: { account: { accountId: 'a', blob: new Uint8Array(1) } } }), TypeError, 'options.protection.contentKey');
    refuses(write([], { protection: { account: { accountId: 1, blob: new Uint8Array(1) } } }), TypeError, 'options.protection.account.accountId');
    refuses(write([], { protection: { password: PASSWORD, contentKey: 'k' } }), TypeError, 'options.protection.contentKey');
    refuses(write([], { protection: { password: PASSWORD, passwordCost: { mKib: 8, t: 1 } } }), TypeError, 'options.protection.passwordCost.p');
  });

  it('a freed key handle is INVALID_STATE', () => {
    const spent = SigningKey.generate();
    spent.free();
    expect(write([good], { signingKey: spent })).toThrow(expect.objectContaining({ code: 'INVALID_STATE' }));
    const contentKey = ContentKey.generate();
    contentKey.free();
    const protection = { account: { accountId: 'a', blob: new Uint8Array(73) }, contentKey };
    expect(write([good], { protection })).toThrow(expect.objectContaining({ code: 'INVALID_STATE' }));
  });
});
