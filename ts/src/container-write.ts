/**
 * Writing containers through WASM (docs/format.md sections 1 to 7): the
 * writer half of container.ts, which re-exports everything here. What the writer takes, and
 * the checks of its arguments, are in write-options.ts.
 *
 * The manifest precedes the data, so every entry's size (and, for a file
 * that is not encrypted, its sha256) is known before the first byte is
 * written; {@link hashEntry} is the first pass that finds them. Output is a
 * pull-based `ReadableStream`: each pull feeds WASM one piece of at most
 * 64 KiB and hands on whatever the writer produced, so memory stays around
 * one chunk however large the entries are.
 *
 * The key that signs may be held outside WASM (`externalSigner`, e.g. a browser's
 * non-extractable WebCrypto key): at the end the writer hands it the 52-byte message of
 * section 7, checks the signature it returns strictly, and only then releases the last bytes.
 *
 * With a `fileDigest` (file-digest.ts: a second worker) the SHA-256 pass over the output that
 * the signature needs runs there instead of here: every output byte goes to it in order, and
 * its digest comes back at the end, checked to cover exactly the bytes written. A digester
 * that passes its batches on (`passOn`) is given the output in batches filled straight from
 * WASM memory (output-batches.ts) and hands them back once hashed; the stream then emits those
 * batches (a few MiB each) instead of the pieces the writer produced; with a `batchPool` the
 * consumer gives each batch back once it was written, for a later batch.
 *
 * With a `deflater` (a pool of workers, deflate-chunk.ts) the chunks of `deflate` and `rgba8`
 * entries are deflated there, a bounded number at a time, and the writer checks, seals and
 * signs them in order: the same bytes, spread over the cores.
 *
 * An `rgba8` entry whose data is a texture decoded into WASM memory (package/texture-source.ts)
 * is written from there: the writer takes the texture whole, checks the digest taken at
 * decoding against the manifest, and writes a chunk per pull. With a deflater, copies of the
 * texture's chunks go to the workers and the writer checks each stream against the texture's
 * own pixels (`writeTextureDeflated`), so the pixels are not hashed a second time. Streams of a
 * texture's first chunks may have been made before the writer reached it (deflate-ahead.ts:
 * while the manifest pass was decoding the next textures); they are checked the same way.
 */
import type { DecodedTexture, WasmWriter, WasmWriterOptions } from '../../pkg/iki_wasm.js';
import { ChunkFeed, DEFAULT_DEFLATE_LEVEL, type ChunkDeflater } from './deflate-chunk.js';
import { callWasm, fromWasmError } from './errors.js';
import type { FileDigester } from './file-digest.js';
import { handleOf } from './keys.js';
import { OutputBatches } from './output-batches.js';
import type { ExternalSigner } from './signer.js';
import { DEFAULT_CHUNK_SIZE_BYTES } from './limits.js';
import { checkByteSource, pieces, type ByteSource } from './streams.js';
import { decodedTextureOf, deflatedAheadOf } from './package/texture-source.js';
import { aheadMatches, type AheadStreams } from './deflate-ahead.js';
import { loadWasm, wasm } from './wasm.js';
import {
  DEFAULT_PASSWORD_COST, checkEntry, checkWriteOptions, passwordBytes, type NewEntry, type Protection, type WriteOptions,
} from './write-options.js';

export {
  DEFAULT_PASSWORD_COST, checkKind, passwordBytes, type NewEntry, type PasswordCost, type Protection, type SignerInfo, type WriteOptions,
} from './write-options.js';

/**
 * Copies of the chunks of the texture `writer` is writing, `chunkBytes` each (the last shorter),
 * from byte `from` (a whole number of chunks: those before were deflated ahead).
 */
async function* textureChunks(writer: WasmWriter, size: number, chunkBytes: number, from = 0): AsyncGenerator<Uint8Array> {
  for (let at = from; at < size; at += chunkBytes) {
    yield callWasm(() => writer.textureBytes(at, Math.min(chunkBytes, size - at)));
  }
}

