// The `iki` CLI: help, version and exit codes, in-process and as the
// installed bin (`npx iki` from the repository root, after `make build`).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';

const pkgVersion = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe('iki CLI', () => {
  it('prints usage for --help and exits 0', async () => {
    const { code, out, err } = await run(['--help']);
    expect(code).toBe(0);
    expect(out).toMatch(/^Usage: iki <command>/);
    expect(out).toContain('serve --port');
    expect(err).toBe('');
  });

  it('prints usage and exits 2 with no arguments', async () => {
    expect((await run([])).code).toBe(2);
  });

  it('prints the package and core versions', async () => {
    const { code, out } = await run(['--version']);
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`^iki ${pkgVersion} \\(core \\d+\\.\\d+\\.\\d+\\)\n$`));
  });

  it('rejects an unknown command with exit 2 on stderr', async () => {
    const { code, out, err } = await run(['frobnicate']);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toContain("unknown command 'frobnicate'");
  });

  it('runs as the npx bin from the repository root', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const out = execFileSync('npx', ['--no-install', 'iki', '--version'], { cwd: root, encoding: 'utf8' });
    expect(out).toMatch(new RegExp(`^iki ${pkgVersion} \\(core \\d+\\.\\d+\\.\\d+\\)\n$`));
  });
});
