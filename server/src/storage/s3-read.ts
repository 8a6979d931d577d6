/**
 * Reading objects of the S3 blob store (`s3-blobs.ts`) as a stream of ranged GETs, and what an
 * S3 failure means for a client: an object store that cannot be reached, is overloaded or
 * refuses this service's credentials is `STORAGE_UNAVAILABLE` (503 with Retry-After).
 */
import type { Readable } from 'node:stream';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { s3FromWire, type S3Settings } from '../s3-config.js';
import { READ_CHUNK_BYTES, type ObjectRef } from './blobs.js';
import { isUnreachable, storageUnavailable } from './unavailable.js';

/**
 * Error names of the SDK and of S3 that mean "the store cannot serve this service now":
 * timeouts, throttling, a missing bucket and refused credentials (an operator's fix, not the
 * client's fault, and a retry succeeds once it is made).
 */
const OUTAGE_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'SlowDown', 'ServiceUnavailable', 'InternalError',
  'NoSuchBucket', 'AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken',
  'CredentialsProviderError', 'RequestTimeTooSkewed', 'NetworkingError']);

/** Whether `err` (from the SDK or a body stream) says the object store cannot be used now. */
export function isS3Outage(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (isUnreachable(err)) return true;
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return OUTAGE_NAMES.has(err.name) || (status !== undefined && status >= 500)
    || (err as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE';
}

/** `STORAGE_UNAVAILABLE` for an S3 outage; `err` unchanged otherwise. */
export function s3Failure(err: unknown): unknown {
  return isS3Outage(err) ? storageUnavailable() : err;
}

/** A client for `s`: its timeouts and retries, and checksums only where S3 requires them. */
export function s3Client(s: S3Settings): S3Client {
  return new S3Client({
    region: s.region,
    ...(s.endpoint === undefined ? {} : { endpoint: s.endpoint }),
    forcePathStyle: s.forcePathStyle,
    ...(s.credentials === undefined ? {}
      : { credentials: { accessKeyId: s.credentials.accessKeyId, secretAccessKey: s.credentials.secretAccessKey.reveal() } }),
    maxAttempts: s.maxAttempts,
    requestHandler: { connectionTimeout: s.connectTimeoutMs, requestTimeout: s.requestTimeoutMs },
    // Many S3-compatible servers reject the SDK's default CRC trailers; a master's integrity is
    // the container's own (every chunk hashed and signed, checked on upload and on each copy).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** A worker thread's clients, one per distinct settings (in practice one). */
const workerClients = new Map<string, S3Client>();

/** `ref`'s bytes read by this thread (a worker's), with a client it keeps for later reads. */
export function readObject(ref: ObjectRef): AsyncGenerator<Uint8Array> {
  const id = JSON.stringify(ref.settings);
  let client = workerClients.get(id);
  if (client === undefined) workerClients.set(id, client = s3Client(s3FromWire(ref.settings)));
  return rangedRead({ client, bucket: ref.settings.bucket, key: ref.key, rangeBytes: ref.settings.rangeBytes });
}

/** What a ranged read needs. */
export interface RangedObject {
  client: S3Client;
  bucket: string;
  key: string;
  /** Bytes per GET. */
  rangeBytes: number;
}

/** Total size from `Content-Range: bytes a-b/total`. */
function totalOf(contentRange: string | undefined, contentLength: number | undefined): number | undefined {
  const m = contentRange === undefined ? null : /\/([0-9]+)$/.exec(contentRange);
  return m?.[1] !== undefined ? Number(m[1]) : contentLength;
}

const isInvalidRange = (err: unknown): boolean => err instanceof Error
  && (err.name === 'InvalidRange' || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 416);

/**
 * The object's bytes, `rangeBytes` per GET, each GET opened only when the consumer has taken
 * the previous one's bytes: memory stays at one piece of up to `READ_CHUNK_BYTES`, and a slow
 * consumer slows the reads. Every GET after the first carries the first one's ETag
 * (`If-Match`), so a replaced object fails rather than mixing versions. A body cut after some
 * progress (an idle socket timed out while the consumer paused, a reset) is resumed from the
 * byte reached; a GET that makes no progress fails.
 */
export async function* rangedRead(o: RangedObject): AsyncGenerator<Uint8Array> {
  let offset = 0;
  let total: number | undefined;
  let etag: string | undefined;
  while (total === undefined || offset < total) {
    const end = Math.min(offset + o.rangeBytes, total ?? Number.MAX_SAFE_INTEGER) - 1;
    let body: Readable;
    try {
      const got = await o.client.send(new GetObjectCommand({ Bucket: o.bucket, Key: o.key, Range: `bytes=${offset}-${end}`,
        ...(etag === undefined ? {} : { IfMatch: etag }) }));
      total ??= totalOf(got.ContentRange, got.ContentLength);
      etag ??= got.ETag;
      body = got.Body as Readable;
    } catch (err) {
      // An empty object has no byte 0 to ask for.
      if (offset === 0 && total === undefined && isInvalidRange(err)) return;
      throw s3Failure(err);
    }
    const before = offset;
    try {
      for await (const piece of coalesce(body)) {
        offset += piece.length;
        yield piece;
      }
    } catch (err) {
      if (offset === before) throw s3Failure(err);
      continue;
    } finally {
      body.destroy();
    }
    if (offset === before && total !== undefined && offset < total) throw storageUnavailable();
  }
}

/** A body's pieces joined up to `READ_CHUNK_BYTES`, so that fewer, larger pieces cross to a worker. */
async function* coalesce(body: Readable): AsyncGenerator<Uint8Array> {
  let parts: Buffer[] = [];
  let size = 0;
  for await (const part of body) {
    parts.push(part as Buffer);
    size += (part as Buffer).length;
    if (size >= READ_CHUNK_BYTES) {
      yield Buffer.concat(parts, size);
      parts = [];
      size = 0;
    }
  }
  if (size > 0) yield Buffer.concat(parts, size);
}
