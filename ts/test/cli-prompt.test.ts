// The password prompt: no echo, editing keys, cancel, NFC, twice for a new password; on a fake
// terminal stream, and once through a real pseudo-terminal (util-linux `script`) against the
// built binary, checking that the typed password never appears on the terminal.
import { spawn, spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CliError } from '../src/cli/errors.js';
import type { CliIo, TtyInput } from '../src/cli/io.js';
import { promptNewPassword, readHidden, readPasswordFile } from '../src/cli/prompt.js';
import { writeProjectFolder } from '../../tests/fixtures/packages.mjs';
import { BIN, iki } from './cli-helpers.js';

// Spawned binaries and Argon2id (64 MiB per password) take seconds on a busy machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

/** A terminal input that records raw-mode changes; `type()` delivers keystrokes. */
class FakeTty extends EventEmitter implements TtyInput {
  readonly isTTY = true;
  isRaw = false;
  readonly modes: boolean[] = [];
  paused = true;
  setRawMode(mode: boolean) {
    this.isRaw = mode;
    this.modes.push(mode);
    return this;
  }
  setEncoding() {
    return this;
  }
  resume() {
    this.paused = false;
    return this;
  }
  pause() {
    this.paused = true;
    return this;
  }
  /** Types `chunks` once the prompt listens, one data event each. */
  type(...chunks: string[]) {
    queueMicrotask(() => chunks.forEach((c) => this.emit('data', c)));
  }
}

function prompt(tty: FakeTty, ...keys: string[]) {
  let shown = '';
  tty.type(...keys);
  return { result: readHidden('Password: ', tty, (t) => (shown += t)), shown: () => shown };
}

describe('readHidden on a fake terminal', () => {
  it('reads a line in raw mode, echoes nothing and restores the terminal', async () => {
    const tty = new FakeTty();
    const p = prompt(tty, 'hun', 'ter2', '\r');
    expect(await p.result).toBe('hunter2');
    expect(p.shown()).toBe('Password: \n');
    expect(tty.modes).toEqual([true, false]);
    expect(tty.paused).toBe(true);
    expect(tty.listenerCount('data')).toBe(0);
  });

  it('handles Backspace, Ctrl-U and escape sequences, and returns NFC', async () => {
    const tty = new FakeTty();
    const p = prompt(tty, 'xyz\u0015', 'ab\u007fc', '\u001b[A', 'e\u0301\n');
    expect(await p.result).toBe('ac\u00e9');
  });

  it('cancels on Ctrl-C and on end of input, restoring the terminal', async () => {
    for (const finish of [(t: FakeTty) => t.type('abc\u0003'), (t: FakeTty) => queueMicrotask(() => t.emit('end'))]) {
      const tty = new FakeTty();
      const result = readHidden('Password: ', tty, () => undefined);
      finish(tty);
      const error = await result.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CliError);
      expect(error).toMatchObject({ code: 'CANCELLED', exitCode: 130 });
      expect(tty.isRaw).toBe(false);
    }
  });

  it('refuses to prompt when the input is not a terminal', async () => {
    const notTty = Object.assign(new FakeTty(), { isTTY: false }) as unknown as TtyInput;
    await expect(readHidden('Password: ', notTty, () => undefined)).rejects.toMatchObject({ code: 'USAGE', exitCode: 2 });
  });

  it('asks twice for a new password and refuses a mismatch or an empty one', async () => {
    const io = (tty: FakeTty): CliIo => ({ out: () => undefined, err: () => undefined, stdin: tty });
    const same = new FakeTty();
    same.type('s3cret\r');
    const first = promptNewPassword(io(same));
    setTimeout(() => same.emit('data', 's3cret\r'), 5);
    expect(await first).toBe('s3cret');
    const differ = new FakeTty();
    differ.type('one\r');
    const second = promptNewPassword(io(differ));
    setTimeout(() => differ.emit('data', 'two\r'), 5);
    await expect(second).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const empty = new FakeTty();
    empty.type('\r');
    await expect(promptNewPassword(io(empty))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

describe('password files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'iki-pw-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the first line, without CR, in NFC, and refuses empty or non-UTF-8 lines', async () => {
    const file = join(dir, 'pw');
    await writeFile(file, 'cafe\u0301 au lait\r\nignored\n');
    expect(await readPasswordFile(file)).toBe('caf\u00e9 au lait');
    await writeFile(file, '\nsecond');
    await expect(readPasswordFile(file)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await writeFile(file, Uint8Array.of(0xff, 0xfe, 0x0a));
    await expect(readPasswordFile(file)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

const hasScript = spawnSync('script', ['--version']).status === 0;

describe.skipIf(!hasScript)('the prompt on a real pseudo-terminal (script -qec)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'iki-pty-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('packs with a typed password that is never echoed and opens with the same password', async () => {
    const project = await writeProjectFolder(join(dir, 'project'), { blobBytes: 1000 });
    expect((await iki(['keygen', '-o', join(dir, 'k.key')])).code).toBe(0);
    const secret = 'pty-s3cret-wörd';
    const command = [process.execPath, BIN, 'pack', project.dir, '-k', join(dir, 'k.key'), '-o', join(dir, 'typed.iki'), '--password']
      .map((a) => `'${a.replace(/'/gu, "'\\''")}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    const waitFor = (text: string) => new Promise<void>((resolve) => {
      const check = () => screen.includes(text) && (child.stdout.off('data', check), resolve());
      child.stdout.on('data', check);
      check();
    });
    child.stdout.setEncoding('utf8').on('data', (t: string) => (screen += t));
    await waitFor('New password: ');
    child.stdin.write(`${secret}\r`);
    await waitFor('Repeat password: ');
    child.stdin.write(`${secret}\r`);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, screen).toBe(0);
    expect(screen).toContain('encrypted for a password');
    expect(screen).not.toContain('pty-s3cret');
    await writeFile(join(dir, 'pw'), `${secret}\n`);
    expect((await iki(['verify', join(dir, 'typed.iki'), '--password-file', join(dir, 'pw')])).code).toBe(0);
  });
});
