/**
 * The SIGTERM drain (ops/drain.ts) on a bare HTTP server: running requests finish within the
 * grace period and are answered `Connection: close`; with a delay, `/readyz` answers 503
 * `draining` and new requests are refused with 503 `SERVICE_DRAINING` while the port stays
 * open, then new connections are refused; what outlives the grace period is cut and logged as
 * cut by the drain, not as a client that went away. (With a real service and SIGTERM:
 * instances.test.ts.)
 */
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { loadConfig } from '../src/config.js';
import { errorHandler } from '../src/errors.js';
import { silentLogger, type Logger } from '../src/logger.js';
import { captureLogger, type LogLine } from './helpers/app.js';
import { Drain } from '../src/ops/drain.js';
import { healthRoutes } from '../src/ops/health.js';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

/**
 * A server whose `/slow` answers only when `release()` is called; `started` settles once a
 * `/slow` or `/stream` request has reached its handler (so it is in flight for the drain).
 */
async function slowServer(drain: Drain, logger: Logger = silentLogger): Promise<{ url: string; release(): void; started: Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  let start!: () => void;
  const started = new Promise<void>((resolve) => { start = resolve; });
  const app = express();
  app.use((_req, res, next) => { res.locals['requestId'] = 'req_test'; next(); });
  app.use(drain.middleware);
  app.use(healthRoutes({ probes: [], draining: () => drain.draining(), metrics: undefined, metricsToken: undefined,
    logger: silentLogger }));
  app.get('/slow', async (_req, res) => {
    res.write('first;');
    start();
    await released;
    res.end('last');
  });
  app.get('/stream', async (_req, res, next) => {
    start();
    // A transfer as a license copy makes it: a pipeline whose end is awaited, errors to next.
    await pipeline(Readable.from((async function* () { yield 'first;'; await released; yield 'last'; })()), res).catch(next);
  });
  app.use(errorHandler(logger));
  server = createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, release, started };
}

function get(url: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (s: string) => { body += s; });
      res.on('end', () => (res.complete ? resolve({ status: res.statusCode ?? 0, headers: res.headers, body }) : reject(new Error('cut'))));
      res.on('error', reject);
    }).on('error', reject).end();
  });
}

describe('drain settings', () => {
  it('reads IKI_DRAIN_DELAY_SECONDS: 5 by default, 0 to 3600', () => {
    expect(loadConfig({}).ops.drainDelaySeconds).toBe(5);
    expect(loadConfig({ IKI_DRAIN_DELAY_SECONDS: '0' }).ops.drainDelaySeconds).toBe(0);
    expect(loadConfig({ IKI_DRAIN_DELAY_SECONDS: '3600' }).ops.drainDelaySeconds).toBe(3600);
    expect(() => loadConfig({ IKI_DRAIN_DELAY_SECONDS: '3601' })).toThrow(/IKI_DRAIN_DELAY_SECONDS must be an integer from 0 to 3600/);
  });
});

describe('drain', () => {
  it('lets a running request finish, refuses new connections and reports draining', async () => {
    const drain = new Drain();
    const { url, release, started } = await slowServer(drain);
    expect((await get(`${url}/readyz`)).status).toBe(200);
    const running = get(`${url}/slow`);
    await started;
    const drained = drain.drain(server!, { graceMs: 10_000 }, silentLogger);
    expect(drain.draining()).toBe(true);
    await expect(get(`${url}/readyz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    release();
    expect((await running).body).toBe('first;last');
    expect(await drained).toEqual({ cut: false });
  });

  it('cuts what outlives the grace period', async () => {
    const drain = new Drain();
    const { url, started } = await slowServer(drain);
    const running = get(`${url}/slow`);
    await started;
    const since = Date.now();
    expect(await drain.drain(server!, { graceMs: 300 }, silentLogger)).toEqual({ cut: true });
    expect(Date.now() - since).toBeGreaterThanOrEqual(290);
    await expect(running).rejects.toThrow();
  });

  it('with a delay: /readyz 503 and new work refused on the open port, then closed; a running request finishes', async () => {
    const drain = new Drain();
    const { url, release, started } = await slowServer(drain);
    const running = get(`${url}/slow`);
    await started;
    const drained = drain.drain(server!, { delayMs: 600, graceMs: 10_000 }, silentLogger);
    const ready = await get(`${url}/readyz`);
    expect([ready.status, JSON.parse(ready.body).status, ready.headers['connection']]).toEqual([503, 'draining', 'close']);
    const refused = await get(`${url}/slow`);
    expect([refused.status, refused.headers['retry-after'], JSON.parse(refused.body).error.code]).toEqual([503, '5', 'SERVICE_DRAINING']);
    // After the delay the listener is closed.
    await new Promise((r) => setTimeout(r, 800));
    await expect(get(`${url}/readyz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    release();
    expect((await running).body).toBe('first;last');
    expect(await drained).toEqual({ cut: false });
  });

  it('logs a transfer cut at the drain limit as cut by the drain, not as the client closing', async () => {
    const logs: LogLine[] = [];
    const drain = new Drain();
    const { url, started } = await slowServer(drain, captureLogger(logs));
    const running = get(`${url}/stream`);
    await started;
    expect(await drain.drain(server!, { graceMs: 200 }, captureLogger(logs))).toEqual({ cut: true });
    await expect(running).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 100));
    expect(logs.find((l) => l.message.startsWith('request cut by the drain'))?.fields).toMatchObject({
      requestId: 'req_test', method: 'GET', path: '/stream', graceMs: 200 });
    expect(logs.filter((l) => l.message === 'client closed the connection')).toEqual([]);
  });

  it('answers Connection: close and /readyz 503 draining while draining', async () => {
    // A drain that began (on a server of its own), answering on this one.
    const drain = new Drain();
    const other = createServer();
    other.listen(0, '127.0.0.1');
    await once(other, 'listening');
    await drain.drain(other, { graceMs: 0 }, silentLogger);
    const app = express();
    app.use(drain.middleware);
    app.use(healthRoutes({ probes: [{ name: 'database', check: async () => {} }], draining: () => drain.draining(),
      metrics: undefined, metricsToken: undefined, logger: silentLogger }));
    server = createServer(app);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const answer = await get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`);
    expect(answer.status).toBe(503);
    expect(answer.headers['connection']).toBe('close');
    expect(JSON.parse(answer.body)).toMatchObject({ status: 'draining', checks: { database: 'ok' } });
  });
});
