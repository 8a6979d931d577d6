/**
 * Prometheus metrics (issue 13 item 3), one registry per running service so that tests can
 * run several services in one process. What is counted and why:
 *
 * - `iki_http_requests_total{method,route,status}` and `iki_http_request_duration_seconds`:
 *   `route` is the route's pattern (`/api/licenses/:licenseId/key`), never the path, so ids
 *   do not multiply the series; unmatched paths (pages, 404s) are `other`.
 * - `iki_key_releases_total{outcome}`: `released` or the refusal's error code.
 * - `iki_copy_bytes_total`: license-copy bytes written to clients, counted as they are sent.
 * - `iki_upload_checks_total{result}`: master uploads, `accepted` or the refusal's error code.
 * - `iki_worker_queue_depth` and `iki_worker_jobs_running`: the worker pool, read at scrape.
 * - `iki_worker_recycles_total`: workers replaced for their WebAssembly memory, and
 *   `iki_worker_wasm_memory_bytes`: that memory over the serving workers (issue 28 item 5).
 * - Node's default metrics, among them `nodejs_eventloop_lag_seconds`. The event loop's delay
 *   is sampled every 100 ms (`EVENT_LOOP_SAMPLE_MS`), not prom-client's 10: its timer woke an
 *   idle instance 100 times a second, about 5 ms of CPU per second on this machine, half of
 *   what an idle instance spent (issue 28 item 1, bench/RESULTS.md). A stall of the loop
 *   still shows in the `nodejs_eventloop_lag_*` gauges: the timer fires late by that much.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Milliseconds between two samples of the event loop's delay (see the module comment). */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** What the pool reports at scrape time. */
export interface PoolGauges {
  queued(): number;
  running(): number;
  recycles(): number;
  memory(): number[];
}

/** The metrics of one service. */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly latency: Histogram<'method' | 'route'>;
  readonly keyReleases: Counter<'outcome'>;
  readonly copyBytes: Counter;
  readonly uploadChecks: Counter<'result'>;

  private pool: PoolGauges | undefined;

  constructor(pool?: PoolGauges) {
    this.pool = pool;
    const gauges = () => this.pool;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    this.requests = new Counter({ name: 'iki_http_requests_total', help: 'HTTP requests answered, by route and status',
      labelNames: ['method', 'route', 'status'], registers });
    this.latency = new Histogram({ name: 'iki_http_request_duration_seconds',
      help: 'Time from request to the end of the answer, by route', labelNames: ['method', 'route'], registers,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] });
    this.keyReleases = new Counter({ name: 'iki_key_releases_total',
      help: 'Key release requests: released, or the error code of the refusal', labelNames: ['outcome'], registers });
    this.copyBytes = new Counter({ name: 'iki_copy_bytes_total', help: 'License-copy bytes sent to clients', registers });
    this.uploadChecks = new Counter({ name: 'iki_upload_checks_total',
      help: 'Master uploads checked: accepted, or the error code of the refusal', labelNames: ['result'], registers });
    new Gauge({ name: 'iki_worker_queue_depth', help: 'Worker-pool jobs waiting for a worker', registers,
      collect() { this.set(gauges()?.queued() ?? 0); } });
    new Gauge({ name: 'iki_worker_jobs_running', help: 'Worker-pool jobs running', registers,
      collect() { this.set(gauges()?.running() ?? 0); } });
    new Counter({ name: 'iki_worker_recycles_total', help: 'Workers replaced by a fresh one for their WebAssembly memory',
      registers, collect() { this.reset(); this.inc(gauges()?.recycles() ?? 0); } });
    new Gauge({ name: 'iki_worker_wasm_memory_bytes', help: 'WebAssembly memory of the serving workers, summed', registers,
      collect() { this.set((gauges()?.memory() ?? []).reduce((a, b) => a + b, 0)); } });
  }

  /** Reads the pool's gauges from now on (the metrics exist before the pool is started). */
  watchPool(pool: PoolGauges | undefined): void {
    this.pool = pool;
  }
}
