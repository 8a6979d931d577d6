// A refused unlock leaves the reader locked (docs/format.md section 3): on the
// raw WASM handle, and through readContainer's function form, which is asked
// again with the refusal until a key opens or it gives up.
import { beforeAll, describe, expect, it } from 'vitest';
import { type SlotInfo, type Unlock, openContainer, readContainer } from '../src/container.js';
import { IkiError, callWasm } from '../src/errors.js';
import { SigningKey, X25519Identity, handleOf } from '../src/keys.js';
import { loadWasm, wasm } from '../src/wasm.js';
import { CHEAP, FAKE_SEED, PASSWORD, entry, options, rejection, sample, writeAll } from './container-support.js';

let file: Uint8Array;
const data = sample(10_000, 3);

beforeAll(async () => {
  await loadWasm();
  const key = SigningKey.fromSeed(FAKE_SEED);
  file = await writeAll([entry('a', 'deflate', data)], options('project', key, { chunkSize: 4096, protection: { password: PASSWORD, passwordCost: CHEAP } }));
  key.free();
});

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('retrying an unlock', () => {
  it('on the WASM reader: wrong password is DECRYPT_FAILED, then the right one on the same reader works', () => {
    const reader = new (wasm().WasmReader)('project');
    const identity = X25519Identity.generate();
    try {
      reader.push(file);
      reader.finish();
      expect(reader.next().type).toBe('header');
      expect(reader.next().type).toBe('locked');
      const wrong = (() => {
        try {
          callWasm(() => reader.unlockPassword(utf8('wrong')));
        } catch (error) {
          return error;
        }
      })();
      expect(wrong).toBeInstanceOf(IkiError);
      expect((wrong as IkiError).code).toBe('DECRYPT_FAILED');
      // Another kind of key is refused as well, and the reader stays locked.
      expect(() => callWasm(() => reader.unlockIdentity(handleOf(identity)))).toThrow(expect.objectContaining({ code: 'KEY_REQUIRED' }));
      reader.unlockPassword(utf8(PASSWORD));
      const types: string[] = [];
      for (let e = reader.next(); e !== undefined; e = reader.next()) types.push(e.type);
      expect(types[0]).toBe('manifest');
      expect(types.at(-1)).toBe('end');
    } finally {
      reader.free();
      identity.free();
    }
  });

  it('through readContainer: the function is asked again with the refusal', async () => {
    const asked: (string | undefined)[] = [];
    const answers: Unlock[] = [{ password: 'first guess' }, { password: 'second guess' }, { password: PASSWORD }];
    const unlock = async (slots: SlotInfo[], refused?: IkiError) => {
      expect(slots).toEqual([{ type: 'password', kdf: 1, mKib: 8, t: 1, p: 1 }]);
      asked.push(refused?.code);
      return answers.shift();
    };
    const chunks: Uint8Array[] = [];
    const types: string[] = [];
    for await (const event of readContainer(file, { kind: 'project', unlock })) {
      types.push(event.type);
      if (event.type === 'chunk') chunks.push(event.data);
    }
    expect(asked).toEqual([undefined, 'DECRYPT_FAILED', 'DECRYPT_FAILED']);
    expect(types.slice(0, 3)).toEqual(['header', 'locked', 'manifest']);
    expect(Buffer.concat(chunks)).toEqual(Buffer.from(data));
  });

  it('giving up (undefined) reads on without a key', async () => {
    let calls = 0;
    const opened = await openContainer(file, {
      kind: 'project',
      unlock: () => (++calls === 1 ? { password: 'nope' } : undefined),
    });
    expect(calls).toBe(2);
    expect(opened.manifest).toBeUndefined();
    expect(opened.verified.signer.kind).toBe('device');
  });

  it('a non-retryable failure ends the read; { player } cannot come from a function', async () => {
    const bad = await rejection(openContainer(file, { kind: 'project', unlock: () => ({ player: { openReader: () => wasm().WasmReader.prototype } }) as Unlock }));
    expect((bad as IkiError).code).toBe('INVALID_ARGUMENT');
    const typeError = await rejection(openContainer(file, { kind: 'project', unlock: () => ({ pasword: 'typo' }) as unknown as Unlock }));
    expect(typeError).toBeInstanceOf(TypeError);
  });
});
