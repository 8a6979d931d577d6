/**
 * Outputs appear whole or not at all: a file is written to a temporary name beside its
 * target and renamed at the end; a folder is filled in a temporary folder beside it and moved
 * into place at the end. On failure the temporary output is removed, so a refused or damaged
 * input leaves nothing behind.
 *
 * Ctrl-C and SIGTERM, while a temporary exists, fire {@link interruption}: the work stops at
 * its next check (between chunks, between password slots, before a commit) with `CANCELLED`
 * (exit status 130 or 143), and the failure path removes the temporary once the writes in
 * flight have finished, which a signal handler removing it at once could not wait for. A
 * second signal removes what it can and exits at once. Without a temporary, the signals keep
 * their default action (the process ends at once, even inside a key derivation). A process
 * that cannot clean up (SIGKILL, a crash, power loss) leaves a temporary whose name holds this
 * machine and the process id (`.<name>.iki-tmp-<host>-<pid>-<random>`); the next run writing
 * the same target removes it once that process is gone.
 */
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { link, lstat, mkdir, open, readdir, rename, rm, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { CliError, isSystemError, systemReason, UsageError } from './errors.js';

const pending = new Set<string>();

/** link() failures that mean "this file system has no hard links". */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/** This machine, in temporary names: 8 hex digits of the host name's SHA-256. */
const HOST = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);
const TEMP_MARK = '.iki-tmp-';

const interrupted = new AbortController();

/**
 * Fires on the first Ctrl-C or SIGTERM while a temporary output exists; its reason is the
 * `CANCELLED` error the command then fails with. Pass it to reads and check it between steps.
 */
export const interruption: AbortSignal = interrupted.signal;

const exitStatus = (signal: NodeJS.Signals) => (signal === 'SIGINT' ? 130 : 143);

function onSignal(signal: NodeJS.Signals): void {
  if (!interrupted.signal.aborted) {
    interrupted.abort(new CliError('CANCELLED', `stopped by ${signal}; the unfinished output was removed`, exitStatus(signal)));
    return;
  }
  for (const path of pending) rmSync(path, { recursive: true, force: true });
  process.stderr.write(`iki: CANCELLED: stopped by ${signal} again; the unfinished output was removed\n`);
  process.exit(exitStatus(signal));
}

function track(path: string): void {
  if (pending.size === 0) process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  pending.add(path);
}

function untrack(path: string): void {
  pending.delete(path);
  if (pending.size === 0) process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
}

