/**
 * Settings of the S3 blob store (`IKI_BLOB_STORE=s3`, issue 23 item 8), read by `config.ts` with
 * its validating reader: masters in a bucket of any S3-compatible object store (AWS S3, MinIO,
 * Ceph RGW, ...). Their shapes, defaults and why.
 */
import { Redacted } from './redacted.js';

/** Where and how the S3 blob store connects. */
export interface S3Settings {
  /** `IKI_S3_ENDPOINT`: an http(s) URL; absent means AWS S3's own endpoint for the region. */
  endpoint: string | undefined;
  /** `IKI_S3_REGION`, default `us-east-1` (what most S3-compatible servers accept). */
  region: string;
  /** `IKI_S3_BUCKET` (required): an existing bucket; the service never creates one. */
  bucket: string;
  /**
   * `IKI_S3_PREFIX`: the keys' common beginning, empty or ending in `/` (default empty).
   * Masters are `<prefix>masters/<id>.ikm`, pending uploads `<prefix>pending/<name>`.
   */
  prefix: string;
  /**
   * `IKI_S3_ACCESS_KEY_ID` and `IKI_S3_SECRET_ACCESS_KEY` (or `_FILE`), both or neither; neither
   * means the SDK's default chain (AWS_* variables, shared files, instance or pod role).
   */
  credentials: { accessKeyId: string; secretAccessKey: Redacted } | undefined;
  /** `IKI_S3_FORCE_PATH_STYLE` (`1`/`0`, default 1 with an endpoint, 0 without): `host/bucket/key` URLs. */
  forcePathStyle: boolean;
  /** `IKI_S3_CONNECT_TIMEOUT_MS` (default 3000): longest wait for a TCP connection. */
  connectTimeoutMs: number;
  /** `IKI_S3_REQUEST_TIMEOUT_MS` (default 30000): longest silence of a socket in a request. */
  requestTimeoutMs: number;
  /** `IKI_S3_MAX_ATTEMPTS` (default 3): attempts per request, the SDK's retry with backoff. */
  maxAttempts: number;
  /** `IKI_S3_PART_BYTES` (default 8 MiB, 5 MiB to 512 MiB): multipart upload part size. */
  partBytes: number;
  /** `IKI_S3_RANGE_BYTES` (default 8 MiB, 64 KiB to 1 GiB): one ranged GET of a read. */
  rangeBytes: number;
}

const MIB = 1024 * 1024;

export const S3_DEFAULTS = {
  region: 'us-east-1',
  connectTimeoutMs: 3000,
  requestTimeoutMs: 30_000,
  maxAttempts: 3,
  partBytes: 8 * MIB,
  rangeBytes: 8 * MIB,
} as const;

/** The smallest part S3 accepts (every part but the last). */
export const S3_MIN_PART_BYTES = 5 * MIB;

/** The reader's calls `readS3Settings` needs (config.ts `Reader`). */
export interface S3Reader {
  int(name: string, fallback: number, min: number, max: number): number;
  str(name: string): string | undefined;
  secret(name: string): string | undefined;
  url(name: string): string | undefined;
  problem(message: string): void;
  redact(value: string): Redacted;
}

const S3_VARIABLES = ['IKI_S3_ENDPOINT', 'IKI_S3_REGION', 'IKI_S3_BUCKET', 'IKI_S3_PREFIX', 'IKI_S3_ACCESS_KEY_ID',
  'IKI_S3_SECRET_ACCESS_KEY', 'IKI_S3_SECRET_ACCESS_KEY_FILE', 'IKI_S3_FORCE_PATH_STYLE', 'IKI_S3_CONNECT_TIMEOUT_MS',
  'IKI_S3_REQUEST_TIMEOUT_MS', 'IKI_S3_MAX_ATTEMPTS', 'IKI_S3_PART_BYTES', 'IKI_S3_RANGE_BYTES'];

