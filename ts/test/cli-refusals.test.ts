// Refusals of the iki CLI binary (ts/dist, `make build`) on hostile and mistaken input: the
// bounds of a password unlock, interruptions that leave nothing behind (and the next run
// cleaning what a killed one left), exact codes, messages that name what is at fault, and a
// signer's account claim that is never shown as verified when it was not checked.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { writeModelPackage } from '../../tests/fixtures/packages.mjs';
import { encodePng } from '../../tests/fixtures/png.mjs';
import { type NewEntry, type SignerInfo } from '../src/container.js';
import { SigningKey } from '../src/keys.js';
import { loadWasm } from '../src/wasm.js';
import { BIN, expectFailure, iki, ROOT, spawnIki } from './cli-helpers.js';
import { FAKE_SEED, PASSWORD, entry, imageEntry, options, sample, writeAll } from './container-support.js';
import { joinChunks, resign, slotsOf, splitChunks, vectorBytes, withCost, withSlots } from './hostile-files.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let root: string;
let key: SigningKey;
const at = (name: string) => join(root, name);

beforeAll(async () => {
  await loadWasm();
  root = await mkdtemp(join(tmpdir(), 'iki-refusals-'));
  key = SigningKey.fromSeed(FAKE_SEED);
  await writeFile(at('pw'), `${PASSWORD}\n`);
  await writeFile(at('wrong-pw'), 'not the password\n');
  expect((await iki(['keygen', '-o', at('signing.key')])).code).toBe(0);
});
afterAll(async () => {
  key.free();
  await rm(root, { recursive: true, force: true });
});

/** A file of `entries` signed as `signer` (a device key by default). */
async function container(name: string, entries: NewEntry[], extra: { kind?: 'project' | 'model'; signer?: SignerInfo; chunkSize?: number } = {}) {
  const kind = extra.kind ?? 'project';
  const bytes = await writeAll(entries, options(kind, key, { chunkSize: extra.chunkSize ?? 4096, ...(extra.signer ? { signer: extra.signer } : {}) }));
  await writeFile(at(name), bytes);
  return at(name);
}

/** `iki verify` of the vector `name`, with the password file, fails with `code` saying `text`. */
async function verifyRefuses(name: string, code: string, text: string): Promise<void> {
  await writeFile(at(`${name}.iki`), vectorBytes(name));
  const run = await spawnIki(['verify', at(`${name}.iki`), '--password-file', at('pw')]);
  expectFailure(run, code);
  expect(run.err).toContain(text);
}

/** Names in `dir` that are temporaries of iki (atomic.ts). */
async function temporaries(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.includes('.iki-tmp-'));
}

describe('a password unlock is bounded', () => {
  it('never tries a fifth password slot', async () => {
    await verifyRefuses('keys_password_slot_beyond_four', 'LIMIT_EXCEEDED', 'the file has 5 password slots and a reader tries at most 4');
  });

  it('never derives the 63 ceiling slots that follow a derived one, and leaves nothing behind', async () => {
    const file = vectorBytes('ok_password_project');
    const [cheap] = slotsOf(splitChunks(file).chunks[1]!.payload) as [Uint8Array];
    const hostile = withSlots(file, [cheap, ...Array.from({ length: 63 }, () => withCost(cheap, 262_144, 10))]);
    await writeFile(at('budget.iki'), hostile);
    const started = Date.now();
    const run = await spawnIki(['unpack', at('budget.iki'), '-o', at('budget-out'), '--password-file', at('wrong-pw')]);
    expectFailure(run, 'LIMIT_EXCEEDED');
    expect(run.err).toContain('beyond its budget of 2621440 (max_unlock_argon2_kib_passes)');
    // One 8 KiB derivation instead of 63 at 256 MiB x 10 passes (about 7 s each here).
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await readdir(root)).filter((n) => n.includes('budget-out'))).toEqual([]);
  });
});

