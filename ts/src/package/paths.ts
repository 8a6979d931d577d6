/**
 * Entry paths and where they may lead on disk. The rules are those of docs/format.md
 * section 5 (`path`), checked again here because a folder is packed from, and a package
 * unpacked to, a real file system: a name the manifest would refuse is refused before any
 * work, and no path, symbolic link included, may leave its folder.
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { PackageError } from './errors.js';
import { checkEntryPath } from './reference.js';

export { checkEntryPath, normalizeReference } from './reference.js';

/** Whether `child` (absolute) is `root` (absolute) or lies below it. */
export function isInside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The absolute file-system path of the valid entry path `path` under `root`, checked to stay
 * inside `root` (it always does for a valid path; the check guards the invariant).
 */
export function joinInside(root: string, path: string): string {
  checkEntryPath(path);
  const full = resolve(root, join(...path.split('/')));
  if (!isInside(resolve(root), full)) throw new PackageError('PATH_ESCAPES', `path ${JSON.stringify(path)} leads outside the folder`, path);
  return full;
}

/**
 * The real path of `path` under `root` with symbolic links resolved; refused with
 * `PATH_ESCAPES` when a link leads outside `realRoot` (the real path of `root`), and with
 * `MISSING_FILE` when nothing is there.
 */
export async function realpathInside(root: string, realRoot: string, path: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(joinInside(root, path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new PackageError('MISSING_FILE', `${path} does not exist`, path);
    }
    throw error;
  }
  if (!isInside(realRoot, real)) {
    throw new PackageError('PATH_ESCAPES', `${path} is a symbolic link that leads outside the folder`, path);
  }
  return real;
}
