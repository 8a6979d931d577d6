// The `iki` CLI: help, version and exit codes, in-process and as the installed bin (`npx iki`
// from the repository root, after `make build`).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { expectFailure, iki, ROOT } from './cli-helpers.js';

vi.setConfig({ testTimeout: 30_000 });

const pkgVersion = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const COMMANDS = ['keygen', 'register-key', 'pack', 'inspect', 'verify', 'unpack', 'watermark', 'serve'];

describe('iki CLI', () => {
  it('prints usage listing every command for --help and exits 0', async () => {
    const { code, out, err } = await iki(['--help']);
    expect(code).toBe(0);
    expect(out).toMatch(/^Usage: iki <command>/u);
    expect(out).toContain('serve --port');
    for (const command of COMMANDS) expect(out).toMatch(new RegExp(`^  ${command} `, 'mu'));
    expect(err).toBe('');
  });

  it('has --help on every command', async () => {
    for (const command of COMMANDS) {
      const { code, out, err } = await iki([command, '--help']);
      expect({ command, code, err }).toEqual({ command, code: 0, err: '' });
      expect(out).toMatch(new RegExp(`^Usage: iki ${command}`, 'u'));
    }
  });

  it('prints usage and exits 2 with no arguments', async () => {
    expect((await iki([])).code).toBe(2);
  });

  it('prints the package and core versions', async () => {
    const { code, out } = await iki(['--version']);
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`^iki ${pkgVersion} \\(core \\d+\\.\\d+\\.\\d+\\)\n$`, 'u'));
  });

  it('rejects an unknown command or option with exit 2 and one line on stderr', async () => {
    const unknown = await iki(['frobnicate']);
    expectFailure(unknown, 'USAGE', 2);
    expect(unknown.out).toBe('');
    expect(unknown.err).toContain('unknown command "frobnicate"; run iki --help for the list of commands');
    expectFailure(await iki(['inspect', '--no-such-option', 'x.iki']), 'USAGE', 2);
    expectFailure(await iki(['serve', '--port', 'eighty']), 'USAGE', 2);
    expectFailure(await iki(['serve', '--port', '70000']), 'USAGE', 2);
  });

  it('runs as the npx bin from the repository root', () => {
    const out = execFileSync('npx', ['--no-install', 'iki', '--version'], { cwd: ROOT, encoding: 'utf8' });
    expect(out).toMatch(new RegExp(`^iki ${pkgVersion} \\(core \\d+\\.\\d+\\.\\d+\\)\n$`, 'u'));
  });
});
