/**
 * `serve()` as deployed: embedded PGlite in <dataDir>/db with a generated root key, and
 * PostgreSQL through DATABASE_URL with the blob store inside the database.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serve } from '../src/main.js';
import { fakeCrypto, fakeMaster } from './helpers/fake-crypto.js';
import { captureLogger, deviceKey, proofFor, TEST_HASHING, type LogLine } from './helpers/app.js';
import { freshPostgres, postgresServer } from './helpers/databases.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...init.headers } });
  return { status: response.status, body: await response.json() };
}

describe('serve', () => {
  it('runs embedded: generates root.key 0600, keeps data across restarts, serves the WASM key service', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'iki-serve-'));
    dirs.push(dataDir);
    const logs: LogLine[] = [];
    const options = { port: 0, dataDir, env: {}, logger: captureLogger(logs), config: { passwordHashing: TEST_HASHING } };
    const first = await serve(options);
    const key = join(dataDir, 'root.key');
    expect((await stat(key)).mode & 0o777).toBe(0o600);
    const secret = await readFile(key, 'utf8');
    expect(secret.trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const signUp = await json(`${first.url}/api/accounts`, { method: 'POST',
      body: JSON.stringify({ email: 'ada@example.com', password: 'correct horse battery', name: 'Ada' }) });
    expect(signUp.status).toBe(202);
    const link = logs.find((l) => l.fields['to'] === 'ada@example.com')?.fields['link'];
    const verified = await json(`${first.url}/api/accounts/verify`, { method: 'POST',
      body: JSON.stringify({ token: new URL(String(link)).searchParams.get('token'), password: 'correct horse battery' }) });
    const session = await json(`${first.url}/api/sessions`, { method: 'POST',
      body: JSON.stringify({ email: 'ada@example.com', password: 'correct horse battery' }) });
    const keys = await json(`${first.url}/api/keys/service`);
    expect(keys.status).toBe(200);
    expect(keys.body.service).toBe(first.config.publicUrl);
    // With port 0 and no IKI_PUBLIC_URL, the service id names the port actually bound.
    expect(first.config.publicUrl).toBe(`http://localhost:${first.port}`);
    expect(first.port).toBeGreaterThan(0);
    for (const name of ['x25519PublicKey', 'licenseSigningPublicKey', 'certificatePublicKey']) {
      expect(keys.body[name]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    await first.close();

    // Restart on the same port: the public URL (token issuer, service id) stays the same.
    const second = await serve({ ...options, port: first.port });
    try {
      expect(await readFile(key, 'utf8')).toBe(secret);
      const me = await json(`${second.url}/api/me`, { headers: { authorization: `Bearer ${session.body.accessToken}` } });
      expect(me.status).toBe(200);
      expect(me.body.accountId).toBe(verified.body.accountId);
      // The keys derive from the kept root secret: the same after a restart.
      expect((await json(`${second.url}/api/keys/service`)).body).toEqual(keys.body);
    } finally {
      await second.close();
    }
    expect(logs.some((l) => l.message === 'generated a new root secret')).toBe(true);
  }, 60_000);

  it.skipIf(postgresServer() === '')('runs on PostgreSQL with masters stored in the database', async () => {
    const pg = await freshPostgres();
    const dataDir = await mkdtemp(join(tmpdir(), 'iki-serve-pg-'));
    dirs.push(dataDir);
    const root = randomBytes(32).toString('base64url');
    let handed: Uint8Array | undefined;
    let verifyLink = '';
    const running = await serve({
      port: 0, dataDir, logger: captureLogger([]), config: { passwordHashing: TEST_HASHING },
      env: { DATABASE_URL: pg.url, IKI_ROOT_SECRET: root, IKI_BLOB_STORE: 'postgres', IKI_PUBLIC_URL: 'http://iki.test' },
      mailer: { async sendVerification(_to, link) { verifyLink = link; } },
      crypto: async (secret) => { handed = secret.expose(); return fakeCrypto(handed); },
    });
    try {
      expect(Buffer.from(handed as Uint8Array).toString('base64url')).toBe(root);
      await expect(stat(join(dataDir, 'root.key'))).rejects.toThrow();
      const email = 'seller@example.com';
      await json(`${running.url}/api/accounts`, { method: 'POST', body: JSON.stringify({ email, password: 'correct horse battery', name: 'S' }) });
      await json(`${running.url}/api/accounts/verify`, { method: 'POST',
        body: JSON.stringify({ token: new URL(verifyLink).searchParams.get('token'), password: 'correct horse battery' }) });
      const session = await json(`${running.url}/api/sessions`, { method: 'POST', body: JSON.stringify({ email, password: 'correct horse battery' }) });
      const auth = { authorization: `Bearer ${session.body.accessToken}` };
      const key = deviceKey();
      const registered = await json(`${running.url}/api/keys/signing`, { method: 'POST', headers: auth,
        body: JSON.stringify({ publicKey: key.b64, proof: proofFor(key, session.body.accountId) }) });
      expect(registered.status).toBe(201);
      const upload = await fetch(`${running.url}/api/licenses/masters`, { method: 'POST',
        headers: { ...auth, 'content-type': 'application/vnd.iki.model' }, body: fakeMaster({ name: 'PgModel', signer: key.publicKey }) });
      expect(upload.status).toBe(201);
      const { masterId } = await upload.json() as { masterId: string };
      const again = await freshRows(pg.url, masterId);
      expect(again).toBeGreaterThan(3);
    } finally {
      await running.close();
      await pg.drop();
    }
  }, 60_000);

  it('answers 503 SERVICE_STARTING with a request id while it is still starting', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'iki-serve-'));
    dirs.push(dataDir);
    const free = createServer().listen(0, '127.0.0.1');
    await once(free, 'listening');
    const port = (free.address() as AddressInfo).port;
    await new Promise((resolve) => free.close(resolve));
    let ready: () => void = () => {};
    const gate = new Promise<void>((resolve) => { ready = resolve; });
    const starting = serve({ port, dataDir, env: {}, logger: captureLogger([]),
      crypto: async () => { await gate; return fakeCrypto(); } });
    let answer: Response | undefined;
    for (let i = 0; i < 200 && answer === undefined; i += 1) {
      answer = await fetch(`http://127.0.0.1:${port}/api/keys/service`).catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, 25));
        return undefined;
      });
    }
    expect(answer?.status).toBe(503);
    expect(answer?.headers.get('retry-after')).toBe('1');
    const body = (await answer?.json()) as { error: { requestId: string } };
    expect(body).toEqual({ error: { code: 'SERVICE_STARTING', message: 'the service is starting; retry shortly',
      requestId: answer?.headers.get('x-request-id') } });
    expect(body.error.requestId).toMatch(/^req_[0-9a-f]{24}$/);
    ready();
    const running = await starting;
    try {
      expect((await fetch(`${running.url}/api/keys/service`)).status).toBe(200);
    } finally {
      await running.close();
    }
  });

  it('refuses to start on PostgreSQL without a root secret', async () => {
    await expect(serve({ port: 0, env: { DATABASE_URL: 'postgres://127.0.0.1:1/x' } })).rejects.toThrow(/IKI_ROOT_SECRET/);
  });
});

async function freshRows(url: string, masterId: string): Promise<number> {
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT count(*)::int AS n FROM blob_chunks WHERE blob_id = $1', [masterId]);
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}
