// The CLI's small parts: progress bars, option values, service URLs, error classification,
// certificate display and checks, and escaping of names that come from files.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { joinDashValues, parseChunkSize, parseCommand, parseHex } from '../src/cli/args.js';
import { parseCertificate } from '../src/cli/certificate.js';
import { isoTime, show } from '../src/cli/describe.js';
import { CliError, describeFailure, failureLine, UsageError } from '../src/cli/errors.js';
import { formatBytes, Progress } from '../src/cli/progress.js';
import { isLoopback, parseServiceUrl, showUrl } from '../src/cli/service-api.js';
import { checkCertificate, MAX_CLOCK_SKEW_MS, packSigner } from '../src/cli/signer.js';
import { IkiError } from '../src/errors.js';
import { PackageError } from '../src/package/errors.js';
import { loadWasm } from '../src/wasm.js';

// parseCertificate reads certificates with the core's parser, in WASM.
beforeAll(async () => {
  await loadWasm();
});

function fakeTerminal(isTTY: boolean) {
  const writes: string[] = [];
  return { output: { isTTY, columns: 80, write: (t: string) => writes.push(t) }, writes };
}

describe('Progress', () => {
  it('draws bytes done of total on a terminal after a short delay, at most every 100 ms, and erases itself', () => {
    let now = 1000;
    const { output, writes } = fakeTerminal(true);
    const bar = new Progress(output, 'packing', 4 * 1024 * 1024, () => now);
    bar.add(1024 * 1024);
    expect(writes).toEqual([]); // quick work shows nothing
    now += 300;
    bar.add(1024 * 1024);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/^\rpacking \[#+-+\]  50% 2\.0 MiB \/ 4\.0 MiB\u001b\[K$/u);
    now += 50;
    bar.add(1);
    expect(writes).toHaveLength(1);
    now += 100;
    bar.add(2 * 1024 * 1024 - 1);
    expect(writes[1]).toContain('100% 4.0 MiB / 4.0 MiB');
    bar.finish();
    expect(writes[2]).toBe('\r\u001b[K');
  });

  it('draws nothing when stderr is not a terminal', () => {
    let now = 0;
    const { output, writes } = fakeTerminal(false);
    const bar = new Progress(output, 'x', 10, () => now);
    now = 10_000;
    bar.add(10);
    bar.finish();
    expect(writes).toEqual([]);
  });

  it('fits a narrow terminal and formats sizes', () => {
    const bar = new Progress(undefined, 'reading', 0);
    expect(bar.render(20)).toMatch(/^reading \[#{10}\] 100% 0 B \/ 0 B$/u);
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GiB');
  });
});

describe('option values', () => {
  it('parses chunk sizes within the container limits', () => {
    expect(parseChunkSize('4096')).toBe(4096);
    expect(parseChunkSize('64K')).toBe(65536);
    expect(parseChunkSize('1MiB')).toBe(1048576);
    expect(parseChunkSize('16M')).toBe(16777216);
    for (const bad of ['4095', '16777217', '17M', '1.5M', '', 'lots']) expect(() => parseChunkSize(bad), bad).toThrow(UsageError);
  });

  it('takes a value that starts with a dash (one base64url key in 64 does) unless it is an option', () => {
    const options = { recipient: { type: 'string', multiple: true }, key: { type: 'string', short: 'k' }, force: { type: 'boolean' } } as const;
    const key = '-bxXX5hsYr5-E_bW0ZnETCApL2mL-TFK5XK7Ik1rwQs';
    const parsed = parseCommand(['--recipient', key, '-k', '-odd.key', '--recipient', '--x', 'dir'], options);
    expect(parsed.values).toMatchObject({ recipient: [key, '--x'], key: '-odd.key' });
    expect(parsed.positionals).toEqual(['dir']);
    // A missing value before one of the command's options stays a usage error.
    expect(() => parseCommand(['--key', '--force'], options)).toThrow(UsageError);
    expect(() => parseCommand(['--key', '-k', 'a'], options)).toThrow(UsageError);
    expect(() => parseCommand(['--key', '--json'], options)).toThrow(UsageError);
    expect(joinDashValues(['--key', '--recipient=x'], options)).toEqual(['--key', '--recipient=x']);
    // After `--` everything is positional, as before.
    expect(joinDashValues(['--', '--key', '-x'], options)).toEqual(['--', '--key', '-x']);
    expect(parseCommand(['--key', '-'], options).values.key).toBe('-');
  });

  it('takes a service base URL and says whether it stays on this machine', () => {
    expect(parseServiceUrl('http://127.0.0.1:8080').href).toBe('http://127.0.0.1:8080/');
    expect(parseServiceUrl('https://iki.example/base').href).toBe('https://iki.example/base/');
    expect(showUrl(parseServiceUrl('https://iki.example/base/'))).toBe('https://iki.example/base');
    for (const bad of ['iki.example', 'ftp://iki.example', 'https://u:p@iki.example', 'https://iki.example/?a=1', 'https://iki.example/#x']) {
      expect(() => parseServiceUrl(bad), bad).toThrow(UsageError);
    }
    expect(['http://localhost:1', 'http://127.0.0.2', 'http://[::1]:8080'].map((u) => isLoopback(parseServiceUrl(u)))).toEqual([true, true, true]);
    expect(isLoopback(parseServiceUrl('http://10.0.0.1'))).toBe(false);
  });

  it('parses hex of an exact length', () => {
    expect(parseHex('00ff10', 3, 'key')).toEqual(Uint8Array.of(0, 255, 16));
    expect(() => parseHex('00ff1', 3, 'key')).toThrow(/--key must be 6 hex digits/u);
    expect(() => parseHex('00ffzz', 3, 'key')).toThrow(UsageError);
  });
});

describe('failures', () => {
  it('classifies every kind of error into one line with a code', () => {
    expect(describeFailure(new IkiError('BAD_SIGNATURE', 'signature invalid'))).toEqual({ code: 'BAD_SIGNATURE', message: 'signature invalid: the file was modified after it was signed (or damaged); do not trust its content', exitCode: 1 });
    expect(describeFailure(new IkiError('DECRYPT_FAILED', 'decryption failed')).message).toContain('wrong password or key, or the file was changed');
    expect(describeFailure(new PackageError('NOT_PNG', 'x.png is not a PNG file'))).toMatchObject({ code: 'NOT_PNG', exitCode: 1 });
    expect(describeFailure(new UsageError('missing <file>'))).toMatchObject({ code: 'USAGE', exitCode: 2 });
    expect(describeFailure(new CliError('CANCELLED', 'cancelled', 130)).exitCode).toBe(130);
    const enoent = Object.assign(new Error("ENOENT: no such file or directory, open 'a.iki'"), { code: 'ENOENT', path: 'a.iki' });
    expect(describeFailure(enoent)).toEqual({ code: 'NOT_FOUND', message: 'a.iki: does not exist', exitCode: 1 });
    expect(describeFailure(Object.assign(new Error('x'), { code: 'EACCES', path: 'k' })).code).toBe('IO_ERROR');
    expect(describeFailure(Object.assign(new Error('x'), { code: 'ENXIO', syscall: 'open', path: '/dev/stdin' })))
      .toEqual({ code: 'IO_ERROR', message: '/dev/stdin: enxio (open)', exitCode: 1 });
    expect(describeFailure(Object.assign(new Error('decode failed'), { code: 'IMAGE_DECODE_FAILED' })).code).toBe('IMAGE_DECODE_FAILED');
    expect(describeFailure(new RangeError('size must be at most 5'))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(describeFailure(new Error('boom'))).toMatchObject({ code: 'INTERNAL', message: 'boom' });
    expect(describeFailure('thrown string').code).toBe('INTERNAL');
    expect(failureLine(describeFailure(new Error('two\n  lines')))).toBe('iki: INTERNAL: two lines\n');
  });
});

describe('display of what a file claims', () => {
  it('escapes control and bidi characters in names', () => {
    expect(show('evil\u001b[2Jname\u202e')).toBe('evil\\u{1b}[2Jname\\u{202e}');
    expect(show('héllo wörld')).toBe('héllo wörld');
  });

  it('shows any time a file can hold', () => {
    expect(isoTime(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoTime(2 ** 53 - 1)).toBe(`${2 ** 53 - 1} ms after 1970`);
  });

  function certificate(accountId: string, issued: bigint, expires: bigint, extra = 0): string {
    const id = new TextEncoder().encode(accountId);
    const bytes = new Uint8Array(1 + 64 + 2 + id.length + 16 + 64 + extra);
    const view = new DataView(bytes.buffer);
    bytes[0] = 1;
    bytes.fill(0x11, 1, 33);
    bytes.fill(0x22, 33, 65);
    view.setUint16(65, id.length, true);
    bytes.set(id, 67);
    view.setBigUint64(67 + id.length, issued, true);
    view.setBigUint64(75 + id.length, expires, true);
    return Buffer.from(bytes).toString('base64url');
  }

  it('reads a key certificate layout (docs/format.md 7.2) and refuses malformed ones', () => {
    const parsed = parseCertificate(certificate('acct_1', 1000n, 0n));
    expect(parsed).toMatchObject({ version: 1, accountId: 'acct_1', issuedMs: 1000, expiresMs: 0 });
    expect('issuerKey' in parsed && parsed.issuerKey).toEqual(new Uint8Array(32).fill(0x11));
    expect(parseCertificate(certificate('acct_1', 1000n, 0n, 1))).toEqual({ error: 'certificate layout' });
    expect(parseCertificate(certificate('a', 2n ** 60n, 0n))).toEqual({ error: 'time out of range' });
    expect(parseCertificate('not base64url!')).toEqual({ error: 'not base64url without padding' });
    expect(parseCertificate('AAAA')).toEqual({ error: 'unknown certificate version' });
  });

  it('refuses a certificate for another key, an expired one and one issued in the future before packing', () => {
    const subject = new Uint8Array(32).fill(0x22);
    const now = 1_700_000_000_000;
    const good = certificate('acct_1', BigInt(now - 1000), BigInt(now + 1000));
    expect(checkCertificate(good, 'c', subject, now)).toMatchObject({ accountId: 'acct_1' });
    expect(() => checkCertificate(good, 'c', new Uint8Array(32).fill(0x33), now)).toThrow(/c certifies the key IiIi.*, not the signing key MzMz/u);
    expect(() => checkCertificate(good, 'c', subject, now + 1000)).toThrow(/c expired on/u);
    expect(() => checkCertificate(certificate('a', BigInt(now + MAX_CLOCK_SKEW_MS + 1), 0n), 'c', subject, now)).toThrow(/in the future/u);
    expect(checkCertificate(certificate('a', BigInt(now + MAX_CLOCK_SKEW_MS), 0n), 'c', subject, now).expiresMs).toBe(0);
    expect(() => checkCertificate('AAAA', 'c', subject, now)).toThrow(expect.objectContaining({ code: 'BAD_CERTIFICATE' }));
  });

  it('signs as the account of <key>.cert when it exists, dating the file no earlier than the certificate', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'iki-signer-'));
    try {
      const subject = new Uint8Array(32).fill(0x22);
      const now = 1_700_000_000_000;
      let err = '';
      const io = { out: () => undefined, err: (t: string) => void (err += t) };
      expect(await packSigner(join(dir, 'k.key'), undefined, subject, io, now)).toEqual({ signer: { kind: 'device' }, createdMs: now });
      const text = certificate('acct_7', BigInt(now + 5000), 0n);
      await writeFile(join(dir, 'k.key.cert'), `${text}\n`);
      expect(await packSigner(join(dir, 'k.key'), undefined, subject, io, now)).toEqual({
        signer: { kind: 'account', account: 'acct_7', certificate: text }, certificateFile: join(dir, 'k.key.cert'), createdMs: now + 5000,
      });
      expect(err).toBe(`iki: note: signing as account acct_7 with the certificate ${join(dir, 'k.key.cert')}\n`);
      await expect(packSigner(join(dir, 'k.key'), join(dir, 'missing.cert'), subject, io, now)).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
