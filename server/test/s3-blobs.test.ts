/**
 * What the S3 blob store does beyond the shared blob-store suite (blobs.test.ts), on moto's S3
 * server: reads are ranged GETs opened as the consumer pulls; uploads past one part are
 * multipart uploads and an abort leaves no object and no unfinished upload; a GET whose body is
 * cut after some progress resumes from the byte reached, one cut before any fails as 503; a commit past the
 * single-copy limit copies in parts; an S3 server that is down answers 503 STORAGE_UNAVAILABLE
 * with Retry-After for uploads and copies (no error logged) and `/readyz`'s probe fails, and
 * all of it serves again once the server is back.
 */
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server } from 'node:net';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobProbe } from '../src/ops/probes.js';
import { ApiError } from '../src/errors.js';
import { S3BlobStore } from '../src/storage/s3-blobs.js';
import type { S3Settings } from '../src/s3-config.js';
import type { SqlDb } from '../src/storage/sql-db.js';
import { scenario, startApp } from './helpers/app.js';
import { fakeMaster } from './helpers/fake-crypto.js';
import { startS3Server, type S3Server } from './helpers/global-s3.js';
import { freshBucket, keysIn, s3Endpoint, uploadsIn } from './helpers/s3.js';

const skip = s3Endpoint() === '';
const MIB = 1024 * 1024;

/** The commands `client` sends (name and Range), recorded by a middleware on the real client. */
function recordCommands(client: S3Client): { name: string; range?: string }[] {
  const seen: { name: string; range?: string }[] = [];
  client.middlewareStack.add((next, context) => async (args) => {
    const input = args.input as { Range?: string; CopySourceRange?: string };
    const range = input.Range ?? input.CopySourceRange;
    seen.push({ name: String(context.commandName), ...(range === undefined ? {} : { range }) });
    return next(args);
  }, { step: 'initialize', name: 'recordCommands' });
  return seen;
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of source) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

