/**
 * Reads an app project folder into the entries of a project file (docs/format.md section
 * 5.1): `snapshot.json` (the document snapshot, type `application/x-iki-snapshot`) and every
 * file under `assets/`, stored content-addressed at `assets/<sha256>` (identical files once).
 *
 * The original asset names are kept in the project meta as `assetNames`, an object from each
 * file's path below `assets/` to its SHA-256 (README "CLI"); `unpack` writes every name back.
 * The snapshot itself is packed byte for byte; its `canvas` and `name` fill the meta.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { listFiles, realFolder, type FolderPackage, type PackageEntry } from './entry.js';
import { PackageError } from './errors.js';
import { encodingFor, mediaTypeOf } from './media.js';
import { checkEntryPath, realpathInside } from './paths.js';
import { fileSource, hashFile } from './sources.js';

/** Path and media type of the document snapshot (docs/format.md section 5.1). */
export const SNAPSHOT_PATH = 'snapshot.json';
export const SNAPSHOT_TYPE = 'application/x-iki-snapshot';
/** Folder of the assets, in the project folder and in the package. */
export const ASSETS_DIR = 'assets';

/** Options of {@link readProjectFolder}. */
export interface ProjectFolderOptions {
  /** Application name and version for `meta.app`. */
  app: string;
  /** `meta.name`; by default the snapshot's `name`, else the folder's name. */
  name?: string;
  /** `meta.canvas`; by default the snapshot's `canvas`. */
  canvas?: { width: number; height: number };
  /** `meta.savedAt`; by default now. */
  savedAt?: Date;
}

const isCanvas = (c: unknown): c is { width: number; height: number } => {
  const { width, height } = (typeof c === 'object' && c !== null ? c : {}) as Record<string, unknown>;
  return [width, height].every((v) => typeof v === 'number' && Number.isSafeInteger(v) && v > 0);
};

async function readSnapshot(file: string): Promise<Record<string, unknown>> {
  let snapshot: unknown;
  try {
    snapshot = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    if (error instanceof SyntaxError) throw new PackageError('BAD_PROJECT', `${SNAPSHOT_PATH} is not valid JSON`, SNAPSHOT_PATH);
    throw error;
  }
  if (typeof snapshot !== 'object' || snapshot === null || Array.isArray(snapshot)) {
    throw new PackageError('BAD_PROJECT', `${SNAPSHOT_PATH} is not a JSON object`, SNAPSHOT_PATH);
  }
  return snapshot as Record<string, unknown>;
}

function projectMeta(dir: string, snapshot: Record<string, unknown>, options: ProjectFolderOptions, assetNames: Record<string, string>) {
  const canvas = options.canvas ?? snapshot.canvas;
  if (!isCanvas(canvas)) {
    throw new PackageError('BAD_PROJECT', `${SNAPSHOT_PATH} has no canvas {width, height} of positive integers; give one`, SNAPSHOT_PATH);
  }
  const name = options.name ?? (typeof snapshot.name === 'string' && snapshot.name !== '' ? snapshot.name : basename(dir));
  return {
    format: 'iki-project', version: 1, name, savedAt: (options.savedAt ?? new Date()).toISOString(),
    canvas: { width: canvas.width, height: canvas.height }, app: options.app, assetNames,
  };
}

/**
 * Reads the project folder `dir`. Refuses (with {@link PackageError}) a folder without a
 * `snapshot.json` object, assets that are special files or links leading outside, and names
 * that are not valid entry paths. Files beside `snapshot.json` and `assets/` are left out and
 * listed in `ignored`.
 */
export async function readProjectFolder(dir: string, options: ProjectFolderOptions): Promise<FolderPackage> {
  const realRoot = await realFolder(dir);
  const snapshotFile = await realpathInside(dir, realRoot, SNAPSHOT_PATH);
  const snapshot = await readSnapshot(snapshotFile);
  const all = await listFiles(dir, realRoot, (path, why) => {
    if (path.startsWith(`${ASSETS_DIR}/`)) throw new PackageError(why.includes('outside') ? 'PATH_ESCAPES' : 'NOT_A_FILE', `${path} ${why}`, path);
  });
  const snapshotHash = await hashFile(snapshotFile, SNAPSHOT_PATH);
  const entries: PackageEntry[] = [{
    path: SNAPSHOT_PATH, type: SNAPSHOT_TYPE, encoding: 'deflate', ...snapshotHash, data: fileSource(snapshotFile),
  }];
  const assetNames: Record<string, string> = {};
  const stored = new Set<string>();
  for (const path of all.filter((p) => p.startsWith(`${ASSETS_DIR}/`))) {
    checkEntryPath(path);
    const file = await realpathInside(dir, realRoot, path);
    const { size, sha256 } = await hashFile(file, path);
    assetNames[path.slice(ASSETS_DIR.length + 1)] = sha256;
    const at = `${ASSETS_DIR}/${sha256}`;
    if (stored.has(at)) continue;
    stored.add(at);
    const type = mediaTypeOf(path);
    entries.push({ path: at, type, encoding: encodingFor(type), size, sha256, data: fileSource(file) });
  }
  const ignored = all.filter((p) => p !== SNAPSHOT_PATH && !p.startsWith(`${ASSETS_DIR}/`));
  return { kind: 'project', entries, meta: projectMeta(dir, snapshot, options, assetNames), ignored };
}
