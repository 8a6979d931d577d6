/**
 * The webhook outbox survives a crash (issue 26 item 4): service process A commits license
 * creations (and with them their outbox rows) and is killed with SIGKILL before it delivers
 * them (its poll is ten minutes away); process B, started afterwards on the same PostgreSQL,
 * delivers every event to a loopback receiver exactly once per event id.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, registerKey, startApp, uploadMaster, type TestApp, type User } from './helpers/app.js';
import { startChildService, type ChildService } from './helpers/child-service.js';
import { freshPostgres, postgresServer } from './helpers/databases.js';
import { client } from './helpers/flow.js';
import { receiver, type Receiver } from './helpers/webhook-receiver.js';
import { RootSecret } from '../src/secrets.js';
import { SqlRepository } from '../src/storage/sql-repository.js';

const skip = postgresServer() === '';

async function waitFor(what: string, test: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(skip)('webhook delivery across a kill -9', () => {
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  let dataDir: string;
  let setup: TestApp;
  let hook: Receiver;
  const children: ChildService[] = [];
  const rootBytes = randomBytes(32);

  beforeAll(async () => {
    pg = await freshPostgres();
    dataDir = await mkdtemp(join(tmpdir(), 'iki-hooks-'));
    // The set-up app and both service processes are one deployment: one root secret (the
    // endpoint's secret is sealed under it, docs/format.md §8.5).
    setup = await startApp({ repo: new SqlRepository(pg.db), root: new RootSecret(rootBytes), config: { webhooks: { allowPrivate: true, timeoutMs: 2000, pollMs: 20,
      retryHours: 72 } } });
    hook = await receiver();
  }, 30_000);
  afterAll(async () => {
    await Promise.all(children.map((c) => c.kill9()));
    await hook?.close();
    await setup?.close();
    await pg?.drop();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('delivers after a restart what a killed instance committed, once per event id', async () => {
    const seller: User = await newUser(setup, 'Seller');
    const buyer: User = await newUser(setup, 'Buyer');
    const masterId = await uploadMaster(setup, seller, await registerKey(setup, seller));
    const shop = (await setup.call('POST', '/api/api-keys', { token: seller.token, json: { name: 'shop', scopes: ['licenses:write'] } })).body;
    const hookMade = await setup.call('POST', '/api/webhooks', { token: seller.token, json: { url: hook.url, events: ['license.created'] } });
    expect(hookMade.status).toBe(201);

    const env = { DATABASE_URL: pg.url, IKI_ROOT_SECRET: rootBytes.toString('base64url'), IKI_PUBLIC_URL: 'http://iki.test',
      IKI_DATA_DIR: dataDir, IKI_BLOB_DIR_SHARED: '1', IKI_WORKERS: '1', IKI_WEBHOOK_ALLOW_PRIVATE: '1' };
    const a = await startChildService({ ...env, IKI_WEBHOOK_POLL_MS: '600000' });
    children.push(a);
    const callA = client(a.url);
    for (let i = 0; i < 5; i += 1) {
      const made = await callA('POST', `/api/licenses/masters/${masterId}/licenses`, { token: shop.secret, json: { accountId: buyer.accountId } });
      expect(made.status).toBe(201);
    }
    await a.kill9();
    const pending = await pg.db.query<{ n: string }>("SELECT count(*) AS n FROM webhook_outbox WHERE state = 'pending'");
    expect(Number(pending.rows[0]?.n)).toBe(5);
    expect(hook.got).toHaveLength(0);

    const b = await startChildService({ ...env, IKI_WEBHOOK_POLL_MS: '20' });
    children.push(b);
    await waitFor('B to deliver the outbox', async () => {
      const { rows } = await pg.db.query<{ n: string }>("SELECT count(*) AS n FROM webhook_outbox WHERE state = 'delivered'");
      return Number(rows[0]?.n) === 5;
    });
    // A few more polls find nothing to send again.
    await new Promise((r) => setTimeout(r, 200));
    expect(hook.got).toHaveLength(5);
    expect(new Set(hook.got.map((g) => g.eventId)).size).toBe(5);
    expect(hook.got.every((g) => g.type === 'license.created')).toBe(true);
  }, 60_000);
});
