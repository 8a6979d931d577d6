// The file digest computed elsewhere (issue 28 item 4; file-digest.ts, crates/iki-format
// writer/finish.rs): a save whose digest is hashed by a second party gives the same file as one
// hashed by the writer; a digest worker that lies about what it hashed (a batch left out or
// repeated) gets no signature and nothing kept; one that returns a wrong digest over the right
// length yields a file every reader calls modified, never signed; batches out of order are
// refused by the worker's hashes.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BatchingFileDigester, DIGEST_BATCHES_IN_FLIGHT, DigestHashes, localDigestTransport, type DigestTransport, type FileDigester,
} from '../src/file-digest.js';
import { openProject, saveProject } from '../src/project/index.js';
import { loadWasm } from '../src/wasm.js';
import { sample, sha256hex } from './container-support.js';
import { browserSigner } from './project-support.js';

const MIB = 1024 * 1024;
const ASSETS = [sample(70_000, 11, true), sample(3 * MIB + 5, 12, true)];

/** A digester over the real worker code, in small batches so that a save makes many. */
const digester = (transport: DigestTransport = localDigestTransport()): FileDigester => new BatchingFileDigester(transport, 256 * 1024);

async function save(fileDigest?: FileDigester, output?: WritableStream<Uint8Array>, password?: string) {
  const { signer } = await browserSigner();
  return saveProject({
    snapshot: { layers: 2 }, signer, app: 'iki-tests 1', name: 'Digested', canvas: { width: 1, height: 1 }, chunkSize: 256 * 1024,
    assets: ASSETS.map((bytes, i) => ({ name: `images/${i}.png`, data: bytes })), now: () => 1_700_000_000_000,
    ...(fileDigest === undefined ? {} : { fileDigest }), ...(output === undefined ? {} : { output }),
    ...(password === undefined ? {} : { protection: { password, passwordCost: { mKib: 8, t: 1, p: 1 } } }),
  });
}

/** An output that keeps what it is given and records whether it was closed (kept) or aborted. */
function output() {
  const state = { written: 0, closed: false, aborted: false };
  const stream = new WritableStream<Uint8Array>({
    write(chunk) { state.written += chunk.length; },
    close() { state.closed = true; },
    abort() { state.aborted = true; },
  });
  return { stream, state };
}

/** A transport that changes what the honest one is told: `lie(seq)` drops (`'drop'`) or repeats (`'twice'`) a batch. */
function lyingTransport(lie: (seq: number) => 'drop' | 'twice' | undefined): DigestTransport {
  const honest = localDigestTransport();
  let sent = 0;
  return {
    ...honest,
    update: async (id, seq, bytes) => {
      const what = lie(seq);
      if (what === 'drop') return;
      await honest.update(id, sent++, bytes);
      if (what === 'twice') await honest.update(id, sent++, bytes);
    },
    finish: (id) => honest.finish(id, sent),
  };
}

beforeAll(async () => {
  await loadWasm();
});

