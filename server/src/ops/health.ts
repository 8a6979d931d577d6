/**
 * `GET /healthz`, `GET /readyz` and `GET /metrics` (issue 13 item 3).
 *
 * - `/healthz`: the process is alive and answering; no dependency is asked.
 * - `/readyz`: every probe passes within `PROBE_TIMEOUT_MS` (database reachable with the
 *   migrations applied, blob store reachable, workers up) and the service is not draining.
 *   503 otherwise; the body names each probe's state but no error text (which may carry
 *   hosts or paths), the failure goes to the log with the request id.
 * - `/metrics`: Prometheus text; with a token configured (`IKI_METRICS_TOKEN`) only for
 *   `Authorization: Bearer <token>`, compared in constant time. Without one, only for a
 *   request from the loopback interface that no proxy forwarded (issue 22 item 11): the
 *   counters tell strangers about traffic, sign-in failures and load, so they are never
 *   public by default. The TCP peer decides, never X-Forwarded-For; a request carrying
 *   `Forwarded` or `X-Forwarded-For` came through a proxy (which may sit on this machine and
 *   so connect from loopback) and is refused.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Router, type Request } from 'express';
import type { Logger } from '../logger.js';
import type { Redacted } from '../redacted.js';
import type { Metrics } from './metrics.js';

/** Longest time one readiness probe may take before it counts as failed. */
export const PROBE_TIMEOUT_MS = 2000;

/** One readiness check; rejects (or times out) when the dependency is not usable. */
export interface Probe {
  name: string;
  check(): Promise<void>;
}

/** What the health routes need. */
export interface HealthOptions {
  probes: readonly Probe[];
  /** True once a drain started: the instance is going away. */
  draining(): boolean;
  metrics: Metrics | undefined;
  metricsToken: Redacted | undefined;
  logger: Logger;
}

/** Whether the request's TCP peer is this machine's loopback interface and no proxy forwarded it. */
export function fromThisMachine(req: Pick<Request, 'socket' | 'get'>): boolean {
  const peer = req.socket.remoteAddress ?? '';
  const loopback = peer === '::1' || /^(::ffff:)?127(\.\d{1,3}){3}$/u.test(peer);
  return loopback && req.get('forwarded') === undefined && req.get('x-forwarded-for') === undefined;
}

async function run(probe: Probe): Promise<'ok' | 'failed' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), PROBE_TIMEOUT_MS); });
  try {
    return await Promise.race([probe.check().then(() => 'ok' as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The three operational routes. */
export function healthRoutes(options: HealthOptions): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const requestId = String(res.locals['requestId']);
    const checks: Record<string, string> = {};
    await Promise.all(options.probes.map(async (probe) => {
      checks[probe.name] = await run(probe).catch((err: unknown) => {
        options.logger.warn('readiness probe failed', { requestId, probe: probe.name,
          error: err instanceof Error ? err.message : String(err) });
        return 'failed' as const;
      });
    }));
    const draining = options.draining();
    const ready = !draining && Object.values(checks).every((c) => c === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : draining ? 'draining' : 'not_ready', checks, requestId });
  });
  router.get('/metrics', async (req, res) => {
    const { metrics, metricsToken } = options;
    if (metrics === undefined) {
      res.status(404).json({ error: { code: 'NOT_FOUND', message: 'metrics are off', requestId: res.locals['requestId'] } });
      return;
    }
    if (metricsToken === undefined && !fromThisMachine(req)) {
      res.status(403).json({ error: { code: 'FORBIDDEN',
        message: 'metrics answer only on the loopback interface unless IKI_METRICS_TOKEN is set', requestId: res.locals['requestId'] } });
      return;
    }
    if (metricsToken !== undefined) {
      const given = /^Bearer (.+)$/.exec(req.get('authorization') ?? '')?.[1] ?? '';
      if (!timingSafeEqual(digest(given), digest(metricsToken.reveal()))) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="iki-metrics"');
        res.status(401).json({ error: { code: 'UNAUTHENTICATED', message: 'the metrics token is required',
          requestId: res.locals['requestId'] } });
        return;
      }
    }
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.end(await metrics.registry.metrics());
  });
  return router;
}
