/**
 * Masters in an S3-compatible bucket (`IKI_BLOB_STORE=s3`, issue 23 item 8), with the other
 * stores' guarantees:
 *
 * - An upload streams to `<prefix>pending/<pendingName>` (a multipart upload through
 *   `@aws-sdk/lib-storage` above one part, else one PUT), is read back from there for the
 *   complete check, and is copied server-side to `<prefix>masters/<id>.ikm` only when its master
 *   is recorded (`commit`, called inside the recording transaction under the per-content lock,
 *   `sql-masters.ts`), then the pending object is deleted. Nothing reads a master but through its
 *   record, so a master is visible only once its check passed and its record committed; a
 *   record that fails to commit has its object removed (`MasterService.store`).
 * - Identical masters share one object: the dedupe is the record's (`recordMaster`).
 * - A read is a chain of ranged GETs opened as the consumer pulls (`s3-read.ts`).
 * - Deletes and the sweep of abandoned pending uploads (objects and unfinished multipart
 *   uploads) reach the bucket.
 * - S3 and network failures are `STORAGE_UNAVAILABLE` (503 with Retry-After).
 */
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CopyObjectCommand, CreateMultipartUploadCommand,
  DeleteObjectCommand, HeadBucketCommand, ListMultipartUploadsCommand, ListObjectsV2Command, type S3Client,
  UploadPartCopyCommand, type CompletedPart,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { S3_MIN_PART_BYTES, s3ToWire, type S3Settings, type S3WireSettings } from '../s3-config.js';
import { checkId, isAbandoned, pendingName, READ_CHUNK_BYTES, THIS_PROCESS, type BlobStore, type BlobUpload,
  type ObjectBacked, type PendingOwner } from './blobs.js';
import { rangedRead, s3Client, s3Failure } from './s3-read.js';

const GIB = 1024 * 1024 * 1024;

/** The largest object one CopyObject may copy (S3's limit); larger ones are copied in parts. */
export const MAX_SINGLE_COPY_BYTES = 5 * GIB;

/** Parts in flight per upload: memory is about (this + 1) x the part size per upload. */
const UPLOAD_QUEUE = 2;

/** Tuning that tests shrink: when a commit copies in parts, and how large each is. */
export interface S3CopyTuning {
  /** Objects larger than this are copied with UploadPartCopy (default `MAX_SINGLE_COPY_BYTES`). */
  singleCopyMaxBytes: number;
  /** Part size of such a copy (default 1 GiB; at least 5 MiB). */
  copyPartBytes: number;
}

async function send<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (err) {
    throw s3Failure(err);
  }
}

