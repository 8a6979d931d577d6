/**
 * Opening a project (SPEC "What the service does" 7; docs/format.md sections 5.1, 6.1, 7.3,
 * 13): a project file (`.iki`) or a legacy `.rigproj` bundle, told apart by their first bytes.
 *
 * A project file is read once, completely and in pieces: every chunk decrypted and checked,
 * the signature verified (damage is noted rather than fatal, so a modified file can still be
 * shown after the user acknowledged it), the snapshot kept, the assets only located. The
 * verdict is decided from what the reader found. Assets are read again one at a time, later,
 * from their byte spans of the same `Blob` (a `File` from a picker, `fs.openAsBlob` in Node),
 * through an entry reader that repeats the checks.
 *
 * Keys: a password slot opens with `password` (a wrong one is `WRONG_PASSWORD`, and another
 * may be tried); an account slot opens only for the signed-in account it names, through the
 * key service's `POST /api/keys/unwrap` (the content key arrives sealed to a key made inside
 * WASM and never reaches JavaScript). Any other account, or none, is refused with the account
 * the file is for named, before anything is decrypted.
 */
import type { WasmEntryReader, WasmReader } from '../../../pkg/iki_wasm.js';
import type { Manifest, SlotInfo } from '../container.js';
import { passwordBytes } from '../container-write.js';
import { IkiError, callWasm, fromWasmError } from '../errors.js';
import type { KeyServiceApi } from '../key-service.js';
import { handleOf } from '../keys.js';
import { AccountUnwrap } from '../player.js';
import { blobSource, pieces } from '../streams.js';
import { loadWasm, wasm } from '../wasm.js';
import { entryPathProblem } from '../entry-path.js';
import { KEY_REFUSALS, ProjectError } from './errors.js';
import { OpenedProject, type AssetInfo, type OpenedMeta } from './opened.js';
import type { ProjectProgress } from './save.js';
import { SNAPSHOT_PATH, checkSnapshotSize, parseSnapshot } from './snapshot.js';
import { decideVerdict, type VerdictContext } from './verdict.js';

/** How to open, and what the app knows for the verdict. */
export interface OpenProjectOptions extends VerdictContext {
  /** For a password slot. */
  password?: string;
  /** The signed-in account and its key service, for an account slot. */
  session?: { accountId: string; email?: string; keyService: KeyServiceApi };
  onProgress?: (progress: ProjectProgress) => void;
}

/** What the first bytes say a file is. */
export type ProjectFileKind = 'iki' | 'rigproj';

const IKI_MAGIC = [0x89, 0x49, 0x4b, 0x49, 0x0d, 0x0a, 0x1a, 0x0a];
const IKM_MAGIC = [0x89, 0x49, 0x4b, 0x4d, 0x0d, 0x0a, 0x1a, 0x0a];

/** The source as a `Blob` (random access for reading assets again). */
export function asBlob(source: Blob | Uint8Array): Blob {
  if (source instanceof Uint8Array) return new Blob([source as BlobPart]);
  if (typeof Blob !== 'undefined' && source instanceof Blob) return source;
  throw new TypeError('source must be a Blob (a File, fs.openAsBlob) or a Uint8Array');
}

/** `iki` or `rigproj` by the first bytes; `NOT_A_PROJECT` otherwise (a model file included). */
export async function projectFileKind(blob: Blob): Promise<ProjectFileKind> {
  const head = new Uint8Array(await blob.slice(0, 8).arrayBuffer());
  if (IKI_MAGIC.every((b, i) => head[i] === b)) return 'iki';
  // A ZIP file starts with a local file header, or is an empty archive (end of central directory).
  if (head[0] === 0x50 && head[1] === 0x4b && ((head[2] === 3 && head[3] === 4) || (head[2] === 5 && head[3] === 6))) return 'rigproj';
  const found = IKM_MAGIC.every((b, i) => head[i] === b) ? 'a protected model file (.ikm)' : 'unknown';
  throw new ProjectError('NOT_A_PROJECT', `this is not a project file (.iki) or a .rigproj bundle (${found})`, { found });
}

