/**
 * Resumable, cacheable license copies (issue 16 items 4 and 5) over HTTP with the real
 * WebAssembly crypto, on PGlite and on PostgreSQL: `Accept-Ranges` and a strong ETag,
 * `If-None-Match` answered 304 without counting a download, a download cut at a random byte
 * (the socket closed by the client) and resumed with `Range` + `If-Range` by `resumableBody`
 * (and another by `iki download`) is byte-identical to a whole one and verifies in the player;
 * a resume of a cut download burns no download of the per-license limit while any other range
 * does; a range past the end is 416; the client that went away is one info line without a stack.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { request } from 'node:http';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromBase64Url, openLicenseCopy, PlayerSession, resumableBody, toBase64Url } from '@iki/core';
import { serve } from '../src/main.js';
import { captureLogger, TEST_HASHING, type LogLine } from './helpers/app.js';
import { freshPostgres, postgresServer, preparedDataDir } from './helpers/databases.js';
import { buildModel, client, registeredKey, verifiedUser } from './helpers/flow.js';
import { tinyModel } from './helpers/service-process.js';

const CLI = fileURLToPath(new URL('../../ts/dist/cli/main.js', import.meta.url));
const execFileAsync = promisify(execFile);
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** GETs `path` and destroys the socket after `cut` body bytes; resolves to those bytes and the headers. */
function cutDownload(base: string, path: string, token: string, cut: number): Promise<{ head: Record<string, string>; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      const parts: Buffer[] = [];
      let seen = 0;
      res.on('data', (chunk: Buffer) => {
        if (seen >= cut) return;
        parts.push(chunk.subarray(0, cut - seen));
        seen += Math.min(chunk.length, cut - seen);
        if (seen >= cut) {
          req.destroy();
          resolve({ head: res.headers as Record<string, string>, bytes: Buffer.concat(parts) });
        }
      });
      res.on('error', () => {});
    });
    req.on('error', () => {});
    req.on('close', () => reject(new Error('closed before the cut')));
    req.end();
  });
}

const engines = [
  { name: 'pglite', env: async () => ({ env: {} as Record<string, string>, close: async () => {} }) },
  { name: 'postgres', env: async () => {
    const pg = await freshPostgres();
    return { env: { DATABASE_URL: pg.url, IKI_BLOB_STORE: 'postgres', IKI_ROOT_SECRET: randomBytes(32).toString('base64url'),
      IKI_PUBLIC_URL: 'http://iki.test' },
      close: () => pg.drop() };
  } },
];

