/**
 * `iki serve` never orphans the service (issue 23 item 4): after kill -9 of the CLI process,
 * the service it started stops by itself (its IPC channel to the CLI closes) and frees its
 * port. The service runs on the test PostgreSQL server (a PGlite first start takes ~15 s of
 * CPU that says nothing about this).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freshPostgres, postgresServer } from './helpers/databases.js';

const CLI = fileURLToPath(new URL('../../ts/dist/cli/main.js', import.meta.url));

/** The children of `pid` (Linux: /proc/<pid>/task/<pid>/children). */
function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

describe.skipIf(postgresServer() === '' || process.platform !== 'linux')('iki serve', () => {
  it('kill -9 of the CLI leaves no service process and frees the port', async () => {
    const pg = await freshPostgres();
    const dataDir = await mkdtemp(join(tmpdir(), 'iki-orphan-'));
    const cli = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data', dataDir], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', DATABASE_URL: pg.url,
        IKI_ROOT_SECRET: randomBytes(32).toString('base64url'), IKI_PUBLIC_URL: 'http://iki.test',
        IKI_BLOB_STORE: 'postgres', IKI_WORKERS: '1', IKI_DRAIN_DELAY_SECONDS: '0' },
    });
    let service: number | undefined;
    try {
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        cli.once('exit', (code) => reject(new Error(`iki serve exited (${code}): ${stderr}`)));
        cli.stderr?.setEncoding('utf8').on('data', (text: string) => {
          stderr += text;
          const ready = /listening on (http:\/\/[0-9.:]+);/.exec(stderr);
          if (ready?.[1] !== undefined) resolve(ready[1]);
        });
      });
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      [service] = childrenOf(cli.pid as number);
      expect(service).toBeGreaterThan(0);

      const exited = new Promise((resolve) => cli.once('exit', resolve));
      cli.kill('SIGKILL');
      await exited;
      expect(await until(() => !existsSync(`/proc/${service}`), 15_000)).toBe(true);
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    } finally {
      if (service !== undefined && existsSync(`/proc/${service}`)) process.kill(service, 'SIGKILL');
      await pg.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
