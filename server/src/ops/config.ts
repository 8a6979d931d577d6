/**
 * Operational settings (issue 13), read by `config.ts` with its validating reader: the worker
 * pool, the drain on SIGTERM, the metrics token, the access log and the shared-state rule for
 * several instances on one database.
 */
import { availableParallelism } from 'node:os';
import type { Redacted } from '../redacted.js';

/** The operational part of the configuration. */
export interface OpsConfig {
  /** Worker threads for copies, upload checks, identify and password hashing (IKI_WORKERS). */
  workers: number;
  /**
   * A worker whose WebAssembly memory passed this many MiB is replaced by a fresh one once
   * idle (IKI_WORKER_RECYCLE_MB; 0 turns recycling off).
   */
  workerRecycleMb: number;
  /** How long such a worker must be idle before it is replaced (IKI_WORKER_RECYCLE_IDLE_SECONDS). */
  workerRecycleIdleSeconds: number;
  /** Longest wait for running requests on SIGTERM before they are cut (IKI_DRAIN_SECONDS). */
  drainSeconds: number;
  /**
   * On SIGTERM, how long `/readyz` answers 503 with the listener still open, before it closes
   * (IKI_DRAIN_DELAY_SECONDS): the time a load balancer needs to see it and stop routing here.
   */
  drainDelaySeconds: number;
  /** When set, `/metrics` answers only `Authorization: Bearer <token>` (IKI_METRICS_TOKEN). */
  metricsToken: Redacted | undefined;
  /** One JSON line per request on stderr (IKI_ACCESS_LOG, `on` or `off`). */
  accessLog: boolean;
  /**
   * The operator declares `<dataDir>/masters` shared by every instance (a network file system
   * mounted on each; IKI_BLOB_DIR_SHARED=1): the one way to use the `fs` blob store with
   * DATABASE_URL.
   */
  blobDirShared: boolean;
  /**
   * `/readyz` fails when the data directory or the masters directory has less free space
   * than this, in MiB (IKI_MIN_FREE_MB): the instance stops taking work before its disk is full.
   */
  minFreeMb: number;
}

/** Defaults and why. */
export const OPS_DEFAULTS = {
  // One worker per core: copies and checks are CPU-bound WASM, and the event loop itself
  // mostly waits on I/O.
  workers: Math.max(1, availableParallelism()),
  // A fresh worker's WebAssembly memory is about 1.3 MiB and a check of a 1 MiB master grows
  // it to about 7 MiB (test/worker-recycle.test.ts); a large identify or master check grows
  // one to hundreds of MiB, which WebAssembly never gives back (issue 28 item 5).
  workerRecycleMb: 64,
  // Long enough that a burst of jobs does not restart workers between them, short enough to
  // give the memory back within a minute.
  workerRecycleIdleSeconds: 10,
  // Long enough for a 512 MiB copy at ~20 MB/s; systemd's default TimeoutStopSec is 90 s.
  drainSeconds: 60,
  // Two failed health checks at a load balancer's usual 2 s interval, with a margin; Kubernetes'
  // endpoints usually update within a few seconds.
  drainDelaySeconds: 5,
  // A few master uploads' worth (IKI_MAX_MASTER_BYTES is 1 GiB, most masters are far smaller)
  // and room for PGlite's WAL segments (16 MiB each) and checkpoints.
  minFreeMb: 256,
} as const;

/** The reader's calls `readOpsConfig` needs. */
export interface OpsReader {
  int(name: string, fallback: number, min: number, max: number): number;
  str(name: string): string | undefined;
  secret(name: string): string | undefined;
  problem(message: string): void;
  redact(value: string): Redacted;
}

function flag(r: OpsReader, name: string, fallback: boolean, on: string, off: string): boolean {
  const raw = r.str(name);
  if (raw === undefined) return fallback;
  if (raw === on) return true;
  if (raw === off) return false;
  r.problem(`${name} must be "${on}" or "${off}"`);
  return fallback;
}

/** Reads the operational settings. */
export function readOpsConfig(r: OpsReader): OpsConfig {
  const token = r.secret('IKI_METRICS_TOKEN');
  if (token !== undefined && token.length < 16) r.problem('IKI_METRICS_TOKEN must be at least 16 characters');
  return {
    workers: r.int('IKI_WORKERS', OPS_DEFAULTS.workers, 1, 256),
    workerRecycleMb: r.int('IKI_WORKER_RECYCLE_MB', OPS_DEFAULTS.workerRecycleMb, 0, 65_536),
    workerRecycleIdleSeconds: r.int('IKI_WORKER_RECYCLE_IDLE_SECONDS', OPS_DEFAULTS.workerRecycleIdleSeconds, 0, 3600),
    drainSeconds: r.int('IKI_DRAIN_SECONDS', OPS_DEFAULTS.drainSeconds, 0, 24 * 3600),
    drainDelaySeconds: r.int('IKI_DRAIN_DELAY_SECONDS', OPS_DEFAULTS.drainDelaySeconds, 0, 3600),
    metricsToken: token === undefined ? undefined : r.redact(token),
    accessLog: flag(r, 'IKI_ACCESS_LOG', true, 'on', 'off'),
    blobDirShared: flag(r, 'IKI_BLOB_DIR_SHARED', false, '1', '0'),
    minFreeMb: r.int('IKI_MIN_FREE_MB', OPS_DEFAULTS.minFreeMb, 0, 1 << 30),
  };
}

/**
 * Several instances on one database must agree on the service id (it signs tokens and license
 * copies) and see the same master bytes: with DATABASE_URL, IKI_PUBLIC_URL and a shared blob
 * store are required. Returns the problems (empty when fine).
 */
export function sharedStateProblems(c: {
  databaseUrl: unknown; publicUrlConfigured: boolean; blobStore: string; ops: OpsConfig;
}): string[] {
  if (c.databaseUrl === undefined) return [];
  const problems: string[] = [];
  if (!c.publicUrlConfigured) {
    problems.push('IKI_PUBLIC_URL is required when DATABASE_URL is set: every instance on one database must use '
      + 'the same public URL, or they refuse each other\'s tokens and sign copies for different services');
  }
  if (c.blobStore === 'fs' && !c.ops.blobDirShared) {
    problems.push('a shared blob store is required when DATABASE_URL is set: IKI_BLOB_STORE=s3 or postgres, or '
      + 'IKI_BLOB_DIR_SHARED=1 to declare <IKI_DATA_DIR>/masters a directory every instance shares; a local '
      + 'directory would serve different bytes under one ETag');
  }
  return problems;
}
