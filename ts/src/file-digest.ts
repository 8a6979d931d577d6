/**
 * The file digest computed away from the writer (issue 28 item 4; docs/format.md section 2,
 * "Who computes the file digest of a project saved in a browser"): the signature covers SHA-256 of every byte before it, and in
 * a browser that pass runs in WASM (no streaming native digest there) at about the cost of the
 * copy itself. With a {@link FileDigester} the writer (`writeContainer`'s `fileDigest`) hands
 * every byte it emits, in order, to the digester, which hashes them elsewhere (a second Web
 * Worker, browser/digest-worker.ts) while the writer goes on; at the end the digest and the
 * number of bytes it covers come back for the signature.
 *
 * Trust: the digester is the caller's own code (in a browser a worker of the same origin,
 * started by the worker that saves), which can already ask the signer to sign anything; only
 * a second SHA-256 pass could check its answer, and that is the pass this removes. What the
 * writer checks is what a fault between the workers changes: the digest must cover exactly the
 * bytes written, or no signature is made (`INVALID_ARGUMENT`); a digest of the right length but
 * of other bytes gives a file whose signature every reader refuses (`BAD_SIGNATURE`, a
 * `modified` verdict). {@link BatchingFileDigester} numbers its batches, and the worker refuses
 * one out of order.
 */
import { callWasm } from './errors.js';
import { loadWasm } from './wasm.js';

/** A file's SHA-256 (32 bytes) and the number of bytes it covers. */
export interface FileDigest {
  sha256: Uint8Array;
  bytes: number;
}

/** Hashes one file's bytes, given in order, somewhere else; used once. */
export interface FileDigester {
  /**
   * The next bytes of the file. The digester copies what it keeps before this returns (the
   * caller goes on using `bytes`); a promise means "wait before giving more" (backpressure).
   */
  update(bytes: Uint8Array): void | Promise<void>;
  /** The digest of everything given to `update`; the digester is spent. */
  digest(): Promise<FileDigest>;
  /** Drops the work (the write failed or was cancelled); never throws. */
  abandon?(): void;
  /**
   * Optional, asked once before the first `update`: from then on each `update` hands over a
   * batch the writer filled (the digester's to move, never copied), and the digester keeps each
   * batch it hashed for {@link FileDigester.takeHashed}; the writer emits those batches, so the
   * copy out of WASM into a batch is the only copy between the writer and the file. Returns
   * the bytes per batch it wants, or 0 when it does not pass batches on.
   */
  passOn?(): number;
  /** After `passOn`: the batches hashed so far, in order, each the caller's again. */
  takeHashed?(): Uint8Array[];
}

/** Throws a `TypeError` naming `name` unless `value` is a {@link FileDigester}. */
export function checkFileDigester(value: unknown, name: string): asserts value is FileDigester {
  const d = value as Partial<FileDigester> | null;
  if (typeof d !== 'object' || d === null || typeof d.update !== 'function' || typeof d.digest !== 'function') {
    throw new TypeError(`${name} must have update(bytes) and digest()`);
  }
}

/** Bytes gathered before a batch goes to the digest worker: 4 MiB. */
export const DIGEST_BATCH_BYTES = 4 * 1024 * 1024;

/** Batches a digester keeps in flight before `update` waits (memory: this many batches). */
export const DIGEST_BATCHES_IN_FLIGHT = 2;

/** How a {@link BatchingFileDigester} reaches its hasher (a worker's tasks). */
export interface DigestTransport {
  /** Starts a hash; resolves with its handle. */
  start(): Promise<number>;
  /**
   * Hashes batch `seq` (0, 1, ...) of hash `id`; `bytes` is the transport's to move. May resolve
   * with the batch's buffer moved back, for the next batch (no new buffer per batch).
   */
  update(id: number, seq: number, bytes: Uint8Array): Promise<Uint8Array | void>;
  /** The digest of hash `id` after `batches` batches. */
  finish(id: number, batches: number): Promise<FileDigest>;
  /** Drops hash `id`. */
  drop(id: number): void;
}

/**
 * A {@link FileDigester} over a {@link DigestTransport}: output is copied into batches of
 * {@link DIGEST_BATCH_BYTES} (one copy; each batch then moves to the worker without another,
 * and its buffer may come back for a later batch), numbered, with at most
 * {@link DIGEST_BATCHES_IN_FLIGHT} in flight. After `passOn` the writer gives whole batches
 * (each `update` one batch, moved as it is), and each batch that came back is handed on
 * (`takeHashed`) instead of reused: the writer's output is those batches.
 */
export class BatchingFileDigester implements FileDigester {
  readonly #transport: DigestTransport;
  readonly #batchBytes: number;
  #id: Promise<number> | undefined;
  #batch: Uint8Array | undefined;
  #filled = 0;
  #seq = 0;
  #inFlight: Promise<void>[] = [];
  /** Batch buffers handed back by the transport, for the next batches. */
  readonly #free: Uint8Array[] = [];
  #spent = false;
  /** Set by `passOn`: hashed batches, in order, for `takeHashed`. */
  #hashed: Uint8Array[] | undefined;

  constructor(transport: DigestTransport, batchBytes = DIGEST_BATCH_BYTES) {
    this.#transport = transport;
    this.#batchBytes = batchBytes;
  }

