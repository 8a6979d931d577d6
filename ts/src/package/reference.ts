/**
 * Entry paths and references without any file system (no Node module), so the CLI's folder
 * reader and the browser's master export (ts/src/browser/master-export.ts) check a model's
 * references with the very same code. `paths.ts` re-exports these beside its disk checks.
 */
import { entryPathProblem } from '../entry-path.js';
import { PackageError } from './errors.js';

/**
 * Throws {@link PackageError} `BAD_PATH` unless `path` is a valid entry path
 * (`../entry-path.ts`: 1 to 1024 UTF-8 bytes, `/`-separated, relative, no empty, `.` or `..`
 * segment, no `\`, control character or drive letter).
 */
export function checkEntryPath(path: string): void {
  const problem = entryPathProblem(path);
  if (problem !== undefined) throw new PackageError('BAD_PATH', `path ${JSON.stringify(path)} ${problem}`, path);
}

/** POSIX path normalisation, as Node's `path.posix.normalize`: `.` and empty segments dropped, `..` applied. */
export function normalizePosix(path: string): string {
  const absolute = path.startsWith('/');
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment !== '..') out.push(segment);
    else if (out.length > 0 && out.at(-1) !== '..') out.pop();
    else if (!absolute) out.push('..');
  }
  let normal = (absolute ? '/' : '') + out.join('/');
  if (normal === '') return path.endsWith('/') ? './' : '.';
  if (path.endsWith('/') && !normal.endsWith('/')) normal += '/';
  return normal;
}

/**
 * Turns a reference written inside a package file (a model3.json) into its package path, as
 * a player resolving it relative to the package root would: `./a/b` and `a/x/../b` become
 * `a/b`. A reference that leaves the package is `PATH_ESCAPES`; other bad names `BAD_PATH`.
 */
export function normalizeReference(reference: string): string {
  if (reference.includes('\\')) throw new PackageError('BAD_PATH', `reference ${JSON.stringify(reference)} contains a backslash`, reference);
  const normal = normalizePosix(reference);
  if (reference.startsWith('/') || normal === '..' || normal.startsWith('../') || /^[A-Za-z]:/u.test(reference)) {
    throw new PackageError('PATH_ESCAPES', `reference ${JSON.stringify(reference)} leads outside the folder`, reference);
  }
  checkEntryPath(normal);
  return normal;
}
