/**
 * Vitest global setup: provides a PostgreSQL server URL to the tests. Uses `DATABASE_URL` when
 * set; otherwise starts a throwaway server from Debian's binaries (initdb + pg_ctl, temporary
 * data directory, free port, 127.0.0.1 only, run as `postgres` when we are root because initdb
 * refuses root) and stops it afterwards. Tests never depend on a pre-started service.
 *
 * No PostgreSQL is not a reason to skip quietly: `make setup` installs Debian's `postgresql`
 * when no server binary is found, so a missing one fails the run here, unless `IKI_SKIP_PG=1`
 * says on purpose that the PostgreSQL suites are to be skipped.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

/** The bin directory of the newest PostgreSQL under `root` (Debian's layout), if any. */
export function postgresBin(root = '/usr/lib/postgresql'): string | undefined {
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^[0-9]+$/.test(v)) : [];
  return versions.sort((a, b) => Number(b) - Number(a)).map((v) => `${root}/${v}/bin`)
    .find((bin) => existsSync(`${bin}/initdb`) && existsSync(`${bin}/pg_ctl`));
}

/** Whether the PostgreSQL suites were skipped on purpose. */
export const skipPostgresOnPurpose = (env: NodeJS.ProcessEnv = process.env): boolean => env['IKI_SKIP_PG'] === '1';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function asPostgres(command: string, args: string[]): void {
  const root = process.getuid?.() === 0;
  const [file, argv] = root ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  execFileSync(file, argv, { stdio: 'pipe' });
}

/**
 * What the global setup does: use the given server, skip on purpose (IKI_SKIP_PG=1), start a
 * throwaway server from `bin`, or fail the run (no PostgreSQL and no one said to skip).
 */
export function postgresPlan(env: NodeJS.ProcessEnv, bin: string | undefined):
  { use: string } | { skip: true } | { start: string } | { fail: string } {
  const given = env['DATABASE_URL'];
  if (given !== undefined && given !== '') return { use: given };
  if (skipPostgresOnPurpose(env)) return { skip: true };
  if (bin !== undefined) return { start: bin };
  return { fail: 'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin: run `make setup` (it installs '
    + "Debian's postgresql), set DATABASE_URL, or set IKI_SKIP_PG=1 to skip the PostgreSQL suites on purpose" };
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const plan = postgresPlan(process.env, postgresBin());
  if ('fail' in plan) throw new Error(plan.fail);
  if (!('start' in plan)) {
    project.provide('postgresUrl', 'use' in plan ? plan.use : '');
    return undefined;
  }
  const bin = plan.start;
  const cluster = await startCluster(bin);
  project.provide('postgresUrl', cluster.url);
  return () => cluster.destroy();
}

/**
 * A throwaway PostgreSQL server of its own: `stop` and `start` it (outage tests), `freeze` it
 * (SIGSTOP to the postmaster and every backend: a hung server, whose sockets stay open and
 * whose kernel still accepts connections) and `thaw` it (SIGCONT), `destroy` it.
 */
export interface Cluster {
  url: string;
  stop(): void;
  start(): void;
  freeze(): void;
  thaw(): void;
  destroy(): void;
}

/** The postmaster named by `<data>/postmaster.pid` and its children (backends, background workers). */
function serverPids(data: string): number[] {
  const main = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d)).filter((pid) => {
    try {
      // Field 4 of /proc/<pid>/stat, after the command name in parentheses, is the parent.
      return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]) === main;
    } catch {
      return false;
    }
  }).map(Number);
  return [main, ...children];
}

/**
 * Starts a throwaway PostgreSQL server (temporary data directory, free port, 127.0.0.1 only,
 * fsync off).
 */
export async function startCluster(bin = postgresBin()): Promise<Cluster> {
  if (bin === undefined) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin');
  const dir = mkdtempSync(join(tmpdir(), 'iki-pg-'));
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
  const data = join(dir, 'data');
  const port = await freePort();
  asPostgres(`${bin}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const start = () => asPostgres(`${bin}/pg_ctl`, ['-D', data, '-w', '-l', join(dir, 'log'), '-o',
    `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c full_page_writes=off`, 'start']);
  const stop = () => asPostgres(`${bin}/pg_ctl`, ['-D', data, '-w', '-m', 'immediate', 'stop']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    freeze() {
      for (const pid of serverPids(data)) process.kill(pid, 'SIGSTOP');
    },
    thaw() {
      for (const pid of serverPids(data).reverse()) process.kill(pid, 'SIGCONT');
    },
    destroy() {
      try {
        stop();
      } catch {
        // Already stopped.
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
