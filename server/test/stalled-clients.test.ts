/**
 * Issue 22 items 1 and 2, performed over raw sockets against a running service with short
 * bounds (1 s for a head, a silent body and a stalled answer) and the real worker pool (two
 * workers, eight bulk places).
 *
 * Stalled copies: two buyers each open four license-copy downloads of an 8 MiB master and never
 * read them. A third user still signs in (201 within 2 s), because password hashing has places
 * of its own; the pool runs at most two of each buyer's copies (the others wait their turn);
 * and every stalled copy is cut once its client took nothing for the bound, which ends its
 * worker job and frees its download slot: the pool ends empty, each cut is logged and counted
 * in `/metrics`, and the buyers can download again.
 *
 * Slow and silent clients: a JSON body that stops arriving, or
 * trickles, is cut with 408 `REQUEST_TIMEOUT` within the bound; an upload that stops is cut the
 * same way and its upload slot is free at once, while an upload that goes on slowly is not cut;
 * two thousand idle connections from one address are refused past the per-client cap (one log
 * line for the burst) and the accepted ones are closed after the header bound, while `/healthz`
 * and a sign-in from another address answer; past the total cap, connections are dropped and
 * logged once, and the service answers again once the idle ones are gone. Behind a trusted
 * proxy, one client (by its X-Forwarded-For address) has at most the cap of requests in flight.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64Url } from '@iki/core';
import { loadConfig } from '../src/config.js';
import { serve, type RunningServer } from '../src/main.js';
import { captureLogger, TEST_HASHING, type LogLine } from './helpers/app.js';
import { buildModel, client, registeredKey, verifiedUser, type ModelPackage, type User } from './helpers/flow.js';
import { rawRequest } from './helpers/raw-http.js';
import { tinyModel } from './helpers/service-process.js';
import { preparedDataDir } from './helpers/databases.js';

const BOUND_MS = 1000;
const PER_CLIENT = 64;
const MAX_CONNECTIONS = 300;
const PASSWORD = 'correct horse battery staple';
let dataDir: string;
let running: RunningServer;
const logs: LogLine[] = [];
let seller: User;
let master: Uint8Array;
/** Builds a master of `pkg` signed by the seller's registered key, for this service. */
let build: (pkg: ModelPackage) => Promise<Uint8Array>;

beforeAll(async () => {
  dataDir = await preparedDataDir(await mkdtemp(join(tmpdir(), 'iki-idle-')));
  const connections = { ...loadConfig({}).connections, headersTimeoutMs: BOUND_MS, bodyTimeoutMs: BOUND_MS,
    transferStallMs: BOUND_MS, perClient: PER_CLIENT, maxConnections: MAX_CONNECTIONS };
  running = await serve({ port: 0, dataDir, logger: captureLogger(logs),
    // 127.0.0.1 is a trusted proxy: its connections are not capped, its X-Forwarded-For is the client.
    env: { IKI_WORKERS: '2', IKI_CONCURRENT_UPLOADS_PER_ACCOUNT: '1', IKI_CONCURRENT_COPIES_PER_LICENSE: '4',
      IKI_ACCESS_LOG: 'off', IKI_TRUST_PROXY: '127.0.0.1' },
    config: { passwordHashing: TEST_HASHING, connections } });
  const call = client(running.url);
  seller = await verifiedUser(call, logs, 'Seller');
  const { key, signer } = await registeredKey(call, seller);
  const keys = (await call('GET', '/api/keys/service')).body as Record<string, string>;
  build = (pkg) => buildModel(pkg, { key, signer, recipients: [fromBase64Url(keys['x25519PublicKey'] as string, 32)] });
  master = await build(tinyModel(64));
}, 120_000);

afterAll(async () => {
  await running?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/**
 * Opens `count` connections from `localAddress` that send nothing, 200 at a time: more at once
 * overflow the listen backlog, and the kernel then drops connections the service never sees.
 */
async function idleConnections(count: number, localAddress: string): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let at = 0; at < count; at += 200) sockets.push(...await idleBatch(Math.min(200, count - at), localAddress));
  return sockets;
}

async function idleBatch(count: number, localAddress: string): Promise<Socket[]> {
  const url = new URL(running.url);
  return Promise.all(Array.from({ length: count }, () => new Promise<Socket>((resolve) => {
    const socket = connect({ port: Number(url.port), host: url.hostname, localAddress });
    socket.on('error', () => {});
    // Reads what the service answers (its status line is kept), so that its close is seen; sends nothing.
    socket.on('data', (d: Buffer) => { if (!answers.has(socket)) answers.set(socket, d.toString('latin1').split('\r\n')[0] ?? ''); });
    socket.once('connect', () => resolve(socket));
    socket.once('close', () => resolve(socket));
  })));
}

