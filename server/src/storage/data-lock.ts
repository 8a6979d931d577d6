/**
 * One writer per embedded (PGlite) data directory (issue 16 item 1). PGlite is PostgreSQL run
 * in this process without a postmaster, so nothing in it stops a second process from opening
 * the same files; two writers silently lose each other's commits. `<dataDir>/db.lock` names the
 * holder (pid, host, start time); it is created exclusively (`wx`), so of two processes
 * starting at once exactly one gets it, and the other refuses with `DataDirLocked` naming the
 * holder.
 *
 * A lock left by a process that died (same host, pid no longer running) is stale and taken
 * over: it is first renamed aside to a name unique to this process (rename is atomic, so of
 * several processes taking over at once one moves it and the others find nothing to move),
 * its content is compared with the stale one that was judged dead, and only then is a new lock
 * created exclusively. A lock from another host is never judged: its pid means nothing here,
 * so the refusal says to remove it by hand once that host is known to be down.
 */
import { randomBytes } from 'node:crypto';
import { link, readFile, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createWhole } from './create-whole.js';

/** What the lock file holds. */
export interface LockHolder {
  pid: number;
  host: string;
  startedAt: string;
}

/** A second process, or a live one, holds the data directory. */
export class DataDirLocked extends Error {
  constructor(readonly lockPath: string, readonly holder: LockHolder | undefined) {
    super(holder === undefined
      ? `the data directory is locked by ${lockPath} (unreadable); another iki process may be using it`
      : `the data directory is in use by process ${holder.pid} on host ${holder.host} (since ${holder.startedAt}); `
        + `one process per embedded database: stop it, or use PostgreSQL (DATABASE_URL) for several instances. `
        + (holder.host === hostname() ? '' : `If ${holder.host} is down, remove ${lockPath}.`));
    this.name = 'DataDirLocked';
  }
}

/** A held lock; `release` removes it (only if it is still this process's). */
export interface DataDirLock {
  readonly path: string;
  /** The dead holder whose stale lock this process took over (for the log), if any. */
  readonly tookOver: LockHolder | undefined;
  release(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parse(text: string): LockHolder | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockHolder>;
    if (typeof v.pid === 'number' && Number.isInteger(v.pid) && v.pid > 0 && typeof v.host === 'string'
      && typeof v.startedAt === 'string') return { pid: v.pid, host: v.host, startedAt: v.startedAt };
  } catch { /* not JSON: unreadable */ }
  return undefined;
}

/** Takes `<dir>/db.lock` for this process, taking over a stale one; throws `DataDirLocked`. */
export async function lockDataDir(dir: string, self: LockHolder = {
  pid: process.pid, host: hostname(), startedAt: new Date().toISOString(),
}): Promise<DataDirLock> {
  const path = join(dir, 'db.lock');
  const text = `${JSON.stringify(self)}\n`;
  let tookOver: LockHolder | undefined;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    if (await createWhole(path, text)) {
      return {
        path,
        tookOver,
        async release() {
          const now = await readFile(path, 'utf8').catch(() => undefined);
          if (now === text) await rm(path, { force: true });
        },
      };
    }
    const found = await readFile(path, 'utf8').catch(() => undefined);
    if (found === undefined) continue; // released meanwhile: try again
    const holder = parse(found);
    if (holder === undefined || holder.host !== self.host || alive(holder.pid)) {
      throw new DataDirLocked(path, holder);
    }
    // Stale: move it aside under a name only this process uses, then check what was moved.
    const aside = `${path}.stale.${process.pid}.${randomBytes(6).toString('hex')}`;
    try {
      await rename(path, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // another process took it over
      throw err;
    }
    const moved = await readFile(aside, 'utf8').catch(() => undefined);
    if (moved !== found) {
      // Another process took it over between the read and the rename: put its lock back.
      await link(aside, path).catch(() => {});
      await rm(aside, { force: true });
      const back = parse(moved ?? '');
      throw new DataDirLocked(path, back);
    }
    await rm(aside, { force: true });
    tookOver = holder;
  }
  throw new DataDirLocked(path, parse(await readFile(path, 'utf8').catch(() => '')));
}