describe.skipIf(skip)('S3 blob store on an S3 server', () => {
  let settings: S3Settings;
  let admin: S3Client;

  beforeAll(async () => {
    ({ settings, admin } = await freshBucket(s3Endpoint(), { partBytes: 5 * MIB, rangeBytes: 256 * 1024 }));
  });
  afterAll(() => admin?.destroy());

  it('reads with ranged GETs, each opened only when the consumer wants more', async () => {
    const bytes = randomBytes(MIB + 1000);
    await admin.send(new PutObjectCommand({ Bucket: settings.bucket, Key: 'iki/masters/mst_ranged.ikm', Body: bytes }));
    const store = new S3BlobStore(settings);
    const seen = recordCommands(store.client);
    expect((await collect(store.read('mst_ranged'))).equals(bytes)).toBe(true);
    const k = 256 * 1024;
    expect(seen).toEqual([0, 1, 2, 3, 4].map((i) => ({ name: 'GetObjectCommand',
      range: `bytes=${i * k}-${Math.min((i + 1) * k, bytes.length) - 1}` })));
    // A consumer that stops after its first piece caused one GET.
    seen.length = 0;
    for await (const piece of store.read('mst_ranged')) {
      expect(piece.length).toBe(k);
      break;
    }
    expect(seen).toHaveLength(1);
    await store.close();
  });

  it('stops the start naming the reason: a missing bucket, a server that cannot be reached', async () => {
    const missing = new S3BlobStore({ ...settings, bucket: 'iki-no-such-bucket' });
    await expect(missing.open()).rejects.toThrow(
      new RegExp(`^the S3 bucket iki-no-such-bucket at ${settings.endpoint} cannot be used: (NotFound|NoSuchBucket) \\(HTTP 404\\); check`));
    const closed = new S3BlobStore({ ...settings, endpoint: 'http://127.0.0.1:1' });
    await expect(closed.open()).rejects.toThrow(/cannot be used: ECONNREFUSED; check/);
    await missing.close();
    await closed.close();
    // The bucket there: the start goes on.
    const there = new S3BlobStore(settings);
    await there.open();
    await there.close();
  });

  it('reads an empty upload back as nothing (an empty object has no byte 0 to ask for)', async () => {
    const store = new S3BlobStore(settings);
    const upload = await store.begin();
    await upload.finish();
    expect(await collect(upload.read())).toEqual(Buffer.alloc(0));
    await upload.abort();
    expect(await keysIn(admin, settings.bucket, 'iki/pending/')).toEqual([]);
    await store.close();
  });

  it('resumes a ranged GET cut after some progress from the byte reached, and fails one cut before any as 503', async () => {
    const bytes = randomBytes(5 * MIB);
    await admin.send(new PutObjectCommand({ Bucket: settings.bucket, Key: 'iki/masters/mst_cut.ikm', Body: bytes }));
    // A TCP proxy in front of the S3 server that cuts the first connection after `cutAt` bytes of answer.
    let cutAt = 0;
    const upstream = new URL(settings.endpoint as string);
    const proxy: Server = createServer((socket) => {
      const server = connect(Number(upstream.port), upstream.hostname);
      const limit = cutAt;
      cutAt = 0;
      let passed = 0;
      socket.pipe(server);
      server.on('data', (data: Buffer) => {
        if (limit > 0 && passed + data.length >= limit) {
          socket.write(data.subarray(0, limit - passed));
          socket.destroy();
          server.destroy();
          return;
        }
        passed += data.length;
        socket.write(data);
      });
      server.on('error', () => socket.destroy());
      socket.on('error', () => server.destroy());
      socket.on('close', () => server.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const store = new S3BlobStore({ ...settings, endpoint, rangeBytes: 4 * MIB });
    const seen = recordCommands(store.client);
    try {
      cutAt = 1.5 * MIB;
      expect((await collect(store.read('mst_cut'))).equals(bytes)).toBe(true);
      // The first piece (1 MiB and a little) arrived, then the cut: the next GET starts at its end.
      expect(seen.map((c) => c.range)).toEqual([`bytes=0-${4 * MIB - 1}`, expect.stringMatching(new RegExp(`^bytes=[0-9]+-${5 * MIB - 1}$`))]);
      const resumedAt = Number(/^bytes=([0-9]+)-/.exec(seen[1]?.range ?? '')?.[1]);
      expect(resumedAt).toBeGreaterThanOrEqual(MIB);
      expect(resumedAt).toBeLessThan(1.5 * MIB);
      cutAt = 100 * 1024;
      await expect(collect(store.read('mst_cut'))).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    } finally {
      await store.close();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('uploads past one part as a multipart upload, copies past the single-copy limit in parts', async () => {
    const store = new S3BlobStore(settings, undefined, { singleCopyMaxBytes: 5 * MIB, copyPartBytes: 5 * MIB });
    const seen = recordCommands(store.client);
    const bytes = randomBytes(12 * MIB + 5);
    const upload = await store.begin();
    for (let i = 0; i < bytes.length; i += 256 * 1024) await upload.write(bytes.subarray(i, i + 256 * 1024));
    await upload.finish();
    expect(seen.filter((c) => c.name === 'UploadPartCommand')).toHaveLength(3);
    expect((await collect(upload.read())).equals(bytes)).toBe(true);
    await upload.commit('mst_big');
    expect(seen.filter((c) => c.name === 'UploadPartCopyCommand').map((c) => c.range))
      .toEqual(['bytes=0-5242879', 'bytes=5242880-10485759', `bytes=10485760-${bytes.length - 1}`]);
    expect(await keysIn(admin, settings.bucket, 'iki/pending/')).toEqual([]);
    expect(await keysIn(admin, settings.bucket, 'iki/masters/mst_big')).toEqual(['iki/masters/mst_big.ikm']);
    expect((await collect(store.read('mst_big'))).equals(bytes)).toBe(true);
    await store.remove('mst_big');
    expect(await keysIn(admin, settings.bucket, 'iki/masters/mst_big')).toEqual([]);
    await store.close();
  });

  it('leaves no object and no unfinished multipart upload after an abort mid-upload', async () => {
    const store = new S3BlobStore(settings);
    const seen = recordCommands(store.client);
    const upload = await store.begin();
    const piece = randomBytes(MIB);
    // Past one part: the multipart upload exists and its first part is on its way.
    for (let i = 0; i < 7; i += 1) await upload.write(piece);
    await expect.poll(() => seen.some((c) => c.name === 'UploadPartCommand')).toBe(true);
    await upload.abort();
    expect(await keysIn(admin, settings.bucket, 'iki/pending/')).toEqual([]);
    expect(await uploadsIn(admin, settings.bucket)).toEqual([]);
    expect(seen.map((c) => c.name)).toContain('AbortMultipartUploadCommand');
    await store.close();
  });
});

describe.skipIf(skip)('an S3 server that is down', () => {
  let server: S3Server;

  beforeAll(async () => {
    server = await startS3Server();
  });
  afterAll(async () => server?.stop());

  it('answers 503 STORAGE_UNAVAILABLE with Retry-After for uploads and copies, fails the probe, and serves again once back', async () => {
    const { settings, admin } = await freshBucket(server.endpoint);
    const blobs = new S3BlobStore(settings);
    const app = await startApp({ blobs });
    const probe = blobProbe('s3', undefined as unknown as SqlDb, '', 0, blobs);
    try {
      const { seller, buyer, key, licenseId } = await scenario(app);
      await probe.check();
      await server.stop();
      const upload = await app.call('POST', '/api/licenses/masters', { token: seller.token,
        type: 'application/vnd.iki.model', body: fakeMaster({ name: 'Down', signer: key.publicKey }) });
      expect(upload.status).toBe(503);
      expect(upload.headers.get('retry-after')).toBe('5');
      expect(upload.body.error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', details: { retryAfterSeconds: 5 } });
      // The fake crypto sends its first piece before reading the master, so a whole copy would
      // be cut after its headers; a range of a copy not yet measured reads the master first.
      // (A whole copy with the real crypto: s3-instances.test.ts.)
      const copy = await app.call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token,
        headers: { range: 'bytes=0-' } });
      expect(copy.status).toBe(503);
      expect(copy.headers.get('retry-after')).toBe('5');
      expect(copy.body.error.code).toBe('STORAGE_UNAVAILABLE');
      await expect(probe.check()).rejects.toBeInstanceOf(ApiError);
      expect(app.logs.filter((l) => l.level === 'error')).toEqual([]);

      // Back (moto starts empty): the bucket again, and uploads and the probe work.
      await server.start();
      await admin.send(new CreateBucketCommand({ Bucket: settings.bucket }));
      await probe.check();
      const again = await app.call('POST', '/api/licenses/masters', { token: seller.token,
        type: 'application/vnd.iki.model', body: fakeMaster({ name: 'Back', signer: key.publicKey }) });
      expect(again.status).toBe(201);
      expect(await keysIn(admin, settings.bucket, 'iki/masters/')).toEqual([`iki/masters/${again.body.masterId}.ikm`]);
    } finally {
      await app.close();
      await blobs.close();
      admin.destroy();
    }
  });
});
