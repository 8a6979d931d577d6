/**
 * Legacy `.rigproj` bundles (SPEC "Versioning": older bundles still open read only and are
 * no longer written; docs/format.md section 13): a ZIP archive of a project folder,
 * `snapshot.json` at its root and the assets under `assets/`. Read with zip.js (a well-kept
 * ZIP library: strict parsing, CRC-32 checks, overlapping-entry detection), never written:
 * nothing in this library can produce one.
 *
 * A bundle is untrusted input, so every limit is checked on the central directory before any
 * entry is inflated: the number of entries, each entry's and the total declared size, the
 * compression ratio of every entry above {@link RIGPROJ_LIMITS}.ratioFloorBytes (zip bombs),
 * names (absolute, `..`, `.` or empty segments, backslashes, drive letters, control
 * characters, repeats after NFC normalisation), encrypted entries and methods other than
 * stored (0) and deflate (8). While an entry is read, the bytes it inflates to are counted and
 * the read stops one byte past its declared size, so an entry that lies about its size cannot
 * expand without bound. A bundle opens as a new project with the verdict "legacy bundle, not
 * signed".
 */
import { BlobReader, ZipReader, type Entry, type FileEntry } from '@zip.js/zip.js/index-native.js';
import { entryPathProblem } from '../entry-path.js';
import { mediaTypeOf } from '../package/media.js';
import type { ByteSource } from '../streams.js';
import { ProjectError } from './errors.js';
import { OpenedProject, type AssetInfo, type AssetBackend } from './opened.js';
import { MAX_SNAPSHOT_BYTES, SNAPSHOT_PATH, parseSnapshot } from './snapshot.js';

/** The limits a bundle is held to. */
export interface RigprojLimits {
  /** Entries of the central directory, folders included. */
  maxEntries: number;
  /** Declared uncompressed size of one entry. */
  maxEntryBytes: number;
  /** Sum of the declared uncompressed sizes. */
  maxTotalBytes: number;
  /** Largest uncompressed / compressed ratio of an entry larger than `ratioFloorBytes`. */
  maxRatio: number;
  /** Entries up to this size are not held to the ratio (a small JSON file compresses well). */
  ratioFloorBytes: number;
}

/**
 * The defaults. 10,000 entries and 1 GiB per entry are far above a hand-made project's assets;
 * 4 GiB in total bounds what one bundle can make a page read. Real content deflates at most
 * about 20:1 (text) and images hardly at all, while DEFLATE can reach 1032:1: a ratio of 100
 * above 1 MiB refuses bombs and no real bundle.
 */
export const RIGPROJ_LIMITS: Readonly<RigprojLimits> = Object.freeze({
  maxEntries: 10_000,
  maxEntryBytes: 1024 * 1024 * 1024,
  maxTotalBytes: 4 * 1024 * 1024 * 1024,
  maxRatio: 100,
  ratioFloorBytes: 1024 * 1024,
});

/** Compression methods read: stored and deflate (APPNOTE 4.4.5). */
const METHODS = new Set([0, 8]);

const READER_OPTIONS = {
  // No worker: this already runs in one (a page's CSP refuses zip.js's blob: workers anyway).
  useWebWorkers: false,
  useCompressionStream: true,
  // Strict structure (ambiguous archives, local headers that disagree with the directory)...
  strictness: 'strict',
  // ...but names are judged here, so the refusal names the entry and the rule.
  filenameValidation: 'tolerant',
  checkOverlappingEntry: true,
} as const;

function limit(name: string, value: number, max: number, entry?: string): ProjectError {
  return new ProjectError('RIGPROJ_LIMIT', `the bundle is beyond its ${name} limit (${value} > ${max})${entry === undefined ? '' : ` at ${JSON.stringify(entry)}`}`,
    { limit: name, value, max, ...(entry === undefined ? {} : { name: entry }) });
}

/** A zip.js failure as a project error. */
function zipError(error: unknown): ProjectError {
  if (error instanceof ProjectError) return error;
  const message = (error as Error)?.message ?? String(error);
  const reason = String((error as { reason?: unknown })?.reason ?? '');
  if (/duplicate/iu.test(reason)) {
    return new ProjectError('RIGPROJ_BAD_NAME', 'the bundle names an entry twice', { reason: 'repeated' });
  }
  if (/overlapping entry/iu.test(message)) {
    return new ProjectError('RIGPROJ_LIMIT', 'the bundle has overlapping entries (a zip bomb)', { limit: 'overlapping', value: 1, max: 0 });
  }
  if (/encrypt/iu.test(message)) return new ProjectError('RIGPROJ_ENCRYPTED', 'the bundle is encrypted');
  return new ProjectError('RIGPROJ_DAMAGED', `the bundle is not a sound ZIP file (${message})`, { reason: message });
}