type RawEvent =
  | { type: 'header'; header: { encrypted: boolean; createdMs: number } }
  | { type: 'locked'; slots: SlotInfo[] }
  | { type: 'manifest'; manifestJson: string }
  | { type: 'chunk'; entry: number; data: Uint8Array }
  | { type: 'entryVerified' | 'entryDamaged'; entry: number }
  | { type: 'end'; verified: { publicKey: Uint8Array; signerJson: string } }
  | { type: 'modified'; publicKey: Uint8Array; signerJson: string };

/** What the first reading keeps. */
interface FirstReading {
  encrypted: boolean;
  createdMs: number;
  manifest?: Manifest;
  snapshotEntry: number;
  snapshot: Uint8Array[];
  damaged: Set<number>;
  end?: { publicKey: Uint8Array; signerJson: string; modified: boolean };
  /** The key was refused: the file is read on for its signer only, and this is thrown with the verdict. */
  refusal?: ProjectError;
}

/** The slots a caller can act on, for an error's details. */
const slotList = (slots: SlotInfo[]): string => slots.map((s) => (s.type === 'account' ? `account:${s.accountId}` : s.type)).join(',');

/** Tries the password on the password slots: true when it opened, false when it did not. */
function tryPassword(reader: WasmReader, password: string): boolean {
  const bytes = passwordBytes(password);
  try {
    reader.unlockPassword(bytes);
    return true;
  } catch (error) {
    const e = fromWasmError(error);
    if (e instanceof IkiError && e.code === 'DECRYPT_FAILED') return false;
    throw e;
  } finally {
    bytes.fill(0);
  }
}

/**
 * Opens the content key: the password, or the account slot of the signed-in account. The
 * refusals name what would open the file; the reader stays locked, so nothing is decrypted.
 */
async function unlock(reader: WasmReader, slots: SlotInfo[], options: OpenProjectOptions): Promise<void> {
  const hasPassword = slots.some((s) => s.type === 'password');
  const accounts = slots.filter((s): s is Extract<SlotInfo, { type: 'account' }> => s.type === 'account');
  const { password, session } = options;
  if (password !== undefined && hasPassword && tryPassword(reader, password)) return;
  const mine = accounts.find((s) => s.accountId === session?.accountId);
  if (mine !== undefined && session !== undefined) return unlockAccount(reader, mine, session.keyService);
  if (password !== undefined && hasPassword) throw new ProjectError('WRONG_PASSWORD', 'the password does not open this file');
  const named = accounts[0]?.accountId;
  if (hasPassword) {
    throw new ProjectError('PASSWORD_REQUIRED', 'this file is protected by a password', named === undefined ? {} : { accountId: named });
  }
  if (named !== undefined && session === undefined) {
    throw new ProjectError('SIGN_IN_REQUIRED', `this file opens only for the account ${named}; sign in as that account`, { accountId: named });
  }
  if (named !== undefined && session !== undefined) {
    throw new ProjectError('WRONG_ACCOUNT', `this file opens only for the account ${named}, not for ${session.accountId}`,
      { accountId: named, signedIn: session.accountId });
  }
  throw new ProjectError('NO_USABLE_SLOT', 'this file is encrypted for a key this app cannot use', { slots: slotList(slots) });
}

/** Unwraps an account slot through the key service; the content key stays in WASM. */
async function unlockAccount(reader: WasmReader, slot: { accountId: string; blob: Uint8Array }, keyService: KeyServiceApi): Promise<void> {
  const ephemeral = AccountUnwrap.create();
  try {
    const sealed = await keyService.unwrap(slot.accountId, slot.blob, ephemeral.publicKey);
    const contentKey = ephemeral.open(slot.accountId, sealed);
    try {
      callWasm(() => reader.unlockContentKey(handleOf(contentKey)));
    } finally {
      contentKey.free();
    }
  } finally {
    ephemeral.free();
  }
}

