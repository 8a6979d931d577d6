// The CLI's words as a new user meets them (issue 14 item 9): the signer said once ("account
// acct_…", never "account account"), an unknown or mistyped option in plain words with the
// likely option and where the options are listed, `iki version --help`, and a port already
// in use reported as `iki: EADDRINUSE: …` with what to do next.
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Verified } from '../src/container.js';
import { signerText } from '../src/cli/describe.js';
import { expectFailure, iki, spawnIki } from './cli-helpers.js';

vi.setConfig({ testTimeout: 60_000 });

const key = new Uint8Array(32).fill(1);
const KEY_B64 = Buffer.from(key).toString('base64url');
const verified = (signer: Verified['signer']) => ({ publicKey: key, signer }) as unknown as Verified;

describe('iki says things once and plainly', () => {
  it('names the signer\'s kind once: account, service, device', () => {
    expect(signerText(verified({ kind: 'account', account: 'acct_ada', name: 'Ada' } as Verified['signer'])))
      .toBe(`account acct_ada "Ada", key ${KEY_B64}`);
    expect(signerText(verified({ kind: 'service', service: 'https://iki.example' } as Verified['signer'])))
      .toBe(`service https://iki.example, key ${KEY_B64}`);
    expect(signerText(verified({ kind: 'device', name: 'laptop' } as Verified['signer'])))
      .toBe(`device "laptop", key ${KEY_B64}`);
    for (const kind of ['account', 'service']) {
      const text = signerText(verified({ kind, account: 'acct_x', service: 'https://s' } as Verified['signer']));
      expect(text).not.toMatch(/\b(account account|service service)\b/u);
    }
  });

  it('an unknown option: one plain line with the likely option and where options are listed', async () => {
    const typo = await iki(['inspect', '--pasword', 'x.iki']);
    expectFailure(typo, 'USAGE', 2);
    expect(typo.err).toBe('iki: USAGE: unknown option --pasword; did you mean --password? (see iki inspect --help)\n');
    const unknown = await iki(['keygen', '--colour', '-o', 'k.key']);
    expect(unknown.err).toBe('iki: USAGE: unknown option --colour (see iki keygen --help)\n');
    expect(unknown.err).not.toContain('positional argument');
  });

  it('a missing or unwanted value says which option and how it is written', async () => {
    const missing = await iki(['keygen', '-o']);
    expectFailure(missing, 'USAGE', 2);
    expect(missing.err).toBe('iki: USAGE: --output needs a value (--output <value>) (see iki keygen --help)\n');
    const unwanted = await iki(['keygen', '--json=yes', '-o', 'k.key']);
    expect(unwanted.err).toBe('iki: USAGE: --json takes no value (see iki keygen --help)\n');
  });

  it('every usage error says where to look next', async () => {
    for (const argv of [['keygen'], ['pack'], ['unpack', 'x.iki'], ['register-key', '--key', 'k'], ['serve', 'extra'],
      ['watermark', 'read'], ['keys']]) {
      const run = await iki(argv);
      expectFailure(run, 'USAGE', 2);
      expect(run.err, argv.join(' ')).toMatch(/(see|run) iki( [a-z-]+)* --help/u);
    }
  });

  it('an unknown command suggests the near one; iki version --help is help', async () => {
    const near = await iki(['inspekt', 'x.iki']);
    expectFailure(near, 'USAGE', 2);
    expect(near.err).toBe('iki: USAGE: unknown command "inspekt"; did you mean inspect? run iki --help for the list of commands\n');
    const help = await iki(['version', '--help']);
    expect(help).toMatchObject({ code: 0, err: '' });
    expect(help.out).toMatch(/^Usage: iki version\n/u);
    expectFailure(await iki(['version', 'extra']), 'USAGE', 2);
  });

  it('iki serve on a port in use: iki: EADDRINUSE: … with what to do, exit 1, no stack', async () => {
    const busy = createServer().listen(0, '127.0.0.1');
    await once(busy, 'listening');
    const { port } = busy.address() as AddressInfo;
    const data = await mkdtemp(join(tmpdir(), 'iki-busy-'));
    try {
      const run = await spawnIki(['serve', '--port', String(port), '--data', data]);
      expectFailure(run, 'EADDRINUSE', 1);
      expect(run.err.trimEnd().split('\n').at(-1)).toBe(`iki: EADDRINUSE: port ${port} on 127.0.0.1 is already in use (another iki `
        + 'service?); stop that one, or choose another port with --port N (or IKI_PORT=N)');
    } finally {
      busy.close();
      await rm(data, { recursive: true, force: true });
    }
  });
});
