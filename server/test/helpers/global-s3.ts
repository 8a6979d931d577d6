/**
 * Vitest global setup: an S3 protocol server for the S3 blob store's tests (issue 23 item 8):
 * moto's server (`moto_server`, Python), installed by `make setup` into
 * `target/s3-server/venv` from the pinned `scripts/s3-server/requirements.txt`. It listens on a
 * free port of 127.0.0.1 and keeps objects in memory; tests make a bucket each
 * (`helpers/s3.ts`). `IKI_TEST_S3_ENDPOINT` uses a server already running instead; no server
 * and no `IKI_SKIP_S3=1` fails the run, as a missing PostgreSQL does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    s3Endpoint: string;
  }
}

/** moto's server in the venv `make setup` makes. */
export const MOTO_SERVER = fileURLToPath(new URL('../../../target/s3-server/venv/bin/moto_server', import.meta.url));

/** A running S3 server: `stop` kills it (an outage), `start` brings it back on the same port, empty. */
export interface S3Server {
  endpoint: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

async function spawnMoto(port: number): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(MOTO_SERVER, ['-H', '127.0.0.1', '-p', String(port)],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  const found = await new Promise<number>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`moto_server did not start within 30 s:\n${seen}`)), 30_000);
    const read = (text: string) => {
      seen = (seen + text).slice(-4000);
      const m = /Running on http:\/\/127\.0\.0\.1:([0-9]+)/.exec(seen);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    // Both pipes are read to the end (moto logs every request), or a full pipe would stall it.
    child.stdout?.setEncoding('utf8').on('data', read);
    child.stderr?.setEncoding('utf8').on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`moto_server exited (${code}):\n${seen}`));
    });
  });
  return { child, port: found };
}

/** Starts moto's server on a free port (or `port`). */
export async function startS3Server(port = 0): Promise<S3Server> {
  if (!existsSync(MOTO_SERVER)) throw new Error(`no ${MOTO_SERVER}: run make setup`);
  let running = await spawnMoto(port);
  const fixed = running.port;
  return {
    endpoint: `http://127.0.0.1:${fixed}`,
    async stop() {
      const { child } = running;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    async start() {
      running = await spawnMoto(fixed);
    },
  };
}

/** What the global setup does: use a given server, skip on purpose, start one, or fail. */
export function s3Plan(env: NodeJS.ProcessEnv, installed: boolean):
  { use: string } | { skip: true } | { start: true } | { fail: string } {
  const given = env['IKI_TEST_S3_ENDPOINT'];
  if (given !== undefined && given !== '') return { use: given };
  if (env['IKI_SKIP_S3'] === '1') return { skip: true };
  if (installed) return { start: true };
  return { fail: `no S3 test server at ${MOTO_SERVER}: run \`make setup\` (it installs moto's server in a venv), `
    + 'set IKI_TEST_S3_ENDPOINT, or set IKI_SKIP_S3=1 to skip the S3 suites on purpose' };
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const plan = s3Plan(process.env, existsSync(MOTO_SERVER));
  if ('fail' in plan) throw new Error(plan.fail);
  if (!('start' in plan)) {
    project.provide('s3Endpoint', 'use' in plan ? plan.use : '');
    return undefined;
  }
  const server = await startS3Server();
  project.provide('s3Endpoint', server.endpoint);
  return () => server.stop();
}
