/**
 * What an instance wakes for between requests (issue 28 item 1): one request after the other
 * on a keep-alive connection must not start and stop the transfer guard's timer each, and the
 * event loop's delay is sampled every `EVENT_LOOP_SAMPLE_MS`, not every 10 ms.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type * as PerfHooks from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CONNECTION_DEFAULTS, type ConnectionLimits } from '../src/connection-config.js';
import { captureLogger } from './helpers/app.js';
import { EVENT_LOOP_SAMPLE_MS, Metrics } from '../src/ops/metrics.js';
import { TransferGuard } from '../src/ops/transfer-guard.js';

const limits: ConnectionLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, bodyTimeoutMs: 4_000,
  transferStallMs: 4_000, perClient: CONNECTION_DEFAULTS.perClient, maxConnections: 100 };

/** A request and its answer as far as the guard looks at them: headers, socket counters, events. */
function exchange(): { req: IncomingMessage; res: ServerResponse; finish: () => void } {
  const socket = Object.assign(new EventEmitter(), { bytesRead: 0, bytesWritten: 0, writableLength: 0 });
  const req = Object.assign(new EventEmitter(), { headers: {}, socket, complete: true, destroyed: false, readableLength: 0 });
  const res = Object.assign(new EventEmitter(), { setHeader: () => undefined, headersSent: false });
  return {
    req: req as unknown as IncomingMessage,
    res: res as unknown as ServerResponse,
    finish: () => { res.emit('finish'); res.emit('close'); },
  };
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('timers between requests', () => {
  it('the transfer guard keeps one timer over requests one after the other, and stops it at a look that finds none', () => {
    vi.useFakeTimers();
    const intervals = vi.spyOn(globalThis, 'setInterval');
    const guard = new TransferGuard(limits, captureLogger([]));
    for (let i = 0; i < 5; i += 1) {
      const { req, res, finish } = exchange();
      expect(guard.admit({ req, res, locals: { requestId: `r${i}` }, path: '/api/licenses/0123456789abcdef/key',
        route: () => 'route' }, '127.0.0.1')).toBe(true);
      finish();
    }
    // Before, each request started a timer and its end stopped it: five here.
    expect(intervals).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(1);
    // The next look (a quarter of the bound) finds nothing in flight and stops the watch.
    vi.advanceTimersByTime(1000);
    expect(vi.getTimerCount()).toBe(0);
    // A later request starts it again, and it looks at that request.
    const { req, res, finish } = exchange();
    guard.admit({ req, res, locals: { requestId: 'late' }, path: '/api/licenses/0123456789abcdef/key', route: () => 'route' },
      '127.0.0.1');
    expect(intervals).toHaveBeenCalledTimes(2);
    expect(vi.getTimerCount()).toBe(1);
    finish();
  });

  it('the metrics sample the event loop every EVENT_LOOP_SAMPLE_MS', async () => {
    // prom-client calls monitorEventLoopDelay through the CommonJS module object.
    const perfHooks = createRequire(import.meta.url)('node:perf_hooks') as typeof PerfHooks;
    const real = perfHooks.monitorEventLoopDelay;
    const resolutions: (number | undefined)[] = [];
    const spy = vi.spyOn(perfHooks, 'monitorEventLoopDelay').mockImplementation((options) => {
      resolutions.push(options?.resolution);
      return real(options);
    });
    const metrics = new Metrics();
    expect(spy).toHaveBeenCalled();
    expect(resolutions).toEqual([EVENT_LOOP_SAMPLE_MS]);
    expect(EVENT_LOOP_SAMPLE_MS).toBeGreaterThanOrEqual(100);
    // The lag gauges are still there.
    expect(await metrics.registry.getSingleMetricAsString('nodejs_eventloop_lag_p99_seconds')).toContain('nodejs_eventloop_lag_p99_seconds');
  });
});
