/**
 * What reading a folder produces: manifest entries whose data is re-read from disk when the
 * container writer iterates it. Structurally a `NewEntry` of `../container.ts` with `sha256`
 * always filled in, so the result goes straight to `writeContainer`.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_ENTRIES } from '../limits.js';
import { PackageError } from './errors.js';
import { isInside } from './paths.js';
import type { EntrySource } from './sources.js';

/** Image facts of an `rgba8` entry (docs/format.md section 5). */
export interface TextureMeta {
  kind: 'texture';
  width: number;
  height: number;
  source: 'image/png';
}

/** One manifest entry and its content. */
export interface PackageEntry {
  path: string;
  type: string;
  encoding: 'stored' | 'deflate' | 'rgba8';
  /** Decoded size in bytes. */
  size: number;
  /** Lowercase hex SHA-256 of the decoded bytes. */
  sha256: string;
  data: EntrySource;
  meta?: TextureMeta;
}

/** A folder read into entries and manifest meta. */
export interface FolderPackage {
  kind: 'project' | 'model';
  entries: PackageEntry[];
  meta: Record<string, unknown>;
  /** Files of the folder that are not packed (relative, `/`-separated, sorted). */
  ignored: string[];
}

/** The real path of `dir`, which must be a directory (`MISSING_FILE`, `NOT_A_FOLDER`). */
export async function realFolder(dir: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new PackageError('MISSING_FILE', `${dir} does not exist`);
    throw error;
  }
  if (!(await stat(real)).isDirectory()) throw new PackageError('NOT_A_FOLDER', `${dir} is not a folder; give the folder to pack`);
  return real;
}

/**
 * Every file below `root` (relative, `/`-separated, sorted by UTF-16 code units). Symbolic
 * links to regular files inside `realRoot` count as files; links to folders are not followed
 * and, like links leading outside and special files, are reported through `onOther`.
 */
export async function listFiles(root: string, realRoot: string, onOther: (path: string, why: string) => void): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const items = await readdir(rel === '' ? root : join(root, ...rel.split('/')), { withFileTypes: true });
    items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const item of items) {
      const path = rel === '' ? item.name : `${rel}/${item.name}`;
      if (item.isDirectory()) await walk(path);
      else if (item.isFile()) out.push(path);
      else if (item.isSymbolicLink()) await linkTarget(root, realRoot, path, out, onOther);
      else onOther(path, 'is not a regular file');
      if (out.length > MAX_ENTRIES) throw new PackageError('TOO_LARGE', `more than ${MAX_ENTRIES} files`);
    }
  };
  await walk('');
  return out;
}

async function linkTarget(root: string, realRoot: string, path: string, out: string[], onOther: (path: string, why: string) => void) {
  let real: string;
  try {
    real = await realpath(join(root, ...path.split('/')));
  } catch {
    onOther(path, 'is a broken symbolic link');
    return;
  }
  if (!isInside(realRoot, real)) onOther(path, 'is a symbolic link that leads outside the folder');
  else if ((await stat(real)).isFile()) out.push(path);
  else onOther(path, 'is a symbolic link to a folder (not followed)');
}