/** The directory's name rules and limits, checked before anything is inflated. */
function checkDirectory(entries: Entry[], limits: RigprojLimits): FileEntry[] {
  const seen = new Set<string>();
  let total = 0;
  const files: FileEntry[] = [];
  for (const entry of entries) {
    const name = entry.filename;
    const path = entry.directory ? name.replace(/\/$/u, '') : name;
    const problem = /^[/\\]/u.test(name) ? 'is absolute' : entryPathProblem(path);
    if (problem !== undefined) throw new ProjectError('RIGPROJ_BAD_NAME', `the bundle's entry ${JSON.stringify(name)} ${problem}`, { name, reason: problem });
    const key = path.normalize('NFC');
    if (seen.has(key)) throw new ProjectError('RIGPROJ_BAD_NAME', `the bundle's entry ${JSON.stringify(name)} appears twice`, { name, reason: 'repeated' });
    seen.add(key);
    if (entry.directory) continue;
    if (entry.encrypted) throw new ProjectError('RIGPROJ_ENCRYPTED', `the bundle's entry ${JSON.stringify(name)} is encrypted`, { name });
    const method = (entry as FileEntry & { compressionMethod: number }).compressionMethod;
    if (!METHODS.has(method)) {
      throw new ProjectError('RIGPROJ_UNSUPPORTED', `the bundle's entry ${JSON.stringify(name)} uses compression method ${method}; only stored and deflate are read`, { name, method });
    }
    const size = entry.uncompressedSize;
    if (size > limits.maxEntryBytes) throw limit('entry size', size, limits.maxEntryBytes, name);
    total += size;
    if (total > limits.maxTotalBytes) throw limit('total size', total, limits.maxTotalBytes, name);
    const ratio = size / Math.max(1, entry.compressedSize);
    if (size > limits.ratioFloorBytes && ratio > limits.maxRatio) throw limit('compression ratio', Math.ceil(ratio), limits.maxRatio, name);
    files.push(entry);
  }
  return files;
}

/** An entry's bytes, stopped one byte past its declared size. */
function inflate(entry: FileEntry): ByteSource {
  let seen = 0;
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.length;
      if (seen > entry.uncompressedSize) {
        throw new ProjectError('RIGPROJ_LIMIT', `${JSON.stringify(entry.filename)} inflates past its declared size`,
          { limit: 'declared size', value: seen, max: entry.uncompressedSize, name: entry.filename });
      }
      controller.enqueue(chunk);
    },
    flush() {
      if (seen !== entry.uncompressedSize) throw new ProjectError('RIGPROJ_DAMAGED', `${JSON.stringify(entry.filename)} is shorter than declared`, { reason: 'short' });
    },
  });
  const writing = entry.getData(counter.writable, READER_OPTIONS);
  // A failure before zip.js writes anything (an overlapping entry) never reaches the stream:
  // race every read against it.
  const failed = writing.then(() => new Promise<never>(() => undefined));
  failed.catch(() => undefined);
  return (async function* () {
    const reader = counter.readable.getReader();
    try {
      for (;;) {
        const next = await Promise.race([reader.read(), failed]);
        if (next.done) break;
        yield next.value;
      }
      await writing;
    } catch (error) {
      await reader.cancel().catch(() => undefined);
      throw zipError(error);
    } finally {
      reader.releaseLock();
    }
  })();
}

async function readWhole(entry: FileEntry, max: number): Promise<Uint8Array> {
  if (entry.uncompressedSize > max) throw limit('snapshot size', entry.uncompressedSize, max, entry.filename);
  const out = new Uint8Array(entry.uncompressedSize);
  let at = 0;
  for await (const part of inflate(entry) as AsyncIterable<Uint8Array>) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const isCanvas = (c: unknown): c is { width: number; height: number } => {
  const { width, height } = (typeof c === 'object' && c !== null ? c : {}) as Record<string, unknown>;
  return [width, height].every((v) => typeof v === 'number' && Number.isSafeInteger(v) && v > 0);
};

/**
 * Opens a `.rigproj` bundle (see the module comment). `fileName` names the project when its
 * snapshot has no `name`.
 */
export async function openRigproj(blob: Blob, options: { limits?: Partial<RigprojLimits>; fileName?: string } = {}): Promise<OpenedProject> {
  const limits = { ...RIGPROJ_LIMITS, ...options.limits };
  const reader = new ZipReader(new BlobReader(blob), READER_OPTIONS);
  try {
    return await openEntries(reader, limits, options.fileName);
  } catch (error) {
    await reader.close().catch(() => undefined);
    throw zipError(error);
  }
}

async function openEntries(reader: ZipReader<Blob>, limits: RigprojLimits, fileName: string | undefined): Promise<OpenedProject> {
  const entries: Entry[] = [];
  for await (const entry of reader.getEntriesGenerator()) {
    entries.push(entry);
    if (entries.length > limits.maxEntries) throw limit('entry count', entries.length, limits.maxEntries);
  }
  const files = checkDirectory(entries, limits);
  const snapshotEntry = files.find((f) => f.filename === SNAPSHOT_PATH);
  if (snapshotEntry === undefined) throw new ProjectError('BAD_SNAPSHOT', 'the bundle has no snapshot.json at its root', { reason: 'missing' });
  const snapshot = parseSnapshot(await readWhole(snapshotEntry, MAX_SNAPSHOT_BYTES));
  if (!isCanvas(snapshot.canvas)) {
    throw new ProjectError('BAD_SNAPSHOT', 'the bundle\'s snapshot has no canvas {width, height} of positive integers', { reason: 'no canvas' });
  }
  const byPath = new Map(files.map((f) => [f.filename, f]));
  const assets: AssetInfo[] = files.filter((f) => f.filename.startsWith('assets/')).map((f) => ({
    name: f.filename.slice('assets/'.length), path: f.filename, type: mediaTypeOf(f.filename), size: f.uncompressedSize, damaged: false,
  }));
  const backend: AssetBackend = {
    open: (asset) => inflate(byPath.get(asset.path) as FileEntry),
    close: () => void reader.close().catch(() => undefined),
  };
  const name = typeof snapshot.name === 'string' && snapshot.name !== '' ? snapshot.name
    : (fileName ?? 'Untitled').replace(/\.rigproj$/iu, '');
  return new OpenedProject('rigproj', { kind: 'legacy' }, { name, canvas: { width: snapshot.canvas.width, height: snapshot.canvas.height } },
    assets, false, snapshot, backend);
}
