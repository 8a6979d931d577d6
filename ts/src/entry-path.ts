/**
 * The rules of an entry path (docs/format.md section 5, `path`), without any file system, so
 * that a browser checking asset names and the CLI checking a folder apply the same rules: 1 to
 * 1024 UTF-8 bytes, `/`-separated, relative, no empty, `.` or `..` segment, no `\` or control
 * character, and no drive-letter prefix (`C:`), so a path never means something else on Windows.
 */
import { MAX_PATH_BYTES } from './limits.js';

// C0 controls, DEL and C1 controls: invisible in listings and unsafe in file names.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

/** Why `path` is not a valid entry path, or `undefined` when it is. */
export function entryPathProblem(path: string): string | undefined {
  const bytes = new TextEncoder().encode(path).length;
  if (bytes === 0 || bytes > MAX_PATH_BYTES) return `must be 1 to ${MAX_PATH_BYTES} bytes long`;
  if (path.includes('\\')) return 'contains a backslash';
  if (CONTROL.test(path)) return 'contains a control character';
  if (/^[A-Za-z]:/u.test(path)) return 'starts with a drive letter';
  if (path.split('/').some((s) => s === '' || s === '.' || s === '..')) return 'has an empty, "." or ".." segment';
  return undefined;
}
