/**
 * The SIGTERM drain (ops/drain.ts) on a bare HTTP server: running requests finish within the
 * grace period and are answered `Connection: close`, new connections are refused at once, and
 * what outlives the grace period is cut. `/readyz` says `draining` once a drain began.
 */
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/logger.js';
import { Drain } from '../src/ops/drain.js';
import { healthRoutes } from '../src/ops/health.js';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

/** A server whose `/slow` answers only when `release()` is called. */
async function slowServer(drain: Drain): Promise<{ url: string; release(): void }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  const app = express();
  app.use(drain.middleware);
  app.use(healthRoutes({ probes: [], draining: () => drain.draining(), metrics: undefined, metricsToken: undefined,
    logger: silentLogger }));
  app.get('/slow', async (_req, res) => {
    res.write('first;');
    await released;
    res.end('last');
  });
  server = createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, release };
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

describe('drain', () => {
  it('lets a running request finish, refuses new connections and reports draining', async () => {
    const drain = new Drain();
    const { url, release } = await slowServer(drain);
    expect((await get(`${url}/readyz`)).status).toBe(200);
    const running = get(`${url}/slow`);
    await new Promise((r) => setTimeout(r, 100));
    const drained = drain.drain(server!, 10_000, silentLogger);
    expect(drain.draining()).toBe(true);
    await expect(get(`${url}/readyz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    release();
    expect((await running).body).toBe('first;last');
    expect(await drained).toEqual({ cut: false });
  });

  it('cuts what outlives the grace period', async () => {
    const drain = new Drain();
    const { url } = await slowServer(drain);
    const running = get(`${url}/slow`);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    expect(await drain.drain(server!, 300, silentLogger)).toEqual({ cut: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await expect(running).rejects.toThrow();
  });

  it('answers Connection: close and /readyz 503 draining while draining', async () => {
    // A drain that began (on a server of its own), answering on this one.
    const drain = new Drain();
    const other = createServer();
    other.listen(0, '127.0.0.1');
    await once(other, 'listening');
    await drain.drain(other, 0, silentLogger);
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