describe('interrupting unpack', () => {
  let big: string;
  beforeAll(async () => {
    // 32 MiB in 4 KiB chunks: long enough to interrupt once the temporary folder exists.
    big = await container('big.iki', [entry('big.bin', 'stored', new Uint8Array(32 * 1024 * 1024).fill(7))]);
  });

  /** Starts `iki unpack big -o <out>` and sends `signal` once its temporary folder exists. */
  async function interrupt(out: string, signal: NodeJS.Signals): Promise<{ code: number | null; signal: string | null; err: string }> {
    const child = spawn(process.execPath, [BIN, 'unpack', big, '-o', at(out)], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (t: string) => (err += t));
    const exited = once(child, 'exit');
    for (let waited = 0; (await temporaries(root)).every((n) => !n.startsWith(`.${out}.`)); waited += 5) {
      if (waited > 20_000 || child.exitCode !== null) throw new Error(`no temporary folder appeared: ${err}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill(signal);
    const [code, by] = (await exited) as [number | null, string | null];
    return { code, signal: by, err };
  }

  it('removes the unfinished folder on SIGTERM and SIGINT, with one CANCELLED line', async () => {
    for (const [signal, status] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
      const out = `stopped-${signal}`;
      const run = await interrupt(out, signal);
      expect(run.code, run.err).toBe(status);
      expect(run.err).toBe(`iki: CANCELLED: stopped by ${signal}; the unfinished output was removed\n`);
      expect((await readdir(root)).filter((n) => n.includes(out)), run.err).toEqual([]);
    }
  });

  it('leaves a temporary folder on SIGKILL, which the next run to that folder removes', async () => {
    const run = await interrupt('killed', 'SIGKILL');
    expect(run.signal).toBe('SIGKILL');
    const [left] = (await temporaries(root)).filter((n) => n.startsWith('.killed.'));
    expect(left).toBeDefined();
    const small = await container('small.iki', [entry('a.txt', 'deflate', sample(100, 1))]);
    const next = await spawnIki(['unpack', small, '-o', at('killed')]);
    expect(next.code, next.err).toBe(0);
    expect(next.err).toBe(`iki: note: removed ${at(left as string)}, left by an interrupted run\n`);
    expect(next.out).toContain('1 file;');
    expect(await temporaries(root)).toEqual([]);
    expect(await readdir(at('killed'))).toEqual(['a.txt']);
  });

  it('ends at once on SIGINT during a password\'s key derivation, with nothing on disk', async () => {
    const file = vectorBytes('ok_password_project');
    const [slot] = slotsOf(splitChunks(file).chunks[1]!.payload) as [Uint8Array];
    await writeFile(at('ceiling.iki'), withSlots(file, [withCost(slot, 262_144, 10)]));
    const child = spawn(process.execPath, [BIN, 'unpack', at('ceiling.iki'), '-o', at('ceiling-out'), '--password-file', at('pw')],
      { cwd: ROOT, stdio: 'ignore' });
    const exited = once(child, 'exit');
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // well into the 256 MiB x 10 derivation
    const signalled = Date.now();
    child.kill('SIGINT');
    const [, by] = (await exited) as [number | null, string | null];
    expect(by).toBe('SIGINT'); // the default action: no handler holds the process until the derivation ends
    expect(Date.now() - signalled).toBeLessThan(1_000);
    expect((await readdir(root)).filter((n) => n.includes('ceiling-out'))).toEqual([]);
  });
});

describe('codes that say what happened', () => {
  it('names a missing KEYS instead of the MANI found in its place', async () => {
    await verifyRefuses('keys_missing', 'CHUNK_ORDER', 'chunk KEYS missing: found MANI in its place');
  });

  it('calls a model cut to 5, 6 or 7 bytes TRUNCATED whatever its name', async () => {
    const model = vectorBytes('ok_plain_model');
    for (const length of [5, 6, 7]) {
      await writeFile(at(`cut-${length}.bin`), model.subarray(0, length));
      expectFailure(await spawnIki(['verify', at(`cut-${length}.bin`)]), 'TRUNCATED');
    }
    expectFailure(await spawnIki(['verify', at('cut-5.bin'), '--json']), 'TRUNCATED');
  });

  it('refuses a 60000 x 60000 texture at its manifest in verify, inspect and unpack', async () => {
    const file = await writeAll([imageEntry('t.png', 4, 4, 1)], options('model', key));
    const parts = splitChunks(file);
    const mani = parts.chunks[1]!;
    const manifest = JSON.parse(Buffer.from(mani.payload).toString('utf8')) as { entries: NewEntry[] };
    Object.assign(manifest.entries[0]!, { size: 60_000 * 60_000 * 4, meta: { kind: 'texture', width: 60_000, height: 60_000, source: 'image/png' } });
    mani.payload = new Uint8Array(Buffer.from(JSON.stringify(manifest)));
    await writeFile(at('bomb.ikm'), joinChunks(parts));
    for (const command of [['verify'], ['inspect'], ['unpack', '-o', at('bomb-out')]]) {
      const run = await spawnIki([command[0]!, at('bomb.ikm'), ...command.slice(1)]);
      expectFailure(run, 'TOO_LARGE');
      expect(run.err).toContain('60000 x 60000 is beyond iki\'s textures of at most 16384 pixels a side');
    }
    expect((await readdir(root)).filter((n) => n.includes('bomb-out'))).toEqual([]);
  });

  it('packs a PNG texture 16384 pixels wide and refuses one of 16385 as TOO_LARGE, not NOT_PNG', async () => {
    const model = await writeModelPackage(at('wide-model'));
    const texture = join(model.dir, model.textures[0] as string);
    await writeFile(texture, encodePng(16_384, 1, new Uint8Array(16_384 * 4)));
    const ok = await spawnIki(['pack', model.dir, '--key', at('signing.key'), '-o', at('wide.ikm')]);
    expect(ok.code, ok.err).toBe(0);
    await writeFile(texture, encodePng(16_385, 1, new Uint8Array(16_385 * 4)));
    const run = await spawnIki(['pack', model.dir, '--key', at('signing.key'), '-o', at('wider.ikm')]);
    expectFailure(run, 'TOO_LARGE');
    expect(run.err).toContain('16385 x 1 is beyond');
  });

  it('names the missing kind in a signer JSON', async () => {
    const file = await writeAll([entry('a', 'stored', sample(10, 1))], options('project', key));
    const parts = splitChunks(file);
    const sign = parts.chunks.at(-1)!;
    const at_ = Buffer.from(sign.payload).indexOf('"kind"');
    sign.payload.set(Buffer.from('"kynd"'), at_);
    await writeFile(at('no-kind.iki'), resign(joinChunks(parts), FAKE_SEED));
    const run = await spawnIki(['verify', at('no-kind.iki')]);
    expectFailure(run, 'MALFORMED_CHUNK');
    expect(run.err).toContain('signer json has no kind');
  });
});

describe('messages a new user can act on', () => {
  it('name the file and never a temporary name', async () => {
    await mkdir(at('a-folder'), { recursive: true });
    const file = await container('one.iki', [entry('only.txt', 'deflate', sample(50, 2))]);
    const folderPassword = await spawnIki(['verify', file, '--password-file', at('a-folder')]);
    expectFailure(folderPassword, 'IO_ERROR');
    expect(folderPassword.err).toContain(`${at('a-folder')}: is a folder, not a file`);
    // A name that fits, whose temporary name (longer) does not: the error names the target.
    const long = at('o'.repeat(240));
    const tooLong = await spawnIki(['unpack', file, '-o', long]);
    expectFailure(tooLong, 'IO_ERROR');
    expect(tooLong.err).toContain(`cannot write ${long}: name too long`);
    expect(tooLong.err).not.toContain('iki-tmp');
  });

  it('say what is wrong with the arguments', async () => {
    const file = await container('entry.iki', [entry('only.txt', 'deflate', sample(50, 2))]);
    const one = await spawnIki(['verify', file]);
    expect(one.out).toContain('(1 entry)');
    const notFolder = await spawnIki(['pack', file, '--key', at('signing.key'), '-o', at('x.iki')]);
    expectFailure(notFolder, 'NOT_A_FOLDER');
    expect(notFolder.err).toContain(`${file} is not a folder`);
    const stdin = await spawnIki(['verify', '-']);
    expectFailure(stdin, 'USAGE', 2);
    expect(stdin.err).toContain('standard input ("-") is not supported here');
    expectFailure(await spawnIki(['version', 'extra']), 'USAGE', 2);
    await writeFile(at('in.png'), encodePng(64, 64, sample(64 * 64 * 4, 3, true)));
    const jpg = await spawnIki(['watermark', 'embed', '--key', 'a'.repeat(64), '--id', 'b'.repeat(16), at('in.png'), at('out.jpg')]);
    expectFailure(jpg, 'USAGE', 2);
    expect(jpg.err).toContain('name the output .png');
    expect((await readdir(root)).includes('out.jpg')).toBe(false);
  });
});

describe('the signer\'s claim', () => {
  it('verify says an account claim with a malformed certificate is unverified, in text and JSON', async () => {
    const signer: SignerInfo = { kind: 'account', account: 'acct_claimed', certificate: 'AAAA' };
    const file = await container('account.iki', [entry('a', 'stored', sample(10, 1))], { signer });
    const text = await spawnIki(['verify', file]);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toMatch(/claims account acct_claimed: UNVERIFIED \(the key certificate is malformed \(.+\)\)/u);
    const json = JSON.parse((await spawnIki(['verify', file, '--json'])).out) as { signer: { verdict: unknown } };
    expect(json.signer.verdict).toEqual({ claim: 'account', verified: false, reason: expect.stringContaining('malformed') });
    const device = await spawnIki(['verify', await container('device.iki', [entry('a', 'stored', sample(10, 1))])]);
    expect(device.out).toContain('no account is claimed');
  });
});
