/**
 * `make serve` as a person runs it, a second time (the build is current): it builds nothing,
 * says what it does, answers HTTP within 5 s, prints the address when ready and serves the
 * pages, their bundles and the `.wasm`. PORT= and IKI_PORT= both choose the port; set to
 * different values they are refused before anything starts. On the test PostgreSQL server
 * when there is one (PGlite's first start in a fresh folder takes ~10 s of CPU that says
 * nothing about the build), else on PGlite.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freshPostgres, postgresServer } from './helpers/databases.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** What the brief asks of a second start: the first HTTP answer within this. */
const SECOND_START_MS = 5_000;

/** The environment of a person's shell: no make state inherited from `make test`. */
function shellEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of ['MAKEFLAGS', 'MAKELEVEL', 'MFLAGS', 'PORT', 'IKI_PORT', 'DATA']) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Polls `url` until it answers at all (any status); resolves to that status. */
async function firstAnswer(url: string, deadline: number): Promise<number> {
  for (;;) {
    try {
      return (await fetch(url, { signal: AbortSignal.timeout(1000) })).status;
    } catch {
      if (Date.now() > deadline) throw new Error(`${url} did not answer`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('make serve', () => {
  it('a second start builds nothing, answers within 5 s and prints the address', async () => {
    // The precondition a person has after any earlier `make serve` or `make build`.
    const built = spawnSync('make', ['-s', 'build'], { cwd: REPO, env: shellEnv({}), encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    const data = await mkdtemp(join(tmpdir(), 'iki-make-serve-'));
    cleanups.push(() => rm(data, { recursive: true, force: true }));
    const env: Record<string, string> = { IKI_PORT: String(await freePort()), DATA: data };
    if (postgresServer() !== '') {
      const pg = await freshPostgres();
      cleanups.push(() => pg.drop());
      Object.assign(env, { DATABASE_URL: pg.url, IKI_ROOT_SECRET: randomBytes(32).toString('base64url'),
        IKI_PUBLIC_URL: `http://localhost:${env['IKI_PORT']}`, IKI_BLOB_STORE: 'postgres' });
    }
    const base = `http://127.0.0.1:${env['IKI_PORT']}`;
    const started = Date.now();
    // Its own process group, so one signal stops make, the CLI and (forwarded) the service.
    const child: ChildProcess = spawn('make', ['-s', 'serve'], { cwd: REPO, env: shellEnv(env), detached: true });
    let output = '';
    child.stdout?.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr?.on('data', (c: Buffer) => { output += c.toString(); });
    const exited = once(child, 'exit');
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(-(child.pid as number), 'SIGINT');
        await exited;
      }
    });

    const status = await firstAnswer(`${base}/`, started + 60_000);
    const answeredMs = Date.now() - started;
    process.stdout.write(`make serve: first answer (${status}) after ${answeredMs} ms\n`);
    expect(answeredMs).toBeLessThan(SECOND_START_MS);
    expect([200, 503]).toContain(status);
    await expect.poll(() => output, { timeout: 60_000, interval: 50 }).toContain('iki service ready at');
    process.stdout.write(`make serve: ready after ${Date.now() - started} ms\n`);

    expect(output).not.toMatch(/^build:/m);
    expect(output).toContain(`serve: starting the service on port ${env['IKI_PORT']} with its data in ${data}`);
    expect(output).toMatch(new RegExp(`iki service ready at http://localhost:${env['IKI_PORT']}/ \\(listening on ${base}; Ctrl-C stops it\\)`));
    for (const [path, type] of [['/player', 'text/html'], ['/assets/js/player.js', 'text/javascript'],
      ['/assets/js/license-worker.js', 'text/javascript'], ['/assets/pkg/iki_wasm_bg.wasm', 'application/wasm']]) {
      const answer = await fetch(`${base}${path}`);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-type'), path).toContain(type);
    }

    process.kill(-(child.pid as number), 'SIGINT');
    await exited;
  }, 90_000);

  it('refuses PORT and IKI_PORT set to different ports, saying so', () => {
    const run = spawnSync('make', ['-s', 'serve'], { cwd: REPO, env: shellEnv({ PORT: '8081', IKI_PORT: '8082' }), encoding: 'utf8' });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('serve: PORT=8081 and IKI_PORT=8082 disagree; set only one of them');
  }, 60_000);
});
