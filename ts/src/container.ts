/**
 * The iki container through WASM (docs/format.md sections 1 to 7): streaming
 * reads ({@link readContainer}, {@link openContainer}) and writes
 * ({@link writeContainer}, {@link hashEntry}).
 *
 * Memory stays around one chunk: input reaches WASM in pieces of at most
 * 64 KiB (streams.ts) and events are drained between pieces; output is
 * drained after each piece written. Every failure is an {@link IkiError};
 * a bad argument is a `TypeError` or `RangeError` naming it, thrown before
 * WASM is called. Handles made here are freed in `finally`.
 */
import type { WasmReader } from '../../pkg/iki_wasm.js';
import { IkiError, callWasm, fromWasmError } from './errors.js';
import { ContentKey, X25519Identity, handleOf } from './keys.js';
import { checkByteSource, pieces, type ByteSource } from './streams.js';
import { loadWasm, wasm } from './wasm.js';
import { checkKind, passwordBytes, type SignerInfo } from './container-write.js';

export { ContentKey } from './keys.js';
export type { ByteSource } from './streams.js';
export { hashEntry, writeContainer } from './container-write.js';
export type { NewEntry, SignerInfo, WriteOptions } from './container-write.js';

/** Project file (`.iki`) or protected model file (`.ikm`). */
export type Kind = 'project' | 'model';

/** HEAD (section 2). */
export interface Header {
  kind: Kind;
  major: number;
  minor: number;
  encrypted: boolean;
  chunkSize: number;
  fileId: Uint8Array;
  createdMs: number;
}

/** One key slot (section 3); no field is secret. */
export type SlotInfo =
  | { type: 'password'; kdf: number; mKib: number; t: number; p: number }
  | { type: 'recipient'; recipient: Uint8Array }
  | { type: 'account'; accountId: string; blob: Uint8Array }
  | { type: 'license'; service: string; licenseId: string; masterId: string }
  | { type: 'unknown'; typeId: number; length: number };

/** One manifest entry (section 5). */
export interface EntryInfo {
  path: string;
  type: string;
  size: number;
  encoding: 'stored' | 'deflate' | 'rgba8';
  sha256?: string;
  meta?: { kind?: string; width?: number; height?: number; source?: string };
}

/** The manifest (section 5); `meta` keeps fields this version does not know. */
export interface Manifest {
  entries: EntryInfo[];
  meta: Record<string, unknown>;
}

/** A signature that verified (section 7), and what the signer claims. */
export interface Verified {
  publicKey: Uint8Array;
  signer: SignerInfo;
  signerJson: string;
}

/**
 * The part of `PlayerSession` (ts/src/player.ts) that reading needs: a
 * reader of the license copy that unlocks itself inside WASM.
 */
export interface LicenseCopyOpener {
  openReader(): WasmReader;
}

/** How to open an encrypted file. */
export type Unlock =
  | { password: string }
  | { identity: X25519Identity }
  | { player: LicenseCopyOpener }
  | { contentKey: ContentKey };

/**
 * `unlock` as given to a read: a key, or a function asked with the slots
 * (and, after a refused try, that try's error) until it returns a key that
 * opens or `undefined` (read on without a key). `{ player }` must be given
 * directly: the license copy's reader is chosen before the first byte.
 */
export type UnlockOption = Unlock | ((slots: SlotInfo[], refused?: IkiError) => Promise<Unlock | undefined> | Unlock | undefined);

/** What a streaming read reports, in file order. */
export type ReadEvent =
  | { type: 'header'; header: Header }
  | { type: 'locked'; slots: SlotInfo[] }
  | { type: 'manifest'; manifest: Manifest }
  | { type: 'chunk'; entry: number; index: number; last: boolean; data: Uint8Array }
  | { type: 'entryVerified'; entry: number }
  | { type: 'end'; verified: Verified };

/** Options of {@link readContainer} and {@link openContainer}. */
export interface ReadOptions {
  kind: Kind;
  unlock?: UnlockOption;
  /**
   * Stops the read: checked before each piece of input, before each event and between the
   * password slots of an unlock (each costs one Argon2id derivation, docs/format.md
   * section 3); the read then rejects with the signal's reason.
   */
  signal?: AbortSignal;
}

/** Everything {@link openContainer} found. */
export interface Opened {
  header: Header;
  slots: SlotInfo[];
  manifest?: Manifest;
  entries: Map<string, Uint8Array>;
  verified: Verified;
}

