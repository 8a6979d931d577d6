/**
 * Issue 22 item 6 through the real app on memory, PGlite and PostgreSQL: account ids are public
 * (a signing key's look-up answers without sign-in), so a seller who licenses an account by its
 * id must not learn the account's e-mail address from the license; a seller who licensed by
 * e-mail sees the address they typed (which they knew), and nobody else sees any.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, registerKey, startApp, uploadMaster, type TestApp } from './helpers/app.js';
import { postgresServer, repositoryEngines, type Store } from './helpers/databases.js';

describe.each(repositoryEngines)('licensee addresses on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let app: TestApp;
  let store: Store;

  beforeAll(async () => {
    if (skip) return;
    store = await engine.open();
    app = await startApp({ repo: store.repo });
  });
  afterAll(async () => {
    if (skip) return;
    await app.close();
    await store.close();
  });

  it.skipIf(skip)('licensing an account by its public id shows the seller its name, never its address', async () => {
    const seller = await newUser(app, 'Curious Seller');
    const victim = await newUser(app, 'Private Buyer');
    const key = await registerKey(app, seller);
    const masterId = await uploadMaster(app, seller, key);
    // The victim's account id is public: here, from their signing key's look-up (no sign-in).
    const victimKey = await registerKey(app, victim);
    const lookUp = await app.call('GET', `/api/keys/signing/${victimKey.b64}`);
    expect(lookUp.status).toBe(200);
    expect(JSON.stringify(lookUp.body)).not.toContain(victim.email);
    const byId = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token,
      json: { accountId: lookUp.body.accountId } });
    expect(byId.status).toBe(201);
    expect(byId.body.licensee).toEqual({ accountId: victim.accountId, name: 'Private Buyer' });
    const one = await app.call('GET', `/api/licenses/${byId.body.licenseId}`, { token: seller.token });
    const listed = await app.call('GET', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token });
    for (const shown of [one.body, ...listed.body.licenses]) {
      expect(shown.licensee).toEqual({ accountId: victim.accountId, name: 'Private Buyer' });
      expect(JSON.stringify(shown)).not.toContain(victim.email);
    }
  });

  it.skipIf(skip)('licensing by e-mail shows the seller that address, on this license only', async () => {
    const seller = await newUser(app, 'Mail Seller');
    const buyer = await newUser(app, 'Mail Buyer');
    const masterId = await uploadMaster(app, seller, await registerKey(app, seller));
    const byEmail = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token,
      json: { email: buyer.email.toUpperCase() } });
    expect(byEmail.body.licensee).toEqual({ accountId: buyer.accountId, name: 'Mail Buyer', email: buyer.email });
    const byId = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token,
      json: { accountId: buyer.accountId } });
    const listed = await app.call('GET', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token });
    const shown = new Map(listed.body.licenses.map((l: { licenseId: string; licensee: unknown }) => [l.licenseId, l.licensee]));
    expect(shown.get(byEmail.body.licenseId)).toEqual({ accountId: buyer.accountId, name: 'Mail Buyer', email: buyer.email });
    expect(shown.get(byId.body.licenseId)).toEqual({ accountId: buyer.accountId, name: 'Mail Buyer' });
    // The buyer's own view names no address of either party.
    const own = await app.call('GET', `/api/licenses/${byEmail.body.licenseId}`, { token: buyer.token });
    expect(own.body.licensee.email).toBeUndefined();
    expect(own.body.seller.email).toBeUndefined();
  });
});
