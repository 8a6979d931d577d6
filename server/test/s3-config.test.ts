/** The S3 blob store's settings (`IKI_BLOB_STORE=s3`, s3-config.ts): defaults, limits at and past, secrets. */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

const S3 = { IKI_BLOB_STORE: 's3', IKI_S3_BUCKET: 'iki-masters' };

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('S3 settings', () => {
  it('have the documented defaults', () => {
    expect(loadConfig(S3).s3).toEqual({
      endpoint: undefined, region: 'us-east-1', bucket: 'iki-masters', prefix: '', credentials: undefined,
      forcePathStyle: false, connectTimeoutMs: 3000, requestTimeoutMs: 30_000, maxAttempts: 3,
      partBytes: 8 * 1024 * 1024, rangeBytes: 8 * 1024 * 1024,
    });
    expect(loadConfig({}).s3).toBeUndefined();
    // An endpoint (MinIO, Ceph, moto) means path-style URLs unless said otherwise.
    expect(loadConfig({ ...S3, IKI_S3_ENDPOINT: 'http://minio:9000/' }).s3).toMatchObject({ endpoint: 'http://minio:9000', forcePathStyle: true });
    expect(loadConfig({ ...S3, IKI_S3_ENDPOINT: 'http://minio:9000', IKI_S3_FORCE_PATH_STYLE: '0' }).s3?.forcePathStyle).toBe(false);
  });

  it('need a bucket, both credentials or neither, and a safe prefix', () => {
    expect(problems({ IKI_BLOB_STORE: 's3' })).toEqual(['IKI_S3_BUCKET is required with IKI_BLOB_STORE=s3']);
    expect(problems({ ...S3, IKI_S3_BUCKET: 'No_Such' })).toEqual([expect.stringMatching(/^IKI_S3_BUCKET must be a bucket name/)]);
    expect(problems({ ...S3, IKI_S3_ACCESS_KEY_ID: 'AKIA' })).toEqual([expect.stringMatching(/go together/)]);
    for (const prefix of ['iki', '/iki/', 'a//', 'iki/../', 'ü/']) {
      expect(problems({ ...S3, IKI_S3_PREFIX: prefix }), prefix).toEqual([expect.stringMatching(/^IKI_S3_PREFIX must be/)]);
    }
    expect(loadConfig({ ...S3, IKI_S3_PREFIX: 'prod/iki-1/' }).s3?.prefix).toBe('prod/iki-1/');
    expect(problems({ ...S3, IKI_S3_ENDPOINT: 'ftp://x' })).toEqual(['IKI_S3_ENDPOINT must be an http(s) URL']);
    expect(problems({ ...S3, IKI_S3_FORCE_PATH_STYLE: 'yes' })).toEqual(['IKI_S3_FORCE_PATH_STYLE must be "1" or "0"']);
    expect(problems({ IKI_S3_BUCKET: 'iki-masters', IKI_S3_REGION: 'eu-west-1' }))
      .toEqual(['IKI_S3_REGION, IKI_S3_BUCKET take effect only with IKI_BLOB_STORE=s3']);
  });

  it.each([
    ['IKI_S3_PART_BYTES', 5 * 1024 * 1024, 512 * 1024 * 1024],
    ['IKI_S3_RANGE_BYTES', 64 * 1024, 1024 * 1024 * 1024],
    ['IKI_S3_CONNECT_TIMEOUT_MS', 100, 120_000],
    ['IKI_S3_REQUEST_TIMEOUT_MS', 100, 600_000],
    ['IKI_S3_MAX_ATTEMPTS', 1, 10],
  ])('%s holds from %i to %i and refuses just past', (name, min, max) => {
    expect(problems({ ...S3, [name]: String(min) })).toEqual([]);
    expect(problems({ ...S3, [name]: String(max) })).toEqual([]);
    expect(problems({ ...S3, [name]: String(min - 1) })).toEqual([`${name} must be an integer from ${min} to ${max}`]);
    expect(problems({ ...S3, [name]: String(max + 1) })).toEqual([`${name} must be an integer from ${min} to ${max}`]);
  });

  it('fit the largest master in 10000 parts: at and just past', () => {
    const part = 5 * 1024 * 1024;
    expect(problems({ ...S3, IKI_S3_PART_BYTES: String(part), IKI_MAX_MASTER_BYTES: String(part * 10_000) })).toEqual([]);
    expect(problems({ ...S3, IKI_S3_PART_BYTES: String(part), IKI_MAX_MASTER_BYTES: String(part * 10_000 + 1) }))
      .toEqual([`IKI_MAX_MASTER_BYTES (${part * 10_000 + 1}) needs IKI_S3_PART_BYTES of at least ${part + 1}: S3 takes at most 10000 parts per upload`]);
    // Without S3 the part size does not matter.
    expect(problems({ IKI_MAX_MASTER_BYTES: String(part * 10_000 + 1) })).toEqual([]);
  });

  it('keep the secret key out of printing, also when read from a file', () => {
    const config = loadConfig({ ...S3, IKI_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE', IKI_S3_SECRET_ACCESS_KEY: 'wJalrXUtnFEMIsecret' });
    expect(config.s3?.credentials?.secretAccessKey.reveal()).toBe('wJalrXUtnFEMIsecret');
    expect(JSON.stringify(config)).not.toContain('wJalrXUtnFEMIsecret');
    expect(inspect(config, { depth: 10 })).not.toContain('wJalrXUtnFEMIsecret');
    expect(problems({ ...S3, IKI_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE', IKI_S3_SECRET_ACCESS_KEY: 'x',
      IKI_S3_SECRET_ACCESS_KEY_FILE: '/nonexistent' })).toContain('IKI_S3_SECRET_ACCESS_KEY and IKI_S3_SECRET_ACCESS_KEY_FILE are both set; set one');
  });

  it('count as a shared blob store for several instances on one database', () => {
    expect(() => loadConfig({ ...S3, DATABASE_URL: 'postgres://db/iki', IKI_ROOT_SECRET: 'A'.repeat(43),
      IKI_PUBLIC_URL: 'https://iki.example', IKI_ALLOW_LOG_MAIL: '1' })).not.toThrow();
  });
});
