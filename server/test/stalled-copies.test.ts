/**
 * Issue 22 item 1, performed over raw sockets against a running service with the real worker
 * pool (two workers, eight bulk places): two buyers each open four license-copy downloads of
 * a 12 MiB master and never read them. A third user still signs in (201 within 2 s), because
 * password hashing has places of its own; the pool runs at most two of each buyer's copies
 * (the others wait their turn); and every stalled copy is cut once its client took nothing for
 * the stall bound, which ends its worker job and frees its download slot: the pool ends empty,
 * each cut is logged and counted in `/metrics`, and the buyers can download again.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromBase64Url } from '@iki/core';
import { loadConfig } from '../src/config.js';
import { serve } from '../src/main.js';
import { captureLogger, TEST_HASHING, type LogLine } from './helpers/app.js';
import { buildModel, client, registeredKey, verifiedUser } from './helpers/flow.js';
import { tinyModel } from './helpers/service-process.js';

const STALL_MS = 1500;
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** Sends a GET on a bare socket and never reads the answer past the socket's own buffer. */
function stalledDownload(base: string, path: string, token: string): Socket {
  const url = new URL(base);
  const socket = connect(Number(url.port), url.hostname);
  socket.on('error', () => {});
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  // Paused: Node stops reading once its 16 KiB buffer is full, and the kernel's fill up behind it.
  socket.pause();
  return socket;
}

/** One gauge or counter of the Prometheus text (summed over its labels). */
async function metric(base: string, name: string, label = ''): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(name) && l.includes(label) && !l.startsWith('#'))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

describe('stalled license-copy downloads', () => {
  it('never keep a third user from signing in, and are cut after the stall bound', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'iki-stall-'));
    dirs.push(dataDir);
    const logs: LogLine[] = [];
    const connections = { ...loadConfig({}).connections, transferStallMs: STALL_MS };
    const running = await serve({ port: 0, dataDir, logger: captureLogger(logs),
      env: { IKI_WORKERS: '2', IKI_CONCURRENT_COPIES_PER_LICENSE: '4', IKI_ACCESS_LOG: 'off' },
      config: { passwordHashing: TEST_HASHING, connections } });
    const sockets: Socket[] = [];
    try {
      const call = client(running.url);
      const seller = await verifiedUser(call, logs, 'Seller');
      const buyers = [await verifiedUser(call, logs, 'Ann'), await verifiedUser(call, logs, 'Bob')];
      const third = await verifiedUser(call, logs, 'Cy');
      const { key, signer } = await registeredKey(call, seller);
      const keys = (await call('GET', '/api/keys/service')).body as Record<string, string>;
      const pkg = tinyModel(64);
      // Incompressible and far larger than what the sockets of a stalled client can buffer.
      pkg.files.set('noise.bin', new Uint8Array(randomBytes(8 * 1024 * 1024)));
      const master = await buildModel(pkg, { key, signer, recipients: [fromBase64Url(keys['x25519PublicKey'] as string, 32)] });
      const upload = await call('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: master });
      expect(upload.status).toBe(201);
      const licenses: string[] = [];
      for (const buyer of buyers) {
        const made = await call('POST', `/api/licenses/masters/${upload.body.masterId}/licenses`, { token: seller.token,
          json: { accountId: buyer.accountId } });
        licenses.push(made.body.licenseId as string);
      }

      // Eight stalled downloads, four per buyer.
      buyers.forEach((buyer, i) => {
        for (let n = 0; n < 4; n += 1) sockets.push(stalledDownload(running.url, `/api/licenses/${licenses[i]}/model`, buyer.token));
      });
      // The pool runs two copies per buyer (a quarter of its eight bulk places each); the rest wait.
      await expect.poll(() => metric(running.url, 'iki_worker_jobs_running'), { timeout: 10_000 }).toBe(4);
      expect(await metric(running.url, 'iki_worker_queue_depth')).toBe(4);

      // A third user signs in meanwhile, at once.
      const started = Date.now();
      const signIn = await call('POST', '/api/sessions', { json: { email: third.email, password: 'correct horse battery staple' } });
      expect(signIn.status).toBe(201);
      expect(Date.now() - started).toBeLessThan(2000);

      // Every stalled copy is cut after the bound (the waiting ones once they ran and stalled in turn).
      await expect.poll(async () => (await metric(running.url, 'iki_worker_jobs_running'))
        + (await metric(running.url, 'iki_worker_queue_depth')), { timeout: 6 * STALL_MS + 10_000, interval: 200 }).toBe(0);
      await expect.poll(() => metric(running.url, 'iki_transfers_cut_total', 'answer_stalled'), { timeout: 5000 }).toBe(8);
      const cut = logs.filter((l) => l.message === 'transfer cut: the client stalled');
      expect(cut).toHaveLength(8);
      expect(cut.every((l) => l.level === 'warn' && l.fields['route'] === '/api/licenses/:licenseId/model'
        && l.fields['reason'] === 'answer_stalled')).toBe(true);
      // Their download slots are free again: each buyer's next download starts (and is left at once).
      for (const [i, buyer] of buyers.entries()) {
        const leave = new AbortController();
        const again = await fetch(`${running.url}/api/licenses/${licenses[i]}/model`,
          { headers: { authorization: `Bearer ${buyer.token}` }, signal: leave.signal });
        expect(again.status).toBe(200);
        leave.abort();
      }
    } finally {
      for (const s of sockets) s.destroy();
      await running.close();
    }
  }, 120_000);
});