function manifestJson(entries: NewEntry[], meta: Record<string, unknown>): string {
  const list = entries.map(({ path, type, size, encoding, sha256, meta: m }) => ({
    path,
    type,
    size,
    encoding,
    ...(sha256 === undefined ? {} : { sha256 }),
    ...(m === undefined ? {} : { meta: m }),
  }));
  return JSON.stringify({ entries: list, meta });
}

function addSlots(o: WasmWriterOptions, p: Protection): void {
  if (p.contentKey !== undefined) o.setContentKey(handleOf(p.contentKey));
  if (p.password !== undefined) {
    const cost = p.passwordCost ?? DEFAULT_PASSWORD_COST;
    const bytes = passwordBytes(p.password);
    try {
      o.addPassword(bytes, cost.mKib, cost.t, cost.p);
    } finally {
      bytes.fill(0);
    }
  }
  for (const recipient of p.recipients ?? []) o.addRecipient(recipient);
  if (p.account !== undefined) o.addAccount(p.account.accountId, p.account.blob);
}

/** A new WASM writer for these options; its options handle is freed here. */
function startWriter(entries: NewEntry[], options: WriteOptions): WasmWriter {
  const signer = JSON.stringify(options.signer);
  const created = options.createdMs ?? Date.now();
  const { signingKey, externalSigner } = options;
  const o = callWasm(() => (signingKey !== undefined
    ? new (wasm().WasmWriterOptions)(options.kind, handleOf(signingKey), signer, created)
    : wasm().WasmWriterOptions.external(options.kind, (externalSigner as ExternalSigner).publicKey, signer, created)));
  try {
    return callWasm(() => {
      if (options.chunkSize !== undefined) o.setChunkSize(options.chunkSize);
      if (options.deflateLevel !== undefined) o.setDeflateLevel(options.deflateLevel);
      if (options.entryHashesTrusted === true) o.setEntryHashesTrusted(true);
      if (options.protection !== undefined) addSlots(o, options.protection);
      const writer = new (wasm().WasmWriter)(o, manifestJson(entries, options.meta));
      if (options.fileDigest !== undefined) writer.digestElsewhere();
      return writer;
    });
  } finally {
    o.free();
  }
}

/**
 * Streams a container out. Arguments are checked and the header, key slots
 * (Argon2id for a password slot runs here) and manifest are made before
 * this returns, so a bad manifest throws at once; entry data is read as the
 * stream is pulled. A failure errors the stream with an `IkiError`.
 */
