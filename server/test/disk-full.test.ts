/**
 * Full and read-only disks (issue 23 item 2) on a real small tmpfs mounted as the data
 * directory (the test needs the right to mount, as root has; without it the disk tests are
 * skipped and only the mapping test runs): an upload onto a full disk and onto a read-only
 * one answers 503 `STORAGE_UNAVAILABLE` with `Retry-After`, no stack and no error log line,
 * `/readyz` answers 503 under the free-space floor and on a read-only disk, and everything
 * works again once there is room. The database is PostgreSQL (the masters directory declared
 * shared), so the tmpfs holds the data directory and the masters; PGlite's own "disk full"
 * (SQLSTATE 53100, seen on the same tmpfs) is covered by the mapping test.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { ApiError } from '../src/errors.js';
import { serve, type RunningServer } from '../src/main.js';
import { storageUnavailable, unavailable } from '../src/storage/unavailable.js';
import { captureLogger, deviceKey, proofFor, TEST_HASHING, type LogLine } from './helpers/app.js';
import { freshPostgres, postgresServer } from './helpers/databases.js';
import { fakeCrypto, fakeMaster } from './helpers/fake-crypto.js';

/** Mounts a tmpfs of `mib` MiB on a new directory; undefined when this process may not mount. */
function mountTmpfs(mib: number): string | undefined {
  const dir = execFileSync('mktemp', ['-d', join(tmpdir(), 'iki-full-XXXXXX')], { encoding: 'utf8' }).trim();
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m,mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
    return dir;
  } catch {
    execFileSync('rmdir', [dir]);
    return undefined;
  }
}

const mnt = process.platform === 'linux' && postgresServer() !== '' ? mountTmpfs(16) : undefined;

