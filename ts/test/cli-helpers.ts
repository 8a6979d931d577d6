// Shared by the cli*.test.ts files: run the CLI in-process with captured output, or spawn the
// built binary (ts/dist/cli/main.js, from `make build`), and compare unpacked folders.
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