describe.each(engines)('license copy ranges on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';

  it.skipIf(skip)('resumes a cut download byte-identically, answers 304 and 416, and counts a resume as no new download', async () => {
    const database = await engine.env();
    const dataDir = await preparedDataDir(await mkdtemp(join(tmpdir(), 'iki-range-')), database.env);
    dirs.push(dataDir);
    const logs: LogLine[] = [];
    const running = await serve({ port: 0, dataDir, logger: captureLogger(logs),
      env: { ...database.env, IKI_COPIES_PER_LICENSE: '3' }, config: { passwordHashing: TEST_HASHING } });
    try {
      const call = client(running.url);
      const seller = await verifiedUser(call, logs, 'Seller');
      const buyer = await verifiedUser(call, logs, 'Buyer');
      const { key, signer } = await registeredKey(call, seller);
      const keys = (await call('GET', '/api/keys/service')).body as Record<string, string>;
      const master = await buildModel(tinyModel(2048), { key, signer, recipients: [fromBase64Url(keys['x25519PublicKey'] as string, 32)] });
      const upload = await call('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: master });
      expect(upload.status).toBe(201);
      const made = await call('POST', `/api/licenses/masters/${upload.body.masterId}/licenses`, { token: seller.token,
        json: { accountId: buyer.accountId } });
      const licenseId = made.body.licenseId as string;
      const path = `/api/licenses/${licenseId}/model`;
      const downloads = async () => (await call('GET', `/api/licenses/${licenseId}/events?limit=1000`, { token: buyer.token }))
        .body.events.filter((e: { kind: string }) => e.kind === 'download').length;

      // Download 1 of 3, whole.
      const whole = (await call('GET', path, { token: buyer.token }));
      expect(whole.status).toBe(200);
      const size = whole.bytes.length;
      const etag = whole.headers.get('etag') as string;
      expect(whole.headers.get('accept-ranges')).toBe('bytes');
      expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
      // The size is known from the first whole copy on.
      expect((await fetch(`${running.url}${path}`, { method: 'HEAD', headers: { authorization: `Bearer ${buyer.token}` } }))
        .headers.get('content-length')).toBe(String(size));

      // 304 counts nothing.
      const before = await downloads();
      const cached = await fetch(`${running.url}${path}`, { headers: { authorization: `Bearer ${buyer.token}`, 'if-none-match': `W/${etag}` } });
      expect(cached.status).toBe(304);
      expect(cached.headers.get('etag')).toBe(etag);
      expect(await downloads()).toBe(before);

      // Download 2 of 3, cut at a random byte by the client...
      // (in its first quarter, so the service is still sending when the socket closes)...
      const socketCut = randomInt(1, Math.floor(size / 4));
      const partial = await cutDownload(running.url, path, buyer.token, socketCut);
      expect(partial.bytes.equals(Buffer.from(whole.bytes.subarray(0, socketCut)))).toBe(true);
      // ... which the service logs as one info line, no stack, no error.
      for (let i = 0; i < 50 && !logs.some((l) => l.message === 'client closed the connection'); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const gone = logs.filter((l) => l.message === 'client closed the connection');
      expect(gone.length).toBeGreaterThan(0);
      expect(gone.every((l) => l.level === 'info' && JSON.stringify(l.fields).indexOf('stack') < 0)).toBe(true);
      expect(logs.filter((l) => l.level === 'error')).toEqual([]);

      // ... and resumed by resumableBody from the byte where it broke (issue 22 item 5: a resume
      // continues a download the service recorded as cut, from no further than it got).
      const cut = socketCut;
      let delivered = false;
      const broken = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (delivered) controller.error(new TypeError('network error'));
          else controller.enqueue(whole.bytes.slice(0, cut));
          delivered = true;
        },
      });
      const first = new Response(broken, { status: 200, headers: { etag, 'accept-ranges': 'bytes' } });
      const asked: string[] = [];
      const body = resumableBody(async (headers) => {
        asked.push(headers['Range'] as string);
        const answer = await fetch(`${running.url}${path}`, { headers: { ...headers, authorization: `Bearer ${buyer.token}` } });
        if (answer.status !== 206) throw new Error(`resume answered ${answer.status}: ${await answer.text()}`);
        expect(answer.headers.get('content-range')).toBe(`bytes ${cut}-${size - 1}/${size}`);
        return answer;
      }, first, { retryDelayMs: 1 });
      const resumed = new Uint8Array(await new Response(body).arrayBuffer());
      expect(asked).toEqual([`bytes=${cut}-`]);
      expect(Buffer.from(resumed).equals(Buffer.from(whole.bytes))).toBe(true);

      // The resumed copy verifies in the player.
      const session = PlayerSession.create();
      try {
        const release = await call('POST', `/api/licenses/${licenseId}/key`, { token: buyer.token, json: { publicKey: toBase64Url(session.publicKey) } });
        session.acceptLicenseKey(licenseId, { ephemeral: fromBase64Url(release.body.ephemeralPublicKey, 32),
          nonce: fromBase64Url(release.body.nonce, 24), sealed: fromBase64Url(release.body.sealedKey, 48) });
        let verified = false;
        for await (const event of openLicenseCopy(resumed, session, fromBase64Url(keys['licenseSigningPublicKey'] as string, 32))) {
          if (event.type === 'end') verified = true;
        }
        expect(verified).toBe(true);
      } finally {
        session.free();
      }

      // Download 3 of 3, cut, and resumed by the CLI from the <file>.part an earlier run left.
      const cliCut = randomInt(1, Math.floor(size / 4));
      expect((await cutDownload(running.url, path, buyer.token, cliCut)).bytes.length).toBe(cliCut);
      const out = join(dataDir, 'copy.ikm');
      await writeFile(`${out}.part`, whole.bytes.subarray(0, cliCut));
      await writeFile(`${out}.part.etag`, `${etag}\n`);
      // Asynchronously: the service runs in this process and must go on answering.
      const cli = await execFileAsync(process.execPath, [CLI, 'download', licenseId, '--service', running.url, '--token', buyer.token,
        '-o', out, '--json'], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' } });
      expect(cli.stderr).toBe('');
      expect(JSON.parse(cli.stdout)).toEqual({ file: out, bytes: size, resumedFrom: cliCut });
      expect((await readFile(out)).equals(Buffer.from(whole.bytes))).toBe(true);
      expect(existsSync(`${out}.part`) || existsSync(`${out}.part.etag`)).toBe(false);

      // Three downloads started and none left cut: a fourth is refused, and so is any range
      // (it continues nothing), also with a stale If-Range (which asks for the whole copy).
      const fourth = await call('GET', path, { token: buyer.token });
      expect(fourth.status).toBe(429);
      expect(fourth.body.error.code).toBe('COPY_RATE_LIMITED');
      for (const headers of [{ range: `bytes=${cut}-${cut + 99}`, 'if-range': etag }, { range: `bytes=${cut}-`, 'if-range': '"other"' }]) {
        expect((await fetch(`${running.url}${path}`, { headers: { authorization: `Bearer ${buyer.token}`, ...headers } })).status).toBe(429);
      }
      // A range past the end is 416 whatever the limits: the size is known, nothing is made.
      const past = await fetch(`${running.url}${path}`, { headers: { authorization: `Bearer ${buyer.token}`, range: `bytes=${size}-` } });
      expect(past.status).toBe(416);
      expect(past.headers.get('content-range')).toBe(`bytes */${size}`);
    } finally {
      await running.close();
      await database.close();
    }
  }, 180_000);
});