/** Handles one event of the first reading. */
async function onEvent(raw: RawEvent, reader: WasmReader, state: FirstReading, options: OpenProjectOptions): Promise<void> {
  switch (raw.type) {
    case 'header':
      state.encrypted = raw.header.encrypted;
      state.createdMs = raw.header.createdMs;
      break;
    case 'locked':
      try {
        await unlock(reader, raw.slots, options);
      } catch (error) {
        if (!(error instanceof ProjectError) || !KEY_REFUSALS.has(error.code)) throw error;
        // Read on without the key: the structure and the signature still decide who signed it.
        state.refusal = error;
        callWasm(() => reader.skipContent());
      }
      break;
    case 'manifest': {
      const manifest = JSON.parse(raw.manifestJson) as Manifest;
      state.manifest = manifest;
      state.snapshotEntry = manifest.entries.findIndex((e) => e.path === SNAPSHOT_PATH);
      const entry = manifest.entries[state.snapshotEntry];
      if (entry === undefined) throw new ProjectError('BAD_SNAPSHOT', 'the file has no snapshot.json', { reason: 'missing' });
      checkSnapshotSize(entry.size);
      break;
    }
    case 'chunk':
      if (raw.entry === state.snapshotEntry) state.snapshot.push(raw.data);
      break;
    case 'entryDamaged':
      state.damaged.add(raw.entry);
      break;
    case 'end':
      state.end = { ...raw.verified, modified: false };
      break;
    case 'modified':
      state.end = { publicKey: raw.publicKey, signerJson: raw.signerJson, modified: true };
      break;
    default:
      break;
  }
}

/**
 * Reads the whole file once; returns what it found and the entry reader for the assets. With
 * `hashEntries` false, entries are not checked against their `sha256` (the signature covers
 * every byte, and each asset is checked when it is read again): one SHA-256 pass instead of
 * two. A file that turns out modified is read again with them, to name the damaged entries.
 */
async function firstReading(blob: Blob, options: OpenProjectOptions, hashEntries: boolean): Promise<{ state: FirstReading; entries: WasmEntryReader }> {
  await loadWasm();
  const reader = callWasm(() => new (wasm().WasmReader)('project'));
  const state: FirstReading = { encrypted: false, createdMs: 0, snapshotEntry: -1, snapshot: [], damaged: new Set() };
  let done = 0;
  const drain = async () => {
    for (let raw = callWasm(() => reader.next()) as RawEvent | undefined; raw !== undefined; raw = callWasm(() => reader.next()) as RawEvent | undefined) {
      await onEvent(raw, reader, state, options);
    }
  };
  try {
    callWasm(() => reader.tolerateDamage());
    if (!hashEntries) callWasm(() => reader.skipEntryHashes());
    for await (const piece of pieces(blobSource(blob), 'source')) {
      callWasm(() => reader.push(piece));
      done += piece.length;
      await drain();
      options.onProgress?.({ phase: 'verifying', done, total: blob.size });
    }
    callWasm(() => reader.finish());
    await drain();
    // A file read for its signer only (its key refused) has no entries to read again.
    if (state.refusal !== undefined) throw await withVerdict(state, options);
    return { state, entries: callWasm(() => reader.entryReader()) };
  } finally {
    reader.free();
  }
}

/** The assets of the manifest, named by `meta.assetNames` where it names them. */
function assetList(manifest: Manifest, damaged: Set<number>): AssetInfo[] {
  const byPath = new Map(manifest.entries.map((e, i) => [e.path, { entry: e, index: i }]));
  const names = manifest.meta.assetNames;
  const out: AssetInfo[] = [];
  const named = new Set<string>();
  const add = (name: string, path: string) => {
    const found = byPath.get(path);
    if (found === undefined) return;
    named.add(path);
    const { entry, index } = found;
    out.push({ name, path, type: entry.type, size: entry.size, damaged: damaged.has(index),
      ...(entry.sha256 === undefined ? {} : { sha256: entry.sha256 }) });
  };
  if (typeof names === 'object' && names !== null && !Array.isArray(names)) {
    for (const [name, sha] of Object.entries(names as Record<string, unknown>)) {
      if (typeof sha === 'string' && /^[0-9a-f]{64}$/u.test(sha) && entryPathProblem(name) === undefined && entryPathProblem(`assets/${name}`) === undefined) add(name, `assets/${sha}`);
    }
  }
  for (const entry of manifest.entries) {
    if (entry.path.startsWith('assets/') && !named.has(entry.path)) add(entry.path.slice('assets/'.length), entry.path);
  }
  return out;
}

