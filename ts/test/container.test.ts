// Round trips through the TS API: both kinds, every encoding, every kind of
// protection, edge-sized entries and both ends of the chunk_size range.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Kind,
  type NewEntry,
  type ReadEvent,
  type WriteOptions,
  ContentKey,
  hashEntry,
  openContainer,
  readContainer,
  writeContainer,
} from '../src/container.js';
import { IkiError } from '../src/errors.js';
import { SigningKey, X25519Identity } from '../src/keys.js';
import { collect } from '../src/streams.js';
import { loadWasm } from '../src/wasm.js';
import { CHEAP, FAKE_SEED, PASSWORD, entry, imageEntry, inPieces, options, rejection, sample, sha256hex, writeAll } from './container-support.js';

let key: SigningKey;
beforeAll(async () => {
  await loadWasm();
  key = SigningKey.fromSeed(FAKE_SEED);
});

/** Entries around one chunk_size, in every encoding. */
function edgeEntries(chunkSize: number): NewEntry[] {
  const out: NewEntry[] = [];
  const sizes = [0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 2 * chunkSize + 7];
  sizes.forEach((size, i) => {
    out.push(entry(`stored/${i}`, 'stored', sample(size, i, true)));
    out.push(entry(`deflate/${i}`, 'deflate', sample(size, i + 10, i % 2 === 0)));
  });
  out.push(imageEntry('t/wide.png', chunkSize / 4, 3, 1));
  out.push(imageEntry('t/odd.png', 37, 11, 2));
  return out;
}

async function expectRoundTrip(entries: NewEntry[], opts: WriteOptions, unlock?: Parameters<typeof openContainer>[1]['unlock']) {
  const file = await writeAll(entries, opts);
  const opened = await openContainer(file, { kind: opts.kind, ...(unlock === undefined ? {} : { unlock }) });
  expect(opened.header.kind).toBe(opts.kind);
  expect(opened.header.encrypted).toBe(opts.protection !== undefined);
  expect(opened.header.createdMs).toBe(opts.createdMs);
  expect(opened.verified.publicKey).toEqual(key.publicKey);
  expect(opened.verified.signer).toEqual(opts.signer);
  expect(opened.manifest?.meta).toEqual(opts.meta);
  expect(opened.manifest?.entries.map((e) => e.path)).toEqual(entries.map((e) => e.path));
  for (const e of entries) expect(sha256hex(opened.entries.get(e.path) ?? new Uint8Array(1))).toBe(e.sha256);
  return { file, opened };
}

