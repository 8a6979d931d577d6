// Shared by the cli*.test.ts files: run the CLI in-process with captured output, or spawn the
// built binary (ts/dist/cli/main.js, from `make build`), compare unpacked folders, and start the
// service in-process for the CLI to talk to.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { main } from '../src/cli/main.js';
import type { CliIo } from '../src/cli/io.js';
import { readTree } from '../../tests/fixtures/packages.mjs';
import { decodePng } from '../../tests/fixtures/png.mjs';

/** The built CLI. */
export const BIN = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs `iki argv` in this process; `io` adds a fake terminal when a test needs one. */
export async function iki(argv: string[], io: Partial<CliIo> = {}): Promise<Run> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), ...io });
  return { code, out, err };
}

/** Runs the built binary as a child process. */
export function spawnIki(argv: string[], options: { cwd?: string; input?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], { cwd: options.cwd ?? ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => (out += t));
    child.stderr.setEncoding('utf8').on('data', (t: string) => (err += t));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
    child.stdin.end(options.input ?? '');
  });
}

/** A failure as the CLI must report it: one `iki: CODE: message` line and no stack trace. */
export function expectFailure(run: Run, code: string, exitCode = 1): void {
  expect(run.code, `${run.err}${run.out}`).toBe(exitCode);
  const lines = run.err.trimEnd().split('\n');
  const last = lines.at(-1) ?? '';
  expect(last).toMatch(new RegExp(`^iki: ${code}: \\S`, 'u'));
  expect(run.err).not.toMatch(/^\s+at /mu);
  expect(run.err).not.toContain('Error:');
}

/**
 * Asserts that `unpacked` holds exactly the files `expected` lists from `source`, byte for
 * byte, except `textures`, which must decode to the same pixels.
 */
export async function expectSameFiles(source: string, unpacked: string, expected: string[], textures: string[] = []): Promise<void> {
  const tree = await readTree(unpacked);
  expect([...tree.keys()].sort()).toEqual([...expected].sort());
  for (const path of expected) {
    const original = new Uint8Array(await readFile(`${source}/${path}`));
    const written = tree.get(path) as Uint8Array;
    if (textures.includes(path)) {
      const [a, b] = [decodePng(original), decodePng(written)];
      expect({ width: b.width, height: b.height }).toEqual({ width: a.width, height: a.height });
      expect(Buffer.compare(Buffer.from(a.rgba), Buffer.from(b.rgba)), path).toBe(0);
    } else {
      expect(Buffer.compare(Buffer.from(original), Buffer.from(written)), path).toBe(0);
    }
  }
}

/** What the CLI tests use of server/src/main.ts (imported at run time, so ts/'s tsc does not compile the server). */
interface ServerModule {
  serve(options: Record<string, unknown>): Promise<{ url: string; close(): Promise<void> }>;
}
/** A log line of the in-process service. */
export interface LogLine { message: string; fields: Record<string, unknown> }

const SERVER_MAIN = new URL('../../server/src/main.ts', import.meta.url).href;

/**
 * The service in this process on an ephemeral port, its log lines pushed to `logs` (where the
 * tests find verification links), with fast password hashing (the production default is in
 * server/src/config.ts) and any other `config`.
 */
export async function startService(dataDir: string, logs: LogLine[], config: Record<string, unknown> = {}):
Promise<{ url: string; close(): Promise<void> }> {
  const { serve } = (await import(SERVER_MAIN)) as ServerModule;
  const push = (message: string, fields: Record<string, unknown> = {}) => void logs.push({ message, fields });
  return serve({ port: 0, dataDir, env: {}, logger: { info: push, warn: push, error: push },
    config: { passwordHashing: { memoryKiB: 256, iterations: 1, parallelism: 1 }, ...config } });
}
