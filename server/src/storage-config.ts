/**
 * Settings of the storage layer (issue 16; issue 13 item 2), read by `config.ts` with its
 * validating reader: their shapes, defaults and why.
 */
import { hostname } from 'node:os';
import { readDbTimeouts, type DbTimeouts } from './db-config.js';

/** How the database and the blob store are run. */
export interface StorageSettings {
  /** Connections of the PostgreSQL pool (`IKI_DB_POOL`, default 10, 1 to 200). */
  dbPool: number;
  /** Connect, query and statement timeouts and TCP keepalive of that pool (db-config.ts). */
  dbTimeouts: DbTimeouts;
  /**
   * PGlite commits are fsynced (`IKI_PGLITE_DURABLE`, default 1). 0 trades power-loss safety
   * for speed (a crash of the process alone still loses nothing acknowledged).
   */
  pgliteDurable: boolean;
  /**
   * Days key-release and event rows are kept (`IKI_RETENTION_DAYS`, default 400, 0 keeps
   * everything, else 31 to 100000). At least 31 days: longer than the longest limit window a
   * configuration allows (30 days), so rows a limit counts are never pruned.
   */
  retentionDays: number;
  /**
   * Seconds after which any pending (unfinished) upload counts as abandoned and is swept at
   * start, whichever instance began it (`IKI_UPLOAD_STALE_SECONDS`, default 86400). Pending
   * uploads of this instance whose process is gone are swept at once.
   */
  uploadStaleSeconds: number;
  /**
   * Names this instance in its pending uploads (`IKI_INSTANCE_ID`, default the host name),
   * `[A-Za-z0-9_-]`, at most 64 characters.
   */
  instanceId: string;
}

export const STORAGE_DEFAULTS = {
  dbPool: 10,
  retentionDays: 400,
  uploadStaleSeconds: 24 * 3600,
} as const;

type IntReader = (name: string, fallback: number, min: number, max: number) => number;
type StrReader = (name: string) => string | undefined;

/** The host name reduced to the characters an instance id may hold. */
export function defaultInstanceId(): string {
  return hostname().replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'host';
}

function retention(days: number, problems: string[]): number {
  if (days !== 0 && days < 31) {
    problems.push('IKI_RETENTION_DAYS must be 0 (keep everything) or 31 to 100000');
    return STORAGE_DEFAULTS.retentionDays;
  }
  return days;
}

/** Reads the storage settings; problems go to `problems`. */
export function readStorageSettings(int: IntReader, str: StrReader, problems: string[]): StorageSettings {
  const instance = str('IKI_INSTANCE_ID');
  if (instance !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(instance)) {
    problems.push('IKI_INSTANCE_ID must be 1 to 64 of A-Z a-z 0-9 _ -');
  }
  return {
    dbPool: int('IKI_DB_POOL', STORAGE_DEFAULTS.dbPool, 1, 200),
    dbTimeouts: readDbTimeouts(int, problems),
    pgliteDurable: int('IKI_PGLITE_DURABLE', 1, 0, 1) === 1,
    retentionDays: retention(int('IKI_RETENTION_DAYS', STORAGE_DEFAULTS.retentionDays, 0, 100_000), problems),
    uploadStaleSeconds: int('IKI_UPLOAD_STALE_SECONDS', STORAGE_DEFAULTS.uploadStaleSeconds, 60, 365 * 24 * 3600),
    instanceId: instance !== undefined && /^[A-Za-z0-9_-]{1,64}$/.test(instance) ? instance : defaultInstanceId(),
  };
}