/** Bucket names S3 accepts (3 to 63 of lowercase letters, digits, dots and dashes). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** Safe key characters (AWS's "safe" set), ending in `/`; no `//`, no leading `/` (and no `.` or `..` segment). */
const PREFIX = /^(?:[A-Za-z0-9!_.*'()-]+\/){0,16}$/;

/**
 * Reads the S3 settings when `IKI_BLOB_STORE=s3` (`store`); otherwise any IKI_S3_* variable set is a
 * problem (it would silently do nothing).
 */
export function readS3Settings(r: S3Reader, store: string): S3Settings | undefined {
  if (store !== 's3') {
    const stray = S3_VARIABLES.filter((name) => r.str(name) !== undefined);
    if (stray.length > 0) r.problem(`${stray.join(', ')} take effect only with IKI_BLOB_STORE=s3`);
    return undefined;
  }
  const endpoint = r.url('IKI_S3_ENDPOINT');
  const bucket = r.str('IKI_S3_BUCKET');
  if (bucket === undefined) r.problem('IKI_S3_BUCKET is required with IKI_BLOB_STORE=s3');
  else if (!BUCKET.test(bucket)) r.problem('IKI_S3_BUCKET must be a bucket name: 3 to 63 of a-z 0-9 . -');
  const prefix = r.str('IKI_S3_PREFIX') ?? '';
  if (!PREFIX.test(prefix) || prefix.split('/').some((part) => part === '.' || part === '..')) {
    r.problem('IKI_S3_PREFIX must be empty or up to 16 segments of A-Z a-z 0-9 ! _ . * \' ( ) - (not . or ..), '
      + 'each ending in /, such as iki/');
  }
  const region = r.str('IKI_S3_REGION') ?? S3_DEFAULTS.region;
  if (!/^[a-z0-9-]{1,32}$/.test(region)) r.problem('IKI_S3_REGION must be 1 to 32 of a-z 0-9 -');
  const keyId = r.str('IKI_S3_ACCESS_KEY_ID');
  const secret = r.secret('IKI_S3_SECRET_ACCESS_KEY');
  if ((keyId === undefined) !== (secret === undefined)) {
    r.problem('IKI_S3_ACCESS_KEY_ID and IKI_S3_SECRET_ACCESS_KEY go together: set both, or neither for the SDK\'s default chain');
  }
  const pathStyle = r.str('IKI_S3_FORCE_PATH_STYLE');
  if (pathStyle !== undefined && pathStyle !== '1' && pathStyle !== '0') r.problem('IKI_S3_FORCE_PATH_STYLE must be "1" or "0"');
  return {
    endpoint,
    region,
    bucket: bucket ?? '',
    prefix,
    credentials: keyId !== undefined && secret !== undefined
      ? { accessKeyId: keyId, secretAccessKey: r.redact(secret) } : undefined,
    forcePathStyle: pathStyle === undefined ? endpoint !== undefined : pathStyle === '1',
    connectTimeoutMs: r.int('IKI_S3_CONNECT_TIMEOUT_MS', S3_DEFAULTS.connectTimeoutMs, 100, 120_000),
    requestTimeoutMs: r.int('IKI_S3_REQUEST_TIMEOUT_MS', S3_DEFAULTS.requestTimeoutMs, 100, 600_000),
    maxAttempts: r.int('IKI_S3_MAX_ATTEMPTS', S3_DEFAULTS.maxAttempts, 1, 10),
    partBytes: r.int('IKI_S3_PART_BYTES', S3_DEFAULTS.partBytes, S3_MIN_PART_BYTES, 512 * MIB),
    rangeBytes: r.int('IKI_S3_RANGE_BYTES', S3_DEFAULTS.rangeBytes, 64 * 1024, 1024 * MIB),
  };
}

/**
 * The settings as they cross to a worker thread (`worker-pool/`), which reads objects itself:
 * a structured clone keeps no `Redacted` value, so the secret travels as a plain string.
 */
export type S3WireSettings = Omit<S3Settings, 'credentials'> & {
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
};

export function s3ToWire(s: S3Settings): S3WireSettings {
  return { ...s, credentials: s.credentials === undefined ? undefined
    : { accessKeyId: s.credentials.accessKeyId, secretAccessKey: s.credentials.secretAccessKey.reveal() } };
}

export function s3FromWire(w: S3WireSettings): S3Settings {
  return { ...w, credentials: w.credentials === undefined ? undefined
    : { accessKeyId: w.credentials.accessKeyId, secretAccessKey: new Redacted(w.credentials.secretAccessKey) } };
}

/** S3's most parts in one multipart upload. */
export const S3_MAX_PARTS = 10_000;

/** The largest master must fit in `S3_MAX_PARTS` parts of `IKI_S3_PART_BYTES`; returns the problem, if any. */
export function s3PartProblem(s3: S3Settings | undefined, masterBytes: number): string | undefined {
  if (s3 === undefined || masterBytes <= s3.partBytes * S3_MAX_PARTS) return undefined;
  return `IKI_MAX_MASTER_BYTES (${masterBytes}) needs IKI_S3_PART_BYTES of at least ${Math.ceil(masterBytes / S3_MAX_PARTS)}: `
    + `S3 takes at most ${S3_MAX_PARTS} parts per upload`;
}
