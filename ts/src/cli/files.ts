/**
 * The user's input files. A file argument is a name: standard input (`-`) is read only by
 * `--password-file -`, and anywhere else `-` is refused as a usage error rather than opened
 * as a file of that name. Every system error names the file, even one Node reports without a
 * path (a read on an open handle, `EISDIR` for a folder).
 */
import { readFile } from 'node:fs/promises';
import { naming, UsageError } from './errors.js';

/** `file`, refused when it is `-` (standard input); `what` names the argument. */
export function inputName(file: string, what: string): string {
  if (file === '-') {
    throw new UsageError(`${what}: reading standard input ("-") is not supported here; give a file name (only --password-file reads -)`);
  }
  return file;
}

/** The whole of the regular file `file` (see {@link inputName}). */
export async function readInput(file: string, what: string): Promise<Buffer> {
  return naming(inputName(file, what), () => readFile(file));
}