export function writeContainer(entries: NewEntry[], options: WriteOptions): ReadableStream<Uint8Array> {
  checkWriteOptions(options);
  if (!Array.isArray(entries)) throw new TypeError('entries must be an array');
  const encrypted = options.protection !== undefined;
  entries.forEach((entry, i) => checkEntry(entry, `entries[${i}]`, encrypted));
  const batchBytes = options.fileDigest?.passOn?.() ?? 0;
  if (!Number.isSafeInteger(batchBytes) || batchBytes < 0 || (batchBytes > 0 && typeof options.fileDigest?.takeHashed !== 'function')) {
    throw new TypeError('options.fileDigest.passOn must return a batch size in bytes (0: none), and takeHashed() come with it');
  }
  const writer = startWriter(entries, options);
  // Room beside a batch for one chunk's output (headers, tag, deflate's worst case).
  const batches = batchBytes > 0 && options.fileDigest !== undefined
    ? new OutputBatches(writer, options.fileDigest, batchBytes, (options.chunkSize ?? DEFAULT_CHUNK_SIZE_BYTES) + 4096, options.batchPool)
    : undefined;
  let next = 0;
  let source: AsyncIterator<Uint8Array> | undefined;
  let feed: ChunkFeed | undefined;
  /** Streams of the texture in progress deflated ahead of the writer (deflate-ahead.ts), not yet written. */
  let ahead: AheadStreams | undefined;
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    source?.return?.().catch(() => undefined);
    source = undefined;
    feed?.close();
    feed = undefined;
    ahead?.discard();
    ahead = undefined;
    if (!digested) options.fileDigest?.abandon?.();
    writer.free();
  };
  let digested = false;
  const { deflater } = options;
  const deflateOptions = { deflateLevel: options.deflateLevel ?? DEFAULT_DEFLATE_LEVEL,
    chunkSize: options.chunkSize ?? DEFAULT_CHUNK_SIZE_BYTES, encrypted };
  /** The next chunk of a `deflate`/`rgba8` entry from the deflater, or the entry's end. */
  const stepDeflated = async (entry: NewEntry, d: ChunkDeflater): Promise<'done'> => {
    feed ??= new ChunkFeed(entry.data, `entries[${next}].data`, callWasm(() => writer.chunkBytes(next)), d, deflateOptions);
    const chunk = await feed.next();
    callWasm(() => {
      if (chunk === undefined) writer.endEntry();
      else writer.writeDeflated(chunk.raw, chunk.data);
    });
    if (chunk === undefined) {
      feed = undefined;
      next += 1;
    }
    return 'done';
  };
  let writingTexture = false;
  /** The next chunk of an entry decoded into WASM memory, or (after the last) its end. */
  const stepTexture = async (take: () => Promise<DecodedTexture>): Promise<'done'> => {
    if (!writingTexture) {
      const texture = await take();
      // The writer takes the handle (and frees it on failure too).
      callWasm(() => writer.beginTexture(texture));
      writingTexture = true;
      return 'done';
    }
    if (callWasm(() => writer.writeTextureChunk())) {
      callWasm(() => writer.endEntry());
      writingTexture = false;
      next += 1;
    }
    return 'done';
  };
  /**
   * An entry decoded into WASM memory with a deflater: the texture goes to the writer first, then
   * each pull writes the next stream made ahead of the writer, when there are any, then the next
   * one the deflater made of a copy of its chunk, or ends the entry. Every stream is checked
   * against the texture's own pixels, wherever it was made.
   */
  const stepTextureDeflated = async (entry: NewEntry, take: () => Promise<DecodedTexture>, d: ChunkDeflater): Promise<'done'> => {
    if (feed === undefined) {
      const texture = await take();
      const size = texture.byteLength;
      const chunkBytes = callWasm(() => writer.chunkBytes(next));
      // The writer takes the handle (and frees it on failure too).
      callWasm(() => writer.beginTexture(texture));
      const made = deflatedAheadOf(entry.data);
      ahead = made !== undefined && aheadMatches(made, chunkBytes, deflateOptions) ? made : undefined;
      if (ahead === undefined) made?.discard();
      feed = new ChunkFeed(textureChunks(writer, size, chunkBytes, (ahead?.count ?? 0) * chunkBytes), `entries[${next}].data`,
        chunkBytes, d, deflateOptions, true);
      return 'done';
    }
    const made = ahead?.next();
    if (made !== undefined) {
      const stream = await made;
      callWasm(() => writer.writeTextureDeflated(stream));
      return 'done';
    }
    ahead = undefined;
    const chunk = await feed.next();
    callWasm(() => {
      if (chunk === undefined) writer.endEntry();
      else writer.writeTextureDeflated(chunk.data);
    });
    if (chunk === undefined) {
      feed = undefined;
      next += 1;
    }
    return 'done';
  };
  const step = async (): Promise<Uint8Array | 'done'> => {
    const entry = entries[next];
    if (entry === undefined) {
      if (options.fileDigest === undefined) return finish(writer, options.externalSigner);
      digested = true;
      return finishElsewhere(writer, options.externalSigner as ExternalSigner, options.fileDigest, batches);
    }
    const texture = entry.encoding === 'rgba8' ? decodedTextureOf(entry.data) : undefined;
    if (deflater !== undefined && entry.encoding !== 'stored') {
      return texture === undefined ? stepDeflated(entry, deflater) : stepTextureDeflated(entry, texture, deflater);
    }
    if (texture !== undefined) return stepTexture(texture);
    // Pieces of one chunk: a whole chunk is encoded from the piece itself, without a copy
    // into the writer's buffer, and with one call across the boundary instead of sixteen; a
    // stored entry's chunk is copied from the piece straight into the writer's output
    // (`writeFrom`: one copy into WASM memory instead of two).
    source ??= pieces(entry.data, `entries[${next}].data`, callWasm(() => writer.chunkBytes(next)) || undefined)[Symbol.asyncIterator]();
    const piece = await source.next();
    callWasm(() => {
      if (piece.done) writer.endEntry();
      else writer.writeFrom(piece.value);
    });
    if (piece.done) {
      source = undefined;
      next += 1;
    }
    return 'done';
  };
  /** With `batches`: enqueues the batches the digester hashed so far; whether there were any. */
  const enqueueHashed = (controller: ReadableStreamDefaultController<Uint8Array>): boolean => {
    const hashed = batches !== undefined ? (options.fileDigest?.takeHashed?.() ?? []) : [];
    for (const batch of hashed) controller.enqueue(batch);
    return hashed.length > 0;
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          for (;;) {
            if (batches !== undefined) {
              const moved = await batches.drain();
              if (enqueueHashed(controller)) return;
              if (moved) continue;
            } else {
              const out = callWasm(() => writer.takeOutput());
              if (out.length > 0) {
                await options.fileDigest?.update(out);
                return controller.enqueue(out);
              }
            }
            const last = await step();
            if (last !== 'done') {
              release();
              enqueueHashed(controller);
              controller.enqueue(last);
              return controller.close();
            }
          }
        } catch (error) {
          release();
          throw fromWasmError(error);
        }
      },
      cancel() {
        release();
      },
    },
    { highWaterMark: 0 },
  );
}