  async update(bytes: Uint8Array): Promise<void> {
    if (this.#spent) throw new TypeError('this digester has given its digest');
    if (this.#hashed !== undefined) {
      if (bytes.length > 0) await this.#send(bytes);
      return;
    }
    let at = 0;
    while (at < bytes.length) {
      this.#batch ??= this.#free.pop() ?? new Uint8Array(this.#batchBytes);
      const take = Math.min(bytes.length - at, this.#batchBytes - this.#filled);
      this.#batch.set(bytes.subarray(at, at + take), this.#filled);
      this.#filled += take;
      at += take;
      if (this.#filled === this.#batchBytes) await this.#sendFilled();
    }
  }

  async digest(): Promise<FileDigest> {
    if (this.#spent) throw new TypeError('this digester has given its digest');
    if (this.#filled > 0) await this.#sendFilled();
    this.#spent = true;
    await Promise.all(this.#inFlight);
    return this.#transport.finish(await this.#started(), this.#seq);
  }

  passOn(): number {
    if (this.#seq > 0 || this.#filled > 0) throw new TypeError('passOn must come before the first update');
    this.#hashed ??= [];
    return this.#batchBytes;
  }

  takeHashed(): Uint8Array[] {
    if (this.#hashed === undefined) throw new TypeError('takeHashed needs passOn first');
    return this.#hashed.splice(0);
  }

  abandon(): void {
    this.#spent = true;
    this.#batch = undefined;
    this.#hashed = undefined;
    this.#id?.then((id) => this.#transport.drop(id), () => undefined);
  }

  #started(): Promise<number> {
    this.#id ??= this.#transport.start();
    return this.#id;
  }

  #sendFilled(): Promise<void> {
    const batch = (this.#batch as Uint8Array).subarray(0, this.#filled);
    this.#batch = undefined;
    this.#filled = 0;
    return this.#send(batch);
  }

  async #send(batch: Uint8Array): Promise<void> {
    const seq = this.#seq++;
    const id = await this.#started();
    // Batches come back in order (each waits for the one before), so `#hashed` stays in order.
    const before = this.#inFlight.at(-1);
    const length = batch.length;
    const sent = this.#transport.update(id, seq, batch).then(async (back) => {
      if (this.#hashed !== undefined) {
        await before;
        this.#passed(batch, length, back);
        return;
      }
      if (back instanceof Uint8Array && back.byteOffset === 0 && back.length === this.#batchBytes && this.#free.length < DIGEST_BATCHES_IN_FLIGHT + 1) {
        this.#free.push(back);
      }
    });
    sent.catch(() => undefined);
    this.#inFlight.push(sent);
    if (this.#inFlight.length > DIGEST_BATCHES_IN_FLIGHT) await this.#inFlight.shift();
  }

  /** Keeps hashed `batch` (`length` bytes when sent) for `takeHashed`: as moved back, or itself if it never moved. */
  #passed(batch: Uint8Array, length: number, back: Uint8Array | void): void {
    const bytes = back instanceof Uint8Array ? back : batch;
    // A transport that moved the batch away without moving it back leaves nothing to write.
    if (bytes.length !== length) throw new TypeError('the digest transport must move each batch back after passOn');
    this.#hashed?.push(bytes);
  }
}

/**
 * The hashes a digest worker keeps (browser/digest-worker.ts): WASM's streaming SHA-256, one per
 * file, fed batches in order. Holds no key; the bytes are the file's, which the page has anyway.
 */
export class DigestHashes {
  readonly #hashes = new Map<number, { hasher: { update(b: Uint8Array): void; finish(): Uint8Array; free(): void }; seq: number; bytes: number }>();
  #next = 1;

  /** Most hashes kept at once (a page that forgot to finish them). */
  static readonly MAX = 64;

  async start(): Promise<number> {
    const { Sha256Hasher } = await loadWasm();
    if (this.#hashes.size >= DigestHashes.MAX) throw new RangeError(`at most ${DigestHashes.MAX} file digests at once`);
    const id = this.#next++;
    this.#hashes.set(id, { hasher: new Sha256Hasher(), seq: 0, bytes: 0 });
    return id;
  }

  /** Hashes the next batch; returns it, for a worker to move back to its sender. */
  update(id: number, seq: number, bytes: Uint8Array): Uint8Array {
    const hash = this.#get(id);
    if (seq !== hash.seq) {
      this.drop(id);
      throw new RangeError(`file digest ${id}: batch ${seq} arrived where batch ${hash.seq} was due`);
    }
    callWasm(() => hash.hasher.update(bytes));
    hash.seq += 1;
    hash.bytes += bytes.length;
    return bytes;
  }

  finish(id: number, batches: number): FileDigest {
    const hash = this.#get(id);
    this.#hashes.delete(id);
    try {
      if (batches !== hash.seq) throw new RangeError(`file digest ${id}: ${hash.seq} batches hashed, ${batches} sent`);
      return { sha256: callWasm(() => hash.hasher.finish()), bytes: hash.bytes };
    } finally {
      hash.hasher.free();
    }
  }

  drop(id: number): void {
    this.#hashes.get(id)?.hasher.free();
    this.#hashes.delete(id);
  }

  #get(id: number) {
    const hash = this.#hashes.get(id);
    if (hash === undefined) throw new RangeError(`no file digest ${id} (finished, dropped or never started)`);
    return hash;
  }
}

/** A {@link DigestTransport} to hashes in this realm (tests; the same code a worker runs). */
export function localDigestTransport(hashes = new DigestHashes()): DigestTransport {
  return {
    start: () => hashes.start(),
    update: async (id, seq, bytes) => hashes.update(id, seq, bytes),
    finish: async (id, batches) => hashes.finish(id, batches),
    drop: (id) => hashes.drop(id),
  };
}