/** Masters as objects of one bucket. */
export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  private readonly wire: S3WireSettings;
  private readonly pendingPrefix: string;
  private readonly tuning: S3CopyTuning;

  constructor(readonly settings: S3Settings, private readonly owner: PendingOwner = THIS_PROCESS,
    tuning: Partial<S3CopyTuning> = {}, client?: S3Client) {
    this.client = client ?? s3Client(settings);
    this.wire = s3ToWire(settings);
    this.pendingPrefix = `${settings.prefix}pending/`;
    this.tuning = { singleCopyMaxBytes: MAX_SINGLE_COPY_BYTES, copyPartBytes: GIB, ...tuning };
    if (this.tuning.copyPartBytes < S3_MIN_PART_BYTES) throw new RangeError('copyPartBytes must be at least 5 MiB');
  }

  async begin(): Promise<BlobUpload> {
    return new S3Upload(this, `${this.pendingPrefix}${pendingName(this.owner)}`);
  }

  /** The master's bytes; the result also names its object, which a worker thread may read itself. */
  read(id: string): ObjectBacked {
    return this.object(this.masterKey(id));
  }

  /** Deleting a missing object succeeds (S3's DeleteObject is idempotent). */
  async remove(id: string): Promise<void> {
    const key = this.masterKey(id);
    await send(() => this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key })));
  }

  /** Deletes abandoned pending objects and aborts abandoned unfinished multipart uploads (`isAbandoned`). */
  async sweep(): Promise<void> {
    const { bucket } = this.settings;
    const now = Date.now();
    const abandoned = (key: string, at: Date | undefined) =>
      isAbandoned(key.slice(this.pendingPrefix.length), this.owner, now, at?.getTime() ?? now);
    let token: string | undefined;
    do {
      const page = await send(() => this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: this.pendingPrefix,
        ...(token === undefined ? {} : { ContinuationToken: token }) })));
      for (const o of page.Contents ?? []) {
        if (o.Key !== undefined && abandoned(o.Key, o.LastModified)) {
          await send(() => this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key })));
        }
      }
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    let marker: { KeyMarker?: string; UploadIdMarker?: string } = {};
    for (;;) {
      const page = await send(() => this.client.send(new ListMultipartUploadsCommand({ Bucket: bucket,
        Prefix: this.pendingPrefix, ...marker })));
      for (const u of page.Uploads ?? []) {
        // Not `Initiated`: S3-compatible servers differ in it (moto reports a fixed date); the
        // name carries the start time (`pendingName`).
        if (u.Key !== undefined && u.UploadId !== undefined && abandoned(u.Key, undefined)) {
          await send(() => this.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key, UploadId: u.UploadId })));
        }
      }
      if (page.IsTruncated !== true) break;
      marker = { ...(page.NextKeyMarker === undefined ? {} : { KeyMarker: page.NextKeyMarker }),
        ...(page.NextUploadIdMarker === undefined ? {} : { UploadIdMarker: page.NextUploadIdMarker }) };
    }
  }

  /** The bucket answers to this service's credentials (`/readyz`, and once at start). */
  async check(): Promise<void> {
    await send(() => this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket })));
  }

  /** `check` at start: a bucket that is missing, refuses the credentials or cannot be reached stops the start, saying which. */
  async open(): Promise<void> {
    const { bucket, endpoint } = this.settings;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: bucket }));
    } catch (err) {
      const e = err as Error & { code?: string; $metadata?: { httpStatusCode?: number } };
      const status = e.$metadata?.httpStatusCode;
      const reason = `${e.code ?? e.name}${status === undefined ? '' : ` (HTTP ${status})`}`;
      throw new Error(`the S3 bucket ${bucket} at ${endpoint ?? 'AWS S3'} cannot be used: ${reason}; `
        + 'check IKI_S3_BUCKET, IKI_S3_ENDPOINT and the credentials');
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  /** One object: each iteration a fresh chain of ranged GETs here; `object` for a worker thread's own. */
  object(key: string): ObjectBacked {
    const o = { client: this.client, bucket: this.settings.bucket, key, rangeBytes: this.settings.rangeBytes };
    return { object: { settings: this.wire, key }, [Symbol.asyncIterator]: () => rangedRead(o) };
  }

  masterKey(id: string): string {
    checkId(id);
    return `${this.settings.prefix}masters/${id}.ikm`;
  }

  /** Server-side copy of `from` (`size` bytes) to `to`: one CopyObject, or parts above its limit. */
  async copy(from: string, to: string, size: number): Promise<void> {
    const { bucket } = this.settings;
    // Keys hold only S3's safe characters (`PREFIX` in s3-config.ts, `pendingName`, `checkId`).
    const source = `${bucket}/${from}`;
    if (size <= this.tuning.singleCopyMaxBytes) {
      await send(() => this.client.send(new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: source })));
      return;
    }
    const created = await send(() => this.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: to })));
    const uploadId = created.UploadId;
    try {
      const parts: CompletedPart[] = [];
      for (let start = 0, n = 1; start < size; start += this.tuning.copyPartBytes, n += 1) {
        const end = Math.min(size, start + this.tuning.copyPartBytes) - 1;
        const part = await send(() => this.client.send(new UploadPartCopyCommand({ Bucket: bucket, Key: to,
          UploadId: uploadId, PartNumber: n, CopySource: source, CopySourceRange: `bytes=${start}-${end}` })));
        parts.push({ PartNumber: n, ETag: part.CopyPartResult?.ETag });
      }
      await send(() => this.client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: to, UploadId: uploadId,
        MultipartUpload: { Parts: parts } })));
    } catch (err) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: to, UploadId: uploadId })).catch(() => {});
      throw err;
    }
  }

  async deleteKey(key: string): Promise<void> {
    await send(() => this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key })));
  }
}

/**
 * One upload: bytes go through a pipe that `Upload` reads in parts, so `write` waits while the
 * parts in flight are full (back-pressure to the HTTP request) and fails once the upload failed.
 */
class S3Upload implements BlobUpload {
  private readonly pipe = new PassThrough({ highWaterMark: READ_CHUNK_BYTES });
  private readonly done: Promise<unknown>;
  private failure: unknown;
  private written = 0;
  private state: 'writing' | 'finished' | 'committed' | 'aborted' = 'writing';

  constructor(private readonly store: S3BlobStore, private readonly key: string) {
    const upload = new Upload({ client: store.client, params: { Bucket: store.settings.bucket, Key: key, Body: this.pipe },
      partSize: store.settings.partBytes, queueSize: UPLOAD_QUEUE, leavePartsOnError: false });
    this.done = upload.done();
    this.done.catch((err: unknown) => { this.failure = err; });
  }

  async write(chunk: Uint8Array): Promise<void> {
    this.throwIfFailed();
    if (this.state !== 'writing') throw new Error('write after finish');
    this.written += chunk.length;
    if (!this.pipe.write(chunk)) await Promise.race([once(this.pipe, 'drain'), this.done]).catch(() => {});
    this.throwIfFailed();
  }

  async finish(): Promise<void> {
    if (this.state !== 'writing') return;
    this.pipe.end();
    await send(() => this.done);
    this.state = 'finished';
  }

  /** The written bytes; the result names the object, which the upload check's worker reads itself. */
  read(): ObjectBacked {
    return this.store.object(this.key);
  }

  /** A server-side copy to the master's key, then the pending object goes (a leftover is swept). */
  async commit(id: string): Promise<void> {
    if (this.state !== 'finished') throw new Error('commit before finish');
    await this.store.copy(this.key, this.store.masterKey(id), this.written);
    this.state = 'committed';
    await this.store.deleteKey(this.key).catch(() => {});
  }

  /**
   * Stops a running upload (its multipart upload is aborted by `Upload` once its parts in
   * flight settle, which this waits for) and deletes the pending object.
   */
  async abort(): Promise<void> {
    if (this.state === 'writing') {
      this.pipe.destroy(new Error('upload aborted'));
      await this.done.catch(() => {});
    }
    if (this.state === 'aborted' || this.state === 'committed') return;
    this.state = 'aborted';
    await this.store.deleteKey(this.key);
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw s3Failure(this.failure);
  }
}