describe('round trips', () => {
  it.each<Kind>(['project', 'model'])('a plain %s file at chunk_size 4096', async (kind) => {
    const { opened } = await expectRoundTrip(edgeEntries(4096), options(kind, key, { chunkSize: 4096 }));
    expect(opened.header.chunkSize).toBe(4096);
    expect(opened.slots).toEqual([]);
  });

  it('a password file (cheap Argon2id), wrong password then right one', async () => {
    const opts = options('project', key, { chunkSize: 4096, protection: { password: PASSWORD, passwordCost: CHEAP } });
    const { file, opened } = await expectRoundTrip(edgeEntries(4096), opts, { password: PASSWORD });
    expect(opened.slots).toEqual([{ type: 'password', kdf: 1, mKib: 8, t: 1, p: 1 }]);
    const wrong = await rejection(openContainer(file, { kind: 'project', unlock: { password: 'nope' } }));
    expect(wrong).toBeInstanceOf(IkiError);
    expect((wrong as IkiError).code).toBe('DECRYPT_FAILED');
  });

  it('a password is used in NFC form', async () => {
    const composed = 'caf\u00e9';
    const decomposed = 'cafe\u0301';
    const opts = options('project', key, { protection: { password: composed, passwordCost: CHEAP } });
    const { file } = await expectRoundTrip([entry('a', 'stored', sample(10, 1))], opts, { password: composed });
    const opened = await openContainer(file, { kind: 'project', unlock: { password: decomposed } });
    expect(opened.entries.get('a')).toEqual(sample(10, 1));
  });

  it('a recipient model file opens with the identity only', async () => {
    const identity = X25519Identity.generate();
    const other = X25519Identity.generate();
    try {
      const opts = options('model', key, { chunkSize: 8192, protection: { recipients: [other.publicKey, identity.publicKey] } });
      const { file, opened } = await expectRoundTrip(edgeEntries(8192), opts, { identity });
      expect(opened.slots.map((s) => s.type)).toEqual(['recipient', 'recipient']);
      expect(opened.slots[1]).toEqual({ type: 'recipient', recipient: identity.publicKey });
      const stranger = X25519Identity.generate();
      const error = await rejection(openContainer(file, { kind: 'model', unlock: { identity: stranger } }));
      expect((error as IkiError).code).toBe('DECRYPT_FAILED');
      stranger.free();
    } finally {
      identity.free();
      other.free();
    }
  });

  it('an account file opens with its content key; a wrong key is DECRYPT_FAILED', async () => {
    const contentKey = ContentKey.generate();
    const wrongKey = ContentKey.generate();
    try {
      const blob = new Uint8Array(73).fill(3);
      const opts = options('project', key, { protection: { account: { accountId: 'acct_1', blob }, contentKey } });
      const { file, opened } = await expectRoundTrip(edgeEntries(4096).slice(0, 6), opts, { contentKey });
      expect(opened.slots).toEqual([{ type: 'account', accountId: 'acct_1', blob }]);
      const error = await rejection(openContainer(file, { kind: 'project', unlock: { contentKey: wrongKey } }));
      expect((error as IkiError).code).toBe('DECRYPT_FAILED');
    } finally {
      contentKey.free();
      wrongKey.free();
    }
  });

  it('several slots: a password and a recipient each open the file', async () => {
    const identity = X25519Identity.generate();
    const opts = options('project', key, { protection: { password: PASSWORD, passwordCost: CHEAP, recipients: [identity.publicKey] } });
    const { file } = await expectRoundTrip([entry('x', 'deflate', sample(5000, 3))], opts, { identity });
    const opened = await openContainer(file, { kind: 'project', unlock: { password: PASSWORD } });
    expect(opened.slots.map((s) => s.type)).toEqual(['password', 'recipient']);
    identity.free();
  });

  it('an encrypted file without a key is checked for structure and signature only', async () => {
    const file = await writeAll([entry('x', 'stored', sample(100, 1))], options('project', key, { protection: { password: PASSWORD, passwordCost: CHEAP } }));
    const opened = await openContainer(file, { kind: 'project' });
    expect(opened.manifest).toBeUndefined();
    expect(opened.entries.size).toBe(0);
    expect(opened.verified.publicKey).toEqual(key.publicKey);
  });

  it('chunk_size 16 MiB: a 16 MiB + 1 entry makes two chunks', async () => {
    const size = 16 * 1024 * 1024;
    const data = sample(size + 1, 9);
    const opts = options('model', key, { chunkSize: size, deflateLevel: 1 });
    const events: ReadEvent[] = [];
    const stream = writeContainer([entry('big.bin', 'deflate', data)], opts);
    for await (const event of readContainer(stream, { kind: 'model' })) {
      events.push(event.type === 'chunk' ? { ...event, data: new Uint8Array(0) } : event);
    }
    const chunks = events.filter((e) => e.type === 'chunk');
    expect(chunks.map((c) => [c.index, c.last])).toEqual([[0, false], [1, true]]);
    expect(events.at(-1)?.type).toBe('end');
  });

  it('streams: a writer stream read directly, and byte sources of every shape', async () => {
    const data = sample(50_000, 4);
    const entries = [entry('a', 'deflate', data)];
    const events: string[] = [];
    for await (const event of readContainer(writeContainer(entries, options('project', key, { chunkSize: 4096 })), { kind: 'project' })) {
      events.push(event.type);
    }
    expect(events.slice(0, 2)).toEqual(['header', 'manifest']);
    expect(events.filter((t) => t === 'chunk')).toHaveLength(13);
    expect(events.slice(-2)).toEqual(['entryVerified', 'end']);
    // Entry data as an async iterable of odd pieces, the file as another.
    const file = await writeAll([{ ...entries[0]!, data: inPieces(data, 777) }], options('project', key, { chunkSize: 4096 }));
    const opened = await openContainer(inPieces(file, 5), { kind: 'project' });
    expect(opened.entries.get('a')).toEqual(data);
  });

  it('hashEntry gives size and sha256 of any source', async () => {
    const data = sample(200_000, 5);
    expect(await hashEntry(inPieces(data, 10_001))).toEqual({ size: data.length, sha256: sha256hex(data) });
    expect(await hashEntry(new Uint8Array(0))).toEqual({ size: 0, sha256: sha256hex(new Uint8Array(0)) });
  });
});

describe('writer refusals', () => {
  it('a manifest the format refuses throws at once', () => {
    const bad = { ...entry('../x', 'stored', sample(3, 1)) };
    expect(() => writeContainer([bad], options('project', key))).toThrow(IkiError);
    try {
      writeContainer([bad], options('project', key));
    } catch (error) {
      expect((error as IkiError).code).toBe('BAD_MANIFEST');
    }
  });

  it('data shorter or longer than the size errors the stream', async () => {
    const e = entry('a', 'stored', sample(10, 1));
    for (const data of [sample(9, 1), sample(11, 1)]) {
      const error = await rejection(collect(writeContainer([{ ...e, data: inPieces(data, 4) }], options('project', key))));
      expect((error as IkiError).code).toBe('INVALID_ARGUMENT');
    }
    const wrongHash = await rejection(collect(writeContainer([{ ...e, data: inPieces(sample(10, 2), 4) }], options('project', key))));
    expect((wrongHash as IkiError).code).toBe('HASH_MISMATCH');
  });

  it('Argon2id cost readers would refuse is refused', () => {
    const opts = options('project', key, { protection: { password: PASSWORD, passwordCost: { mKib: 262145, t: 1, p: 1 } } });
    expect(() => writeContainer([], opts)).toThrow(expect.objectContaining({ code: 'KDF_PARAMS_REFUSED' }));
  });

  it('a cancelled stream releases the writer', async () => {
    const stream = writeContainer([entry('a', 'stored', sample(100_000, 1))], options('project', key, { chunkSize: 4096 }));
    const reader = stream.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
  });
});
