// A read stops when its AbortSignal fires: before it starts, between the password slots of an
// unlock (each one Argon2id derivation, at most four per unlock) and between chunks; and a
// password slot left untried by the unlock's bounds makes the refusal LIMIT_EXCEEDED, which,
// like DECRYPT_FAILED, leaves the reader locked for another try (docs/format.md section 3).
import { beforeAll, describe, expect, it } from 'vitest';
import { openContainer, readContainer, type ReadEvent, type SlotInfo } from '../src/container.js';
import { IkiError } from '../src/errors.js';
import { SigningKey } from '../src/keys.js';
import { loadWasm } from '../src/wasm.js';
import { FAKE_SEED, PASSWORD, entry, options, rejection, sample, writeAll } from './container-support.js';
import { vectorBytes } from './hostile-files.js';

let plain: Uint8Array;

beforeAll(async () => {
  await loadWasm();
  const key = SigningKey.fromSeed(FAKE_SEED);
  plain = await writeAll([entry('a', 'stored', sample(5 * 4096, 4))], options('project', key, { chunkSize: 4096 }));
  key.free();
});

const isAbort = (error: unknown) => error instanceof Error && error.name === 'AbortError';

describe('cancelling a read', () => {
  it('refuses at once when the signal has already fired', async () => {
    const error = await rejection(openContainer(plain, { kind: 'project', signal: AbortSignal.abort() }));
    expect(isAbort(error)).toBe(true);
    await expect(openContainer(plain, { kind: 'project', signal: 'stop' as never })).rejects.toThrow(TypeError);
  });

  it('stops between chunks', async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const error = await rejection((async () => {
      for await (const event of readContainer(plain, { kind: 'project', signal: controller.signal })) {
        seen.push(event.type);
        if (event.type === 'chunk') controller.abort();
      }
    })());
    expect(isAbort(error)).toBe(true);
    expect(seen).toEqual(['header', 'manifest', 'chunk']);
  });

  it('stops between password slots', async () => {
    // Four slots; only the fourth opens with PASSWORD, so an unhindered unlock derives four keys.
    const file = vectorBytes('ok_password_fourth_slot');
    expect((await openContainer(file, { kind: 'project', unlock: { password: PASSWORD } })).entries.size).toBe(2);
    const controller = new AbortController();
    const unlock = () => {
      // Fires at the first turn of the event loop, which the unlock gives after its first slot.
      setTimeout(() => controller.abort(), 0);
      return { password: PASSWORD };
    };
    const events: ReadEvent['type'][] = [];
    const error = await rejection((async () => {
      for await (const event of readContainer(file, { kind: 'project', unlock, signal: controller.signal })) events.push(event.type);
    })());
    expect(isAbort(error)).toBe(true);
    expect(events).toEqual(['header']);
  });
});

describe('the bounds of one unlock', () => {
  it('refuses a fifth password slot as LIMIT_EXCEEDED and asks the unlock function again', async () => {
    const file = vectorBytes('keys_password_slot_beyond_four');
    const direct = await rejection(openContainer(file, { kind: 'project', unlock: { password: PASSWORD } }));
    expect(direct).toBeInstanceOf(IkiError);
    expect(direct).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 'MAX_PASSWORD_SLOTS_TRIED', value: '5', max: '4' } });
    const asked: (string | undefined)[] = [];
    const stop = new Error('stop asking');
    const unlock = (slots: SlotInfo[], refused?: IkiError) => {
      expect(slots.filter((s) => s.type === 'password')).toHaveLength(5);
      asked.push(refused?.code);
      if (refused !== undefined) throw stop;
      return { password: PASSWORD };
    };
    expect(await rejection(openContainer(file, { kind: 'project', unlock }))).toBe(stop);
    expect(asked).toEqual([undefined, 'LIMIT_EXCEEDED']);
  });
});