/** A fresh temporary name beside `target`. */
function tempPath(target: string): string {
  return join(dirname(target), `.${basename(target)}${TEMP_MARK}${HOST}-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/** Whether the process `pid` of this machine still runs (EPERM: it runs, as another user). */
function running(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Removes the temporaries of `target` that iki processes of this machine left when they were
 * killed before they could clean up; those of running processes, and of other machines
 * sharing the folder, are left alone. Returns the names removed.
 */
export async function removeStaleTemps(target: string, note?: (text: string) => void): Promise<string[]> {
  const prefix = `.${basename(target)}${TEMP_MARK}${HOST}-`;
  let names: string[];
  try {
    names = await readdir(dirname(target));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = name.startsWith(prefix) ? /^(\d+)-[0-9a-f]{8}$/u.exec(name.slice(prefix.length)) : null;
    if (match === null || running(Number(match[1]))) continue;
    await rm(join(dirname(target), name), { recursive: true, force: true });
    removed.push(name);
    note?.(`iki: note: removed ${join(dirname(target), name)}, left by an interrupted run\n`);
  }
  return removed;
}

/** A failure to create `temp` for `target`, named by the target (the temporary name means nothing to the user). */
function cannotWrite(target: string, error: unknown): unknown {
  return isSystemError(error) ? new CliError('IO_ERROR', `cannot write ${target}: ${systemReason(error)}`) : error;
}

/** Refuses `-` as an output: iki writes files, never standard output. */
function outputName(target: string): void {
  if (target === '-') throw new UsageError('writing to standard output ("-") is not supported; give a file name');
}

async function kindOf(path: string): Promise<'none' | 'file' | 'dir' | 'other'> {
  try {
    const info = await lstat(path);
    return info.isDirectory() ? 'dir' : info.isFile() ? 'file' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'none';
    throw error;
  }
}

/** Refuses an existing output file unless `force`; a folder or special file is never replaced. */
export async function checkFileTarget(target: string, force: boolean): Promise<void> {
  outputName(target);
  if ((await kindOf(dirname(target))) !== 'dir') throw new CliError('NOT_FOUND', `the folder of ${target} does not exist`);
  const kind = await kindOf(target);
  if (kind === 'file' && !force) throw new CliError('OUTPUT_EXISTS', `${target} exists; add --force to replace it`);
  if (kind === 'dir' || kind === 'other') throw new CliError('OUTPUT_EXISTS', `${target} exists and is not a regular file`);
}

/**
 * Writes `target` through `write`, which fills the open temporary file. The file gets exactly
 * `mode` when one is given (e.g. 0o600 for a key, whatever the umask), else the usual
 * 0o666 less the umask; it replaces an existing target only when `force`. `note` hears of
 * stale temporaries removed.
 */
export async function writeFileAtomic(target: string, force: boolean, mode: number | undefined,
  write: (file: FileHandle) => Promise<void>, note?: (text: string) => void): Promise<void> {
  await checkFileTarget(target, force);
  await removeStaleTemps(target, note);
  const temp = tempPath(target);
  track(temp);
  try {
    const file = await open(temp, 'wx', mode ?? 0o666).catch((error: unknown) => { throw cannotWrite(target, error); });
    try {
      await write(file);
      if (mode !== undefined) await file.chmod(mode);
      await file.sync();
    } finally {
      await file.close();
    }
    interruption.throwIfAborted();
    if (force) {
      await rename(temp, target);
    } else {
      // link() refuses an existing target, so a file that appeared meanwhile is never clobbered.
      await link(temp, target).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') throw new CliError('OUTPUT_EXISTS', `${target} exists; add --force to replace it`);
        // File systems without hard links: check again, then rename (a narrow race remains).
        if (!NO_LINKS.has(error.code ?? '')) throw error;
        await checkFileTarget(target, false);
        await rename(temp, target);
      });
    }
  } finally {
    await unlink(temp).catch(() => undefined);
    untrack(temp);
  }
}

/** Writes all of a byte stream into an open file. */
export async function writeStream(file: FileHandle, stream: ReadableStream<Uint8Array>): Promise<number> {
  const reader = stream.getReader();
  let bytes = 0;
  try {
    for (;;) {
      interruption.throwIfAborted();
      const { done, value } = await reader.read();
      if (done) return bytes;
      await file.write(value);
      bytes += value.length;
    }
  } finally {
    reader.releaseLock();
  }
}

/** A folder being filled before it moves to its target. */
export interface TempFolder {
  readonly path: string;
  /** Moves the contents into the target; after this the temporary folder is gone. */
  commit(): Promise<void>;
  /** Removes the temporary folder and everything in it. */
  discard(): Promise<void>;
}

async function isEmptyDir(path: string): Promise<boolean> {
  return (await readdir(path)).length === 0;
}

/** Moves every file of `from` into `to`, replacing files of the same name (merge). */
async function mergeInto(from: string, to: string): Promise<void> {
  for (const item of await readdir(from, { withFileTypes: true })) {
    const source = join(from, item.name);
    const target = join(to, item.name);
    if (item.isDirectory()) {
      const kind = await kindOf(target);
      if (kind === 'none') await rename(source, target);
      else if (kind === 'dir') await mergeInto(source, target);
      else throw new CliError('OUTPUT_EXISTS', `${target} exists and is not a folder`);
    } else {
      if ((await kindOf(target)) === 'dir') throw new CliError('OUTPUT_EXISTS', `${target} exists and is a folder`);
      await rename(source, target);
    }
  }
}

/**
 * Checks that a folder can be filled for `target`: refuses a target that is a file, or a
 * non-empty folder unless `force`, and removes stale temporaries of it (`note` hears of
 * them). Nothing is created yet.
 */
export async function checkFolderTarget(target: string, force: boolean, note?: (text: string) => void): Promise<void> {
  outputName(target);
  const kind = await kindOf(target);
  if (kind === 'file' || kind === 'other') throw new CliError('OUTPUT_EXISTS', `${target} exists and is not a folder`);
  if (kind === 'dir' && !force && !(await isEmptyDir(target))) {
    throw new CliError('OUTPUT_EXISTS', `${target} is not empty; add --force to write into it`);
  }
  await removeStaleTemps(target, note);
}

/**
 * Starts filling a folder for `target` (after {@link checkFolderTarget}'s checks, made again);
 * with `force` the files are merged into it at commit (same names replaced, other files
 * kept: nothing of the user's is deleted).
 */
export async function tempFolderFor(target: string, force: boolean): Promise<TempFolder> {
  await checkFolderTarget(target, force);
  const path = tempPath(target);
  try {
    await mkdir(dirname(target), { recursive: true });
    track(path);
    await mkdir(path, { mode: 0o700 });
  } catch (error) {
    untrack(path);
    throw cannotWrite(target, error);
  }
  const discard = async () => {
    await rm(path, { recursive: true, force: true });
    untrack(path);
  };
  const commit = async () => {
    interruption.throwIfAborted();
    const now = await kindOf(target);
    if (now === 'dir' && (await isEmptyDir(target))) await rmdir(target);
    if ((await kindOf(target)) === 'none') await rename(path, target);
    else if (force && now === 'dir') await mergeInto(path, target);
    else throw new CliError('OUTPUT_EXISTS', `${target} appeared while unpacking; add --force to write into it`);
    await discard();
  };
  return { path, commit, discard };
}
