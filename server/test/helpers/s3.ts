/**
 * Buckets for the S3 blob store's tests, on the server the global setup started
 * (`global-s3.ts`): each test file makes its own bucket, so files running at once never meet.
 */
import { randomBytes } from 'node:crypto';
import { AbortMultipartUploadCommand, CreateBucketCommand, DeleteObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command,
  S3Client } from '@aws-sdk/client-s3';
import { inject } from 'vitest';
import { Redacted } from '../../src/redacted.js';
import { S3_DEFAULTS, type S3Settings } from '../../src/s3-config.js';
import { s3Client } from '../../src/storage/s3-read.js';

/** The endpoint of the tests' S3 server, '' when the S3 suites are skipped (IKI_SKIP_S3=1). */
export const s3Endpoint = (): string => inject('s3Endpoint');

/** Settings for `bucket` on `endpoint`, short timeouts and one attempt unless overridden. */
export function s3Settings(endpoint: string, bucket: string, more: Partial<S3Settings> = {}): S3Settings {
  return { ...S3_DEFAULTS, endpoint, bucket, prefix: 'iki/', forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: new Redacted('test') },
    connectTimeoutMs: 1000, requestTimeoutMs: 10_000, maxAttempts: 1, ...more };
}

/** The environment a service process needs for `settings` (`IKI_BLOB_STORE=s3`). */
export function s3Env(settings: S3Settings): Record<string, string> {
  return { IKI_BLOB_STORE: 's3', IKI_S3_ENDPOINT: settings.endpoint ?? '', IKI_S3_BUCKET: settings.bucket,
    IKI_S3_PREFIX: settings.prefix, IKI_S3_ACCESS_KEY_ID: 'test', IKI_S3_SECRET_ACCESS_KEY: 'test',
    IKI_S3_PART_BYTES: String(settings.partBytes), IKI_S3_MAX_ATTEMPTS: String(settings.maxAttempts) };
}

/** A new, empty bucket on `endpoint`; its settings and an admin client. */
export async function freshBucket(endpoint = s3Endpoint(), more: Partial<S3Settings> = {}):
  Promise<{ settings: S3Settings; admin: S3Client }> {
  const bucket = `iki-test-${randomBytes(6).toString('hex')}`;
  const settings = s3Settings(endpoint, bucket, more);
  const admin = s3Client(settings);
  await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  return { settings, admin };
}

/** Every key in the bucket under `prefix`. */
export async function keysIn(admin: S3Client, bucket: string, prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await admin.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix,
      ...(token === undefined ? {} : { ContinuationToken: token }) }));
    keys.push(...(page.Contents ?? []).map((o) => o.Key ?? ''));
    token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return keys.sort();
}

/** Keys of the unfinished multipart uploads in the bucket. */
export async function uploadsIn(admin: S3Client, bucket: string): Promise<string[]> {
  const page = await admin.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  return (page.Uploads ?? []).map((u) => u.Key ?? '').sort();
}

/** Deletes every object and aborts every unfinished multipart upload of the bucket. */
export async function emptyBucket(admin: S3Client, bucket: string): Promise<void> {
  for (const key of await keysIn(admin, bucket)) await admin.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  const page = await admin.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  for (const u of page.Uploads ?? []) {
    await admin.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key, UploadId: u.UploadId }));
  }
}
