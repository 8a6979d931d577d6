/**
 * How the CLI fails: one line `iki: <CODE>: <message>` on stderr, exit status 2 for a usage
 * error, 130 when the user cancelled a prompt, 1 for everything else, and never a stack trace.
 * Codes are the container's (docs/format.md section 11), the folder codes of
 * `../package/errors.ts`, the few CLI codes below (README "CLI"), and the licensing service's
 * codes passed through as it sent them (e.g. `INVALID_CREDENTIALS`, `EMAIL_NOT_VERIFIED`).
 */
import { IkiError } from '../errors.js';
import { PackageError } from '../package/errors.js';

/** Codes the CLI adds. */
export type CliCode =
  /** Bad command-line usage (exit status 2). */
  | 'USAGE'
  /** A file password the strength estimator finds easy to guess (`iki pack`; `--weak-password` takes it). */
  | 'WEAK_PASSWORD'
  /** No saved session for the service (`iki login` makes one). */
  | 'NOT_SIGNED_IN'
  /** The saved session file may be read by group or others. */
  | 'INSECURE_SESSION_FILE'
  /** An input file or folder does not exist. */
  | 'NOT_FOUND'
  /** The output exists and `--force` was not given. */
  | 'OUTPUT_EXISTS'
  /** Reading or writing a file failed (permissions, full disk, ...). */
  | 'IO_ERROR'
  /** The user cancelled a prompt (Ctrl-C or end of input; exit status 130). */
  | 'CANCELLED'
  /** The licensing service could not be reached or did not answer in time. */
  | 'SERVICE_UNREACHABLE'
  /** The service's answer was not its API's JSON (a proxy's error page, a redirect). */
  | 'HTTP_ERROR';

/** A failure the CLI reports with `code` and exits with `exitCode`. */
export class CliError extends Error {
  readonly code: CliCode | string;
  readonly exitCode: number;

  constructor(code: CliCode | string, message: string, exitCode = 1) {
    super(message);
    this.name = 'CliError';
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** A usage error: exit status 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super('USAGE', message, 2);
  }
}

/** What a failure looks like to the user. */
export interface Failure {
  code: string;
  message: string;
  exitCode: number;
}

const FS_CODES: Record<string, string> = {
  ENOENT: 'does not exist', EACCES: 'permission denied', EPERM: 'operation not permitted',
  EISDIR: 'is a folder, not a file', ENOTDIR: 'a part of the path is not a folder', ENOSPC: 'no space left on the device',
  EEXIST: 'already exists', EROFS: 'read-only file system', ENOTEMPTY: 'folder not empty', EMFILE: 'too many open files',
  ENAMETOOLONG: 'name too long',
};

/** Whether `error` is a Node system error (it carries an errno name and, usually, `syscall`). */
export function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  const { code, syscall } = error as NodeJS.ErrnoException;
  return error instanceof Error && typeof code === 'string' && (syscall !== undefined || FS_CODES[code] !== undefined);
}

/** What a system error means, in words (`permission denied`), without its path. */
export function systemReason(error: NodeJS.ErrnoException): string {
  const code = error.code ?? 'EIO';
  return FS_CODES[code] ?? `${code.toLowerCase()} (${error.syscall ?? 'system error'})`;
}

/**
 * Runs `work` on `file` and names `file` in a system error that has no path: Node reports a
 * read on an open handle (`EISDIR` when the file is a folder) without one.
 */
export async function naming<T>(file: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isSystemError(error) && error.path === undefined) error.path = file;
    throw error;
  }
}

function fileSystemFailure(error: NodeJS.ErrnoException): Failure | undefined {
  // Node's system errors carry `syscall`; their errno names are not iki codes.
  if (error.code === undefined || !isSystemError(error)) return undefined;
  const what = systemReason(error);
  const where = error.path === undefined ? '' : `${error.path}: `;
  return { code: error.code === 'ENOENT' ? 'NOT_FOUND' : 'IO_ERROR', message: `${where}${what}`, exitCode: 1 };
}

/** What to try next after a container error a person commonly meets. */
const FORMAT_HINTS: Readonly<Record<string, string>> = {
  DECRYPT_FAILED: ' (wrong password or key, or the file was changed)',
  BAD_MAGIC: ': give a .iki or .ikm file made by iki pack',
  // The verdict the project page shows for the same file (docs/format.md, the signer's verdict).
  BAD_SIGNATURE: ': the file was modified after it was signed (or damaged); do not trust its content',
  HASH_MISMATCH: ': the file was modified after it was signed (or damaged); do not trust its content',
};

/** One line, so a message can never break the `iki: CODE: message` shape. */
const oneLine = (text: string) => text.replace(/\s*\n\s*/gu, ' ').trim();

/**
 * Classifies anything thrown into a {@link Failure}. Unknown errors become `INTERNAL` with
 * their message only; the stack is printed only when `IKI_DEBUG` is set.
 */
export function describeFailure(error: unknown): Failure {
  if (error instanceof CliError) return { code: error.code, message: oneLine(error.message), exitCode: error.exitCode };
  if (error instanceof IkiError || error instanceof PackageError) {
    // The code stays coarse on purpose (STYLE.md); the hint lists every cause, never which one.
    const hint = FORMAT_HINTS[error.code] ?? '';
    return { code: error.code, message: `${oneLine(error.message)}${hint}`, exitCode: 1 };
  }
  if (error instanceof TypeError || error instanceof RangeError) {
    const fs = fileSystemFailure(error as NodeJS.ErrnoException);
    return fs ?? { code: 'INVALID_ARGUMENT', message: oneLine(error.message), exitCode: 1 };
  }
  if (error instanceof Error) {
    const fs = fileSystemFailure(error as NodeJS.ErrnoException);
    if (fs !== undefined) return fs;
    // A documented code the TS union does not list yet (e.g. iki-license's IMAGE_DECODE_FAILED).
    const { code } = error as { code?: unknown };
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/u.test(code)) return { code, message: oneLine(error.message), exitCode: 1 };
    return { code: 'INTERNAL', message: oneLine(error.message), exitCode: 1 };
  }
  return { code: 'INTERNAL', message: oneLine(String(error)), exitCode: 1 };
}

/** The one stderr line for a failure. */
export function failureLine(failure: Failure): string {
  return `iki: ${failure.code}: ${failure.message}\n`;
}