/** Unlock refusals after which the reader stays locked (docs/format.md section 3). */
const RETRYABLE = new Set(['DECRYPT_FAILED', 'KEY_REQUIRED', 'KDF_PARAMS_REFUSED', 'UNSUPPORTED_ALGORITHM', 'WEAK_KEY',
  'LIMIT_EXCEEDED']);

/** One turn of the event loop, so that timers, signals and messages run between slots. */
const nextTurn = () => new Promise<void>((resolve) => { setTimeout(resolve, 0); });

function checkUnlock(unlock: unknown, name: string): asserts unlock is Unlock {
  const u = unlock as Record<string, unknown> | null;
  if (typeof u !== 'object' || u === null) throw new TypeError(`${name} must be an object or a function`);
  if ('password' in u) {
    if (typeof u.password !== 'string') throw new TypeError(`${name}.password must be a string`);
  } else if ('identity' in u) {
    if (!(u.identity instanceof X25519Identity)) throw new TypeError(`${name}.identity must be an X25519Identity`);
  } else if ('contentKey' in u) {
    if (!(u.contentKey instanceof ContentKey)) throw new TypeError(`${name}.contentKey must be a ContentKey`);
  } else if ('player' in u) {
    if (typeof (u.player as LicenseCopyOpener | null)?.openReader !== 'function') {
      throw new TypeError(`${name}.player must be a PlayerSession`);
    }
  } else {
    throw new TypeError(`${name} must have password, identity, contentKey or player`);
  }
}

/**
 * Tries the password slot by slot (at most a few, docs/format.md section 3), giving the event
 * loop a turn and checking `signal` between slots.
 */
async function unlockByPassword(reader: WasmReader, password: string, signal: AbortSignal | undefined): Promise<void> {
  const bytes = passwordBytes(password);
  try {
    while (!callWasm(() => reader.unlockPasswordStep(bytes))) {
      await nextTurn();
      signal?.throwIfAborted();
    }
  } finally {
    bytes.fill(0);
  }
}

async function applyUnlock(reader: WasmReader, unlock: Unlock, signal: AbortSignal | undefined): Promise<void> {
  if ('player' in unlock) {
    throw new IkiError('INVALID_ARGUMENT', '{ player } must be given as options.unlock itself, not returned by a function');
  }
  if ('password' in unlock) {
    await unlockByPassword(reader, unlock.password, signal);
  } else if ('identity' in unlock) {
    callWasm(() => reader.unlockIdentity(handleOf(unlock.identity)));
  } else {
    callWasm(() => reader.unlockContentKey(handleOf(unlock.contentKey)));
  }
}

/** Answers the `locked` event: the key, the function's keys until one opens, or none. */
async function answerLocked(reader: WasmReader, slots: SlotInfo[], options: ReadOptions): Promise<void> {
  const { unlock, signal } = options;
  if (typeof unlock !== 'function') {
    if (unlock === undefined) callWasm(() => reader.skipContent());
    else await applyUnlock(reader, unlock, signal);
    return;
  }
  let refused: IkiError | undefined;
  for (;;) {
    const choice = await unlock(slots, refused);
    if (choice === undefined) {
      callWasm(() => reader.skipContent());
      return;
    }
    checkUnlock(choice, 'the unlock function result');
    signal?.throwIfAborted();
    try {
      await applyUnlock(reader, choice, signal);
      return;
    } catch (error) {
      if (!(error instanceof IkiError) || !RETRYABLE.has(error.code)) throw error;
      refused = error;
    }
  }
}

/** The raw event objects of `WasmReader.next()` (crates/iki-wasm/src/convert.rs). */
type RawEvent =
  | { type: 'header'; header: Header }
  | { type: 'locked'; slots: SlotInfo[] }
  | { type: 'manifest'; manifestJson: string }
  | { type: 'chunk'; entry: number; index: number; last: boolean; data: Uint8Array }
  | { type: 'entryVerified'; entry: number }
  | { type: 'end'; verified: { publicKey: Uint8Array; signerJson: string } };

function toEvent(raw: RawEvent): ReadEvent {
  switch (raw.type) {
    case 'manifest':
      return { type: 'manifest', manifest: JSON.parse(raw.manifestJson) as Manifest };
    case 'end': {
      const { publicKey, signerJson } = raw.verified;
      return { type: 'end', verified: { publicKey, signer: JSON.parse(signerJson) as SignerInfo, signerJson } };
    }
    default:
      return raw;
  }
}