/** SIGN: by the key in WASM, or by the external signer (its signature checked before release). */
async function finish(writer: WasmWriter, external: ExternalSigner | undefined): Promise<Uint8Array> {
  if (external === undefined) return callWasm(() => writer.finish());
  return signedAfter(writer, external, callWasm(() => writer.finishExternal()));
}

/** SIGN's last bytes after `head`: the external signer signs the writer's message, which the writer checks. */
async function signedAfter(writer: WasmWriter, external: ExternalSigner, head: Uint8Array): Promise<Uint8Array> {
  const signature = await external.sign(callWasm(() => writer.signatureMessage()));
  if (!(signature instanceof Uint8Array)) throw new TypeError('options.externalSigner.sign must resolve to a Uint8Array');
  const last = callWasm(() => writer.attachSignature(signature));
  const out = new Uint8Array(head.length + last.length);
  out.set(head, 0);
  out.set(last, head.length);
  return out;
}

/**
 * SIGN over a file digest computed elsewhere: the digester gets SIGN's prefix too, then signs.
 * With `batches` (a digester that passes them on) SIGN's prefix goes into the last batch and
 * only the signature's bytes are returned.
 */
async function finishElsewhere(writer: WasmWriter, external: ExternalSigner, digester: FileDigester,
  batches: OutputBatches | undefined): Promise<Uint8Array> {
  const head = callWasm(() => writer.finishElsewhere());
  if (batches === undefined) await digester.update(head);
  else {
    await batches.add(head);
    await batches.flush();
  }
  const { sha256, bytes } = await digester.digest();
  if (!(sha256 instanceof Uint8Array) || typeof bytes !== 'number') throw new TypeError('options.fileDigest.digest must resolve to { sha256, bytes }');
  callWasm(() => writer.supplyFileDigest(sha256, bytes));
  return signedAfter(writer, external, batches === undefined ? head : new Uint8Array(0));
}

/** Size and SHA-256 (lowercase hex) of a source, for an unencrypted entry. */
export async function hashEntry(data: ByteSource): Promise<{ size: number; sha256: string }> {
  checkByteSource(data, 'data');
  const { Sha256Hasher } = await loadWasm();
  const hasher = new Sha256Hasher();
  try {
    let size = 0;
    for await (const piece of pieces(data, 'data')) {
      callWasm(() => hasher.update(piece));
      size += piece.length;
    }
    const digest = callWasm(() => hasher.finish());
    return { size, sha256: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('') };
  } finally {
    hasher.free();
  }
}
