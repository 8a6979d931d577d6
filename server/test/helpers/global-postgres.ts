/**
 * Vitest global setup: provides a PostgreSQL server URL to the tests. Uses `DATABASE_URL` when
 * set; otherwise starts a throwaway server from Debian's binaries (initdb + pg_ctl, temporary
 * data directory, free port, 127.0.0.1 only, run as `postgres` when we are root because initdb
 * refuses root) and stops it afterwards. Tests never depend on a pre-started service.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

const BIN = '/usr/lib/postgresql/15/bin';

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

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const given = process.env['DATABASE_URL'];
  if (given !== undefined && given !== '') {
    project.provide('postgresUrl', given);
    return undefined;
  }
  if (!existsSync(`${BIN}/initdb`)) {
    project.provide('postgresUrl', '');
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'iki-pg-'));
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
  const data = join(dir, 'data');
  const port = await freePort();
  asPostgres(`${BIN}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  asPostgres(`${BIN}/pg_ctl`, ['-D', data, '-w', '-l', join(dir, 'log'), '-o',
    `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c full_page_writes=off`, 'start']);
  project.provide('postgresUrl', `postgres://postgres@127.0.0.1:${port}/postgres`);
  return () => {
    try {
      asPostgres(`${BIN}/pg_ctl`, ['-D', data, '-w', '-m', 'immediate', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