/** Every event `reader` has ready; `locked` is answered before it is reported. */
async function* drain(reader: WasmReader, options: ReadOptions): AsyncGenerator<ReadEvent> {
  for (;;) {
    options.signal?.throwIfAborted();
    const raw = callWasm(() => reader.next() as RawEvent | undefined);
    if (raw === undefined) return;
    if (raw.type === 'locked') await answerLocked(reader, raw.slots, options);
    yield toEvent(raw);
  }
}

/**
 * A plain reader that reports HEAD and KEYS of a license copy, whose own
 * reader (unlocked inside WASM) does not; it stops after `locked`.
 */
class HeadPeek {
  #reader: WasmReader | undefined;

  constructor(kind: Kind) {
    this.#reader = callWasm(() => new (wasm().WasmReader)(kind));
  }

  *events(piece: Uint8Array): Generator<ReadEvent> {
    const reader = this.#reader;
    if (reader === undefined) return;
    try {
      reader.push(piece);
      for (let raw = reader.next() as RawEvent | undefined; raw !== undefined; raw = reader.next() as RawEvent | undefined) {
        // Only HEAD and KEYS: everything after them is the license copy reader's to report.
        if (raw.type !== 'header' && raw.type !== 'locked') return this.free();
        yield raw;
        if (raw.type === 'locked') return this.free();
      }
    } catch {
      // The license copy's own reader reports the same fault with its code.
      this.free();
    }
  }

  free(): void {
    this.#reader?.free();
    this.#reader = undefined;
  }
}

/**
 * Streams a container; memory stays around one chunk. Content events are
 * plaintext of authenticated chunks; the `end` event is the only statement
 * that the signature verified (and nothing follows SIGN). Without `unlock`,
 * an encrypted file is checked for structure and signature only.
 */
export async function* readContainer(source: ByteSource, options: ReadOptions): AsyncGenerator<ReadEvent> {
  checkByteSource(source, 'source');
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  checkKind(options.kind, 'options.kind');
  const { unlock, signal } = options;
  if (unlock !== undefined && typeof unlock !== 'function') checkUnlock(unlock, 'options.unlock');
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('options.signal must be an AbortSignal');
  signal?.throwIfAborted();
  await loadWasm();
  const player = unlock !== undefined && typeof unlock !== 'function' && 'player' in unlock ? unlock.player : undefined;
  const peek = player === undefined ? undefined : new HeadPeek(options.kind);
  let reader: WasmReader | undefined;
  try {
    reader = player === undefined ? callWasm(() => new (wasm().WasmReader)(options.kind)) : callWasm(() => player.openReader());
    let ended = false;
    for await (const piece of pieces(source, 'source')) {
      signal?.throwIfAborted();
      if (peek !== undefined) yield* peek.events(piece);
      const r = reader;
      callWasm(() => r.push(piece));
      for await (const event of drain(r, options)) {
        ended ||= event.type === 'end';
        yield event;
      }
    }
    const r = reader;
    callWasm(() => r.finish());
    for await (const event of drain(r, options)) {
      ended ||= event.type === 'end';
      yield event;
    }
    if (!ended) throw new IkiError('INTERNAL', 'the reader ended without a verdict');
  } catch (error) {
    throw fromWasmError(error);
  } finally {
    peek?.free();
    reader?.free();
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1 && parts[0] !== undefined) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Reads a small file whole: every entry's bytes in memory, keyed by path. */
export async function openContainer(source: ByteSource, options: ReadOptions): Promise<Opened> {
  let header: Header | undefined;
  let slots: SlotInfo[] = [];
  let manifest: Manifest | undefined;
  const parts: Uint8Array[][] = [];
  const entries = new Map<string, Uint8Array>();
  for await (const event of readContainer(source, options)) {
    switch (event.type) {
      case 'header':
        header = event.header;
        break;
      case 'locked':
        slots = event.slots;
        break;
      case 'manifest':
        manifest = event.manifest;
        break;
      case 'chunk':
        (parts[event.entry] ??= []).push(event.data);
        break;
      case 'entryVerified': {
        const path = manifest?.entries[event.entry]?.path;
        if (path !== undefined) entries.set(path, concat(parts[event.entry] ?? [new Uint8Array(0)]));
        parts[event.entry] = [];
        break;
      }
      case 'end':
        if (header === undefined) throw new IkiError('INTERNAL', 'the reader ended without a header');
        return { header, slots, ...(manifest === undefined ? {} : { manifest }), entries, verified: event.verified };
    }
  }
  throw new IkiError('INTERNAL', 'the reader ended without a verdict');
}