describe.skipIf(mnt === undefined)('a full or read-only data directory', () => {
  const dir = mnt as string;
  const logs: LogLine[] = [];
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  let running: RunningServer;
  let auth: Record<string, string>;
  let key: ReturnType<typeof deviceKey>;

  beforeAll(async () => {
    pg = await freshPostgres();
    let link = '';
    running = await serve({ port: 0, dataDir: dir, logger: captureLogger(logs), config: { passwordHashing: TEST_HASHING },
      env: { DATABASE_URL: pg.url, IKI_ROOT_SECRET: randomBytes(32).toString('base64url'), IKI_PUBLIC_URL: 'http://iki.test',
        IKI_BLOB_DIR_SHARED: '1', IKI_MIN_FREE_MB: '4' },
      mailer: { async sendVerification(_to, l) { link = l; } }, crypto: async () => fakeCrypto() });
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) => fetch(`${running.url}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const email = 'seller@example.com';
    await post('/api/accounts', { email, password: 'correct horse battery', name: 'S' });
    // No sign-up cookie here: the person at the link chooses the password (issue 22 item 3).
    await post('/api/accounts/verify', { token: new URL(link).searchParams.get('token'), password: 'correct horse battery' });
    const session = await (await post('/api/sessions', { email, password: 'correct horse battery' })).json() as
      { accessToken: string; accountId: string };
    auth = { authorization: `Bearer ${session.accessToken}` };
    key = deviceKey();
    expect((await post('/api/keys/signing', { publicKey: key.b64, proof: proofFor(key, session.accountId) }, auth)).status).toBe(201);
  });
  afterAll(async () => {
    await running?.close();
    await pg?.drop();
    execFileSync('mount', ['-o', 'remount,rw', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir]);
    await rm(dir, { recursive: true, force: true });
  });

  const upload = async (name: string) => {
    const answer = await fetch(`${running.url}/api/licenses/masters`, { method: 'POST',
      headers: { ...auth, 'content-type': 'application/vnd.iki.model' },
      body: fakeMaster({ name, signer: key.publicKey, dataChunks: 8, chunkBytes: 64 * 1024 }) });
    return { status: answer.status, retryAfter: answer.headers.get('retry-after'), text: await answer.text() };
  };
  const ready = async () => {
    const answer = await fetch(`${running.url}/readyz`);
    return { status: answer.status, body: await answer.json() as { checks: Record<string, string> } };
  };
  const free = async () => { const s = await statfs(dir); return s.bavail * s.bsize; };
  /** The storage answer: 503, Retry-After, the code, and nothing of a stack or a path. */
  const expectUnavailable = (answer: Awaited<ReturnType<typeof upload>>) => {
    expect(answer.status).toBe(503);
    expect(answer.retryAfter).toBe('5');
    expect(JSON.parse(answer.text).error.code).toBe('STORAGE_UNAVAILABLE');
    expect(answer.text).not.toContain(dir);
    expect(answer.text).not.toMatch(/\bat .*\.[jt]s:\d+/);
  };

  it('is ready with room, not ready under the free-space floor, and takes uploads again with room', async () => {
    expect(await ready()).toMatchObject({ status: 200, body: { checks: { blobs: 'ok', database: 'ok' } } });
    expect((await upload('Before')).status).toBe(201);
    // Leave 2 MiB: below the 4 MiB floor, above what an upload needs.
    await writeFile(join(dir, 'filler'), new Uint8Array(await free() - 2 * 1024 * 1024));
    expect(await ready()).toMatchObject({ status: 503, body: { checks: { blobs: 'failed' } } });
    expect(logs.some((l) => l.message === 'readiness probe failed' && /below the floor/.test(String(l.fields['error'])))).toBe(true);
    await rm(join(dir, 'filler'));
    expect((await ready()).status).toBe(200);
  });

  it('a full disk: the upload is 503 STORAGE_UNAVAILABLE, logged as a warning without a stack; then it recovers', async () => {
    await writeFile(join(dir, 'filler'), new Uint8Array(await free()));
    expect(await free()).toBe(0);
    const errorsBefore = logs.filter((l) => l.level === 'error').length;
    expectUnavailable(await upload('Full'));
    expect(logs.filter((l) => l.level === 'error').length).toBe(errorsBefore);
    expect(logs.find((l) => l.message === 'storage unavailable')?.fields).toMatchObject({ cause: 'ENOSPC',
      path: '/api/licenses/masters' });
    expect((await ready()).status).toBe(503);
    await rm(join(dir, 'filler'));
    expect((await ready()).status).toBe(200);
    expect((await upload('After')).status).toBe(201);
  });

  it('a read-only disk: 503 STORAGE_UNAVAILABLE and /readyz 503; writable again, it recovers', async () => {
    execFileSync('mount', ['-o', 'remount,ro', dir], { stdio: 'pipe' });
    try {
      expectUnavailable(await upload('ReadOnly'));
      expect(logs.filter((l) => l.message === 'storage unavailable').at(-1)?.fields['cause']).toBe('EROFS');
      expect(await ready()).toMatchObject({ status: 503, body: { checks: { blobs: 'failed', database: 'ok' } } });
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', dir], { stdio: 'pipe' });
    }
    expect((await ready()).status).toBe(200);
    expect((await upload('Writable')).status).toBe(201);
  });
});

describe('the free-space floor', () => {
  it('reads IKI_MIN_FREE_MB: 256 by default, 0 turns it off, and refuses what is not a size', () => {
    expect(loadConfig({}).ops.minFreeMb).toBe(256);
    expect(loadConfig({ IKI_MIN_FREE_MB: '0' }).ops.minFreeMb).toBe(0);
    expect(loadConfig({ IKI_MIN_FREE_MB: String(2 ** 30) }).ops.minFreeMb).toBe(2 ** 30);
    expect(() => loadConfig({ IKI_MIN_FREE_MB: String(2 ** 30 + 1) })).toThrow(/IKI_MIN_FREE_MB/);
    expect(() => loadConfig({ IKI_MIN_FREE_MB: '-1' })).toThrow(/IKI_MIN_FREE_MB/);
  });
});

describe('the storage-unavailable mapping', () => {
  it('maps full, over-quota, read-only and resource errors of files and of PostgreSQL, and nothing else', () => {
    for (const code of ['ENOSPC', 'EDQUOT', 'EROFS', 'EFBIG', 'EMFILE', 'ENFILE', 'EACCES', '53100', '53200', '58030',
      '57014', '25006']) {
      const mapped = unavailable(Object.assign(new Error('x'), { code }));
      expect(mapped).toBeInstanceOf(ApiError);
      expect((mapped as ApiError).code).toBe('STORAGE_UNAVAILABLE');
      expect((mapped as ApiError).headers).toEqual({ 'Retry-After': '5' });
      expect((mapped as { outage?: unknown }).outage).toBe(code);
    }
    // pg's client-side query timeout (a frozen server) and its connect timeout.
    for (const message of ['Query read timeout', 'timeout expired', 'timeout exceeded when trying to connect']) {
      expect((unavailable(new Error(message)) as ApiError).code).toBe('STORAGE_UNAVAILABLE');
    }
    for (const code of ['ENOENT', 'EEXIST', '23505', '22P02', '40001']) {
      expect(unavailable(Object.assign(new Error('x'), { code }))).not.toBeInstanceOf(ApiError);
    }
    // The helper other stores (an object store) call with their own short cause.
    const s3 = storageUnavailable('SlowDown');
    expect([s3.status, s3.headers['Retry-After'], JSON.stringify(s3.details)]).toEqual([503, '5', '{"retryAfterSeconds":5}']);
  });
});