describe('a file digest computed elsewhere', () => {
  it('gives a file as long as the one the writer hashes itself, which opens signed with its assets', async () => {
    const here = await save();
    const elsewhere = await save(digester());
    const [a, b] = await Promise.all([here.blob, elsewhere.blob].map(async (blob) => new Uint8Array(await (blob as Blob).arrayBuffer())));
    // Ed25519 is deterministic and the file id is the only random field: same length, same verdict.
    expect(b?.length).toBe(a?.length);
    const opened = await openProject(elsewhere.blob as Blob);
    expect(opened.verdict.kind).toBe('device');
    expect(sha256hex(await opened.readAsset('images/1.png'))).toBe(sha256hex(ASSETS[1] as Uint8Array));
    opened.close();
  });

  it('without passOn, reuses the batch buffers the worker hands back (no new buffer per batch)', async () => {
    const honest = localDigestTransport();
    const buffers = new Set<ArrayBufferLike>();
    const counting: DigestTransport = { ...honest, update: (id, seq, bytes) => {
      buffers.add(bytes.buffer);
      return honest.update(id, seq, bytes);
    } };
    const d = digester(counting);
    const bytes = sample(20 * 256 * 1024 + 7, 13, true);
    for (let at = 0; at < bytes.length; at += 100_000) await d.update(bytes.subarray(at, at + 100_000));
    const digest = await d.digest();
    expect(digest.bytes).toBe(bytes.length);
    expect(Buffer.from(digest.sha256).toString('hex')).toBe(sha256hex(bytes));
    // Two in flight, one being filled, and the last, partial batch's own copy.
    expect(buffers.size).toBeLessThanOrEqual(DIGEST_BATCHES_IN_FLIGHT + 2);
  });

  it('the writer fills batches from WASM and emits them as the digester hands them back (passOn: no copy after the batch)', async () => {
    const { writeContainer } = await import('../src/container-write.js');
    const honest = localDigestTransport();
    const sent = new Set<Uint8Array>();
    const moving: DigestTransport = { ...honest, update: async (id, seq, bytes) => {
      await honest.update(id, seq, bytes);
      // As a worker does: the bytes come back in a buffer of their own.
      const back = bytes.slice();
      sent.add(back);
      return back;
    } };
    const { signer } = await browserSigner();
    const data = sample(3 * MIB + 5, 14, true);
    const snapshot = new TextEncoder().encode('{}');
    const stream = writeContainer([
      { path: 'snapshot.json', type: 'application/x-iki-snapshot', encoding: 'deflate', data: snapshot, size: snapshot.length, sha256: sha256hex(snapshot) },
      { path: `assets/${sha256hex(data)}`, type: 'image/png', encoding: 'stored', size: data.length, data, sha256: sha256hex(data) },
    ], { kind: 'project', externalSigner: signer, signer: { kind: 'device' }, chunkSize: 256 * 1024, fileDigest: digester(moving),
      meta: { format: 'iki-project', version: 1, name: 'n', savedAt: '2025-01-01T00:00:00Z', canvas: { width: 1, height: 1 }, app: 'test',
        assetNames: { 'a.png': sha256hex(data) } } });
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    expect(chunks.length).toBe(sent.size + 1);
    chunks.slice(0, -1).forEach((chunk) => expect(sent.has(chunk)).toBe(true));
    // Whole batches but the last (the digester's size, 256 KiB here).
    chunks.slice(0, -2).forEach((chunk) => expect(chunk.length).toBeGreaterThanOrEqual(256 * 1024));
    const file = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    chunks.reduce((at, c) => (file.set(c, at), at + c.length), 0);
    const opened = await openProject(new Blob([file]));
    expect(opened.verdict.kind).toBe('device');
    opened.close();
  });

  it('a transport that moves a batch away without moving it back fails the save after passOn', async () => {
    const honest = localDigestTransport();
    const keeping: DigestTransport = { ...honest, update: async (id, seq, bytes) => {
      await honest.update(id, seq, bytes);
      structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
    } };
    const { stream, state } = output();
    await expect(save(digester(keeping), stream)).rejects.toThrow(/move each batch back/);
    expect(state.closed).toBe(false);
  });

  it('works for encrypted saves (the digest covers the ciphertext)', async () => {
    const saved = await save(digester(), undefined, 'correct horse battery staple');
    const opened = await openProject(saved.blob as Blob, { password: 'correct horse battery staple' });
    expect(opened.verdict.kind).toBe('device');
    opened.close();
  });

  it('a digest worker that leaves out a batch or hashes one twice gets no signature, and nothing is kept', async () => {
    for (const lie of [(seq: number) => (seq === 3 ? 'drop' as const : undefined), (seq: number) => (seq === 0 ? 'twice' as const : undefined)]) {
      const { stream, state } = output();
      await expect(save(digester(lyingTransport(lie)), stream)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(state.closed).toBe(false);
      expect(state.aborted).toBe(true);
    }
  });

  it('a digest worker that returns a wrong digest over the right length: the file is never taken as signed', async () => {
    const honest = localDigestTransport();
    const lying: DigestTransport = { ...honest, finish: async (id, batches) => {
      const digest = await honest.finish(id, batches);
      const sha256 = digest.sha256.slice();
      sha256[0] = (sha256[0] as number) ^ 1;
      return { ...digest, sha256 };
    } };
    const saved = await save(digester(lying));
    const opened = await openProject(saved.blob as Blob);
    expect(opened.verdict.kind).toBe('modified');
    opened.close();
  });

  it("the worker's hashes refuse a batch out of order, an unknown hash and a wrong batch count", async () => {
    const hashes = new DigestHashes();
    const id = await hashes.start();
    hashes.update(id, 0, new Uint8Array([1, 2, 3]));
    expect(() => hashes.update(id, 2, new Uint8Array([4]))).toThrow(/batch 2 arrived where batch 1 was due/);
    expect(() => hashes.finish(id, 1)).toThrow(/no file digest/);
    const other = await hashes.start();
    hashes.update(other, 0, new Uint8Array([1, 2, 3]));
    expect(() => hashes.finish(other, 2)).toThrow(/1 batches hashed, 2 sent/);
    const third = await hashes.start();
    hashes.update(third, 0, new Uint8Array([0x61, 0x62, 0x63]));
    const digest = hashes.finish(third, 1);
    expect(digest.bytes).toBe(3);
    expect(Buffer.from(digest.sha256).toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('refuses a digester without an external signer, and one that is not a digester', async () => {
    const { writeContainer } = await import('../src/container-write.js');
    const { SigningKey } = await import('../src/keys.js');
    const key = SigningKey.generate();
    try {
      expect(() => writeContainer([], { kind: 'project', signingKey: key, signer: { kind: 'device' }, meta: {}, fileDigest: digester() }))
        .toThrow(/fileDigest needs options.externalSigner/);
      const { signer } = await browserSigner();
      expect(() => writeContainer([], { kind: 'project', externalSigner: signer, signer: { kind: 'device' }, meta: {},
        fileDigest: {} as FileDigester })).toThrow(/update\(bytes\) and digest\(\)/);
      const half: FileDigester = { update: () => undefined, digest: async () => ({ sha256: new Uint8Array(32), bytes: 0 }), passOn: () => 1.5 };
      expect(() => writeContainer([], { kind: 'project', externalSigner: signer, signer: { kind: 'device' }, meta: {}, fileDigest: half }))
        .toThrow(/passOn must return a batch size/);
      expect(() => writeContainer([], { kind: 'project', externalSigner: signer, signer: { kind: 'device' }, meta: {},
        fileDigest: { ...half, passOn: () => 4096 } })).toThrow(/takeHashed\(\) come with it/);
    } finally {
      key.free();
    }
  });
});