const answers = new Map<Socket, string>();
const refusedCount = async () => Number(/iki_connections_refused_total\{reason="per_client"\} (\d+)/
  .exec(await (await fetch(`${running.url}/metrics`)).text())?.[1] ?? 0);
const closed = (sockets: Socket[]) => sockets.filter((s) => s.destroyed || s.closed).length;
const cutLines = (reason: string) => logs.filter((l) => l.message === 'transfer cut: the client stalled' && l.fields['reason'] === reason);

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

describe('stalled copies, bounded bodies and connections', () => {
  it('never keep a third user from signing in, and are cut after the stall bound', async () => {
    const sockets: Socket[] = [];
    try {
      const call = client(running.url);
      const buyers = [await verifiedUser(call, logs, 'Ann'), await verifiedUser(call, logs, 'Bob')];
      const third = await verifiedUser(call, logs, 'Cy');
      const pkg = tinyModel(64);
      // Incompressible and far larger than what the sockets of a stalled client can buffer.
      pkg.files.set('noise.bin', new Uint8Array(randomBytes(8 * 1024 * 1024)));
      const upload = await call('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model',
        body: await build(pkg) });
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
      const signIn = await call('POST', '/api/sessions', { json: { email: third.email, password: PASSWORD } });
      expect(signIn.status).toBe(201);
      expect(Date.now() - started).toBeLessThan(2000);

      // Every stalled copy is cut after the bound (the waiting ones once they ran and stalled in turn).
      await expect.poll(async () => (await metric(running.url, 'iki_worker_jobs_running'))
        + (await metric(running.url, 'iki_worker_queue_depth')), { timeout: 6 * BOUND_MS + 10_000, interval: 200 }).toBe(0);
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
    }
  }, 60_000);

  it('cuts a JSON body that stops arriving, and one that trickles, within the bound', async () => {
    const started = Date.now();
    const stopped = await rawRequest(running.url, { method: 'POST', path: '/api/sessions',
      headers: { 'Content-Type': 'application/json', 'Content-Length': '65000' }, first: new TextEncoder().encode('{"email":'),
      waitMs: 10_000 });
    const took = Date.now() - started;
    expect(stopped.status).toBe(408);
    expect(stopped.body.error).toMatchObject({ code: 'REQUEST_TIMEOUT', requestId: expect.stringMatching(/^req_/) });
    expect(stopped.closed).toBe(true);
    expect(took).toBeGreaterThanOrEqual(BOUND_MS);
    expect(took).toBeLessThan(BOUND_MS * 3);
    expect(cutLines('body_idle')).toHaveLength(1);

    // One byte every 200 ms never idles for the bound, but a JSON body must arrive whole within it.
    const url = new URL(running.url);
    const socket = connect(Number(url.port), url.hostname);
    socket.on('error', () => {});
    const answer: Buffer[] = [];
    socket.on('data', (d: Buffer) => answer.push(d));
    socket.write(`POST /api/sessions HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`);
    const trickle = setInterval(() => socket.write(' '), 200);
    await new Promise((resolve) => socket.once('close', resolve));
    clearInterval(trickle);
    expect(Buffer.concat(answer).toString('latin1')).toMatch(/^HTTP\/1\.1 408 /);
    expect(cutLines('body_slow')).toHaveLength(1);
  });

  it('cuts an upload that stops and frees its slot; an upload that goes on slowly is not cut', async () => {
    const stopped = await rawRequest(running.url, { method: 'POST', path: '/api/licenses/masters',
      headers: { Authorization: `Bearer ${seller.token}`, 'Content-Type': 'application/vnd.iki.model',
        'Content-Length': String(master.length) }, first: master.subarray(0, 512), waitMs: 10_000 });
    expect(stopped.status).toBe(408);
    expect(stopped.closed).toBe(true);
    // The upload's handler ends (its read fails) and frees the slot before it logs the client gone.
    await expect.poll(() => logs.some((l) => l.message === 'client closed the connection' && l.fields['path'] === '/api/licenses/masters'),
      { timeout: 2000 }).toBe(true);
    // The account may run one upload at once: its slot is free again.
    const url = new URL(running.url);
    const socket = connect(Number(url.port), url.hostname);
    socket.on('error', () => {});
    const answer: Buffer[] = [];
    socket.on('data', (d: Buffer) => answer.push(d));
    socket.write(`POST /api/licenses/masters HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${seller.token}\r\n`
      + `Content-Type: application/vnd.iki.model\r\nContent-Length: ${master.length}\r\nConnection: close\r\n\r\n`);
    // Eight pieces 400 ms apart: 2.8 s in all, never 1 s without a byte.
    const piece = Math.ceil(master.length / 8);
    for (let at = 0; at < master.length; at += piece) {
      socket.write(master.subarray(at, at + piece));
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    await expect.poll(() => Buffer.concat(answer).toString('latin1'), { timeout: 5000 }).toMatch(/^HTTP\/1\.1 201 /);
    socket.destroy();
  });

  it('accepts exactly the per-client cap of connections from one address, and refuses the next', async () => {
    const held = await idleConnections(PER_CLIENT, '127.0.0.9');
    const next = await idleConnections(1, '127.0.0.9');
    await expect.poll(() => answers.get(next[0] as Socket)).toMatch(/^HTTP\/1\.1 503 /);
    // None of the first ones was refused (they are closed later, by the header bound, with 408).
    expect(held.filter((s) => answers.get(s)?.startsWith('HTTP/1.1 503 '))).toEqual([]);
    for (const s of held) s.destroy();
  });

  it('behind a trusted proxy, caps the requests in flight of each client its X-Forwarded-For names', async () => {
    const url = new URL(running.url);
    const holders = Array.from({ length: PER_CLIENT }, () => {
      const socket = connect(Number(url.port), url.hostname);
      socket.on('error', () => {});
      socket.write(`POST /api/sessions HTTP/1.1\r\nHost: ${url.host}\r\nX-Forwarded-For: 198.51.100.7\r\n`
        + 'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n');
      return socket;
    });
    const probe = async (client: string) => {
      const answer = await fetch(`${running.url}/healthz`, { headers: { 'x-forwarded-for': client } });
      return answer.status === 503 ? ((await answer.json()) as { error: { code: string } }).error.code : answer.status;
    };
    // Once the proxy carries that many of one client's requests, the next is refused...
    await expect.poll(() => probe('198.51.100.7'), { timeout: 5000, interval: 50 }).toBe('TOO_MANY_CONNECTIONS');
    // ... while another client behind the same proxy is served.
    expect(await probe('198.51.100.8')).toBe(200);
    for (const s of holders) s.destroy();
  });

  it('refuses idle connections past the per-client cap and closes the rest after the header bound; others still answer', async () => {
    const refusedBefore = await refusedCount();
    const logsBefore = logs.length;
    const flood = await idleConnections(2000, '127.0.0.2');
    // Past the cap each is refused with 503 at once (the accepted ones are closed with 408 after
    // the header bound, which lets later ones in); one warning for the burst.
    const refused = () => flood.filter((s) => answers.get(s)?.startsWith('HTTP/1.1 503 ')).length;
    await expect.poll(refused, { timeout: 10_000 }).toBeGreaterThanOrEqual(1000);
    // At most one warning for the burst (none when the refusal of the test before began it).
    expect(logs.slice(logsBefore).filter((l) => l.message.startsWith('connections refused')).length).toBeLessThanOrEqual(1);
    // Another address is served meanwhile.
    const started = Date.now();
    expect((await fetch(`${running.url}/healthz`)).status).toBe(200);
    const signIn = await client(running.url)('POST', '/api/sessions', { json: { email: seller.email, password: PASSWORD } });
    expect(signIn.status).toBe(201);
    expect(Date.now() - started).toBeLessThan(2000);
    // The accepted idle connections are closed after the header bound.
    await expect.poll(() => closed(flood), { timeout: BOUND_MS * 5 }).toBe(2000);
    const timedOut = flood.filter((s) => answers.get(s)?.startsWith('HTTP/1.1 408 ')).length;
    expect(timedOut).toBeGreaterThanOrEqual(PER_CLIENT);
    expect(refused() + timedOut).toBe(2000);
    expect(await refusedCount()).toBe(refusedBefore + refused());
  });

  it('drops connections past the total cap, logs it once, and answers again once idle ones are closed', async () => {
    const floods = await Promise.all([3, 4, 5, 6, 7, 8].map((n) => idleConnections(PER_CLIENT, `127.0.0.${n}`)));
    await expect.poll(() => logs.filter((l) => l.fields['reason'] === 'max_connections').length, { timeout: 5000 }).toBe(1);
    await expect.poll(async () => (await fetch(`${running.url}/healthz`).catch(() => undefined))?.status, { timeout: BOUND_MS * 5 })
      .toBe(200);
    await expect.poll(() => floods.flat().filter((s) => s.destroyed || s.closed).length, { timeout: BOUND_MS * 5 })
      .toBe(6 * PER_CLIENT);
  });
});