function metaOf(manifest: Manifest): OpenedMeta {
  const m = manifest.meta as { name: string; canvas: { width: number; height: number }; savedAt?: string; app?: string };
  return { name: m.name, canvas: { width: m.canvas.width, height: m.canvas.height },
    ...(typeof m.savedAt === 'string' ? { savedAt: m.savedAt } : {}), ...(typeof m.app === 'string' ? { app: m.app } : {}) };
}

/** Serialises the use of one entry reader: one asset is read at a time. */
function entryBackend(blob: Blob, reader: WasmEntryReader, manifest: Manifest) {
  let queue: Promise<void> = Promise.resolve();
  let closed = false;
  async function* read(asset: AssetInfo): AsyncGenerator<Uint8Array> {
    const index = manifest.entries.findIndex((e) => e.path === asset.path);
    let release!: () => void;
    const previous = queue;
    queue = new Promise((resolve) => { release = resolve; });
    await previous;
    try {
      if (closed) throw new ProjectError('NOT_ACKNOWLEDGED', 'the project was closed');
      const { start, end } = callWasm(() => reader.seek(index)) as { start: number; end: number };
      let verified = false;
      const drain = function* (): Generator<Uint8Array> {
        for (let raw = callWasm(() => reader.next()) as RawEvent | undefined; raw !== undefined; raw = callWasm(() => reader.next()) as RawEvent | undefined) {
          if (raw.type === 'chunk') yield raw.data;
          else if (raw.type === 'entryVerified') verified = true;
        }
      };
      for await (const piece of pieces(blobSource(blob, start, end), 'source')) {
        callWasm(() => reader.push(piece));
        yield* drain();
      }
      callWasm(() => reader.finish());
      yield* drain();
      if (!verified) throw new IkiError('TRUNCATED', `${asset.path} ended before its last chunk`);
    } finally {
      release();
    }
  }
  return {
    open: (asset: AssetInfo) => read(asset),
    close() {
      closed = true;
      void queue.then(() => reader.free());
    },
  };
}

/** Opens a project file (`.iki`); see the module comment. `rigproj` bundles: `openRigproj`. */
export async function openIki(blob: Blob, options: OpenProjectOptions = {}): Promise<OpenedProject> {
  let { state, entries } = await firstReading(blob, options, false);
  if (state.end?.modified === true) {
    entries.free();
    ({ state, entries } = await firstReading(blob, options, true));
  }
  try {
    const { manifest, end } = state;
    if (manifest === undefined || end === undefined) throw new IkiError('INTERNAL', 'the reader ended without a manifest or a verdict');
    const damagedPaths = [...state.damaged].map((i) => manifest.entries[i]?.path ?? String(i));
    const { verdict, fetchedIssuer } = await decideVerdict({ publicKey: end.publicKey, signerJson: end.signerJson,
      createdMs: state.createdMs, modified: end.modified, damaged: damagedPaths }, options);
    const snapshot = state.damaged.has(state.snapshotEntry) ? undefined : parseSnapshot(concat(state.snapshot));
    return new OpenedProject('iki', verdict, metaOf(manifest), assetList(manifest, state.damaged), state.encrypted, snapshot,
      entryBackend(blob, entries, manifest), fetchedIssuer);
  } catch (error) {
    entries.free();
    throw error;
  }
}

/** A refused key's error, with the verdict on the signer decided from the signature alone. */
async function withVerdict(state: FirstReading, options: OpenProjectOptions): Promise<ProjectError> {
  const refusal = state.refusal as ProjectError;
  const end = state.end;
  if (end === undefined) return refusal;
  const { verdict } = await decideVerdict({ publicKey: end.publicKey, signerJson: end.signerJson, createdMs: state.createdMs,
    modified: end.modified, damaged: [] }, options);
  refusal.verdict = verdict;
  return refusal;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
