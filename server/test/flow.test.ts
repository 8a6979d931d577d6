/**
 * The whole licensing flow over HTTP with the real WebAssembly crypto, on a service started
 * with `serve()` on an ephemeral port: embedded PGlite with masters in a local folder, and
 * once more on PostgreSQL with masters stored in the database.
 *
 * A seller signs up (verification token from the captured mail log), signs in, registers its
 * device key, builds a master of a generated model package sealed to `GET /api/keys/service`
 * and uploads it; two buyers get licenses, download their copies and release their keys into
 * a `PlayerSession` (ephemeral key inside WASM); every file of each copy is the original
 * except the watermark on the textures, which `identify` reads back from a PNG; revocation
 * stops copies and keys of that license only.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  encodePng, fromBase64Url, openLicenseCopy, PlayerSession, toBase64Url, type Manifest, type SlotInfo,
} from '@iki/core';
import { serve } from '../src/main.js';
import { captureLogger, TEST_HASHING, type LogLine } from './helpers/app.js';
import { freshPostgres, postgresServer } from './helpers/databases.js';
import {
  buildModel, client, modelPackage, registeredKey, textureDiff, verifiedUser, type Call, type ModelPackage, type User,
} from './helpers/flow.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** What a buyer's player found in its copy. */
interface Opened { manifest: Manifest; slots: SlotInfo[]; files: Map<string, Uint8Array>; signer: unknown }

/** Releases the license key into a fresh session and reads the copy with it. */
async function playCopy(call: Call, buyer: User, licenseId: string, copy: Uint8Array, signingKey: Uint8Array): Promise<Opened> {
  const session = PlayerSession.create();
  try {
    const release = await call('POST', `/api/licenses/${licenseId}/key`, { token: buyer.token,
      json: { publicKey: toBase64Url(session.publicKey) } });
    expect(release.status).toBe(200);
    expect(Number(release.headers.get('ratelimit-remaining'))).toBeLessThan(20);
    session.acceptLicenseKey(licenseId, { ephemeral: fromBase64Url(release.body.ephemeralPublicKey, 32),
      nonce: fromBase64Url(release.body.nonce, 24), sealed: fromBase64Url(release.body.sealedKey, 48) });
    const parts: Uint8Array[][] = [];
    let manifest: Manifest | undefined;
    let slots: SlotInfo[] = [];
    let signer: unknown;
    for await (const event of openLicenseCopy(copy, session, signingKey)) {
      if (event.type === 'locked') slots = event.slots;
      if (event.type === 'manifest') manifest = event.manifest;
      if (event.type === 'chunk') (parts[event.entry] ??= []).push(event.data);
      if (event.type === 'end') signer = event.verified.signer;
    }
    expect(signer).toBeDefined();
    const files = new Map((manifest?.entries ?? []).map((e, i) => [e.path, Buffer.concat(parts[i] ?? [])]));
    return { manifest: manifest as Manifest, slots, files: new Map([...files].map(([p, b]) => [p, new Uint8Array(b)])), signer };
  } finally {
    session.free();
  }
}

/** Each checked copy's atlas texture (RGBA), by license id, for the identify of a mix. */
const copyAtlases = new Map<string, { path: string; width: number; height: number; rgba: Uint8Array }>();

/** Checks a buyer's copy against the package and identify on its atlas texture. */
async function checkCopy(call: Call, seller: User, buyer: User, masterId: string, licenseId: string,
  pkg: ModelPackage, keys: Record<string, string>): Promise<Uint8Array> {
  const download = await call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token });
  expect(download.status).toBe(200);
  expect(download.headers.get('content-type')).toBe('application/vnd.iki.model');
  const again = await call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token });
  expect(Buffer.from(again.bytes).equals(Buffer.from(download.bytes))).toBe(true);
  expect(again.headers.get('etag')).toBe(download.headers.get('etag'));

  const signingKey = fromBase64Url(keys['licenseSigningPublicKey'] as string, 32);
  const opened = await playCopy(call, buyer, licenseId, download.bytes, signingKey);
  expect(opened.slots).toEqual([{ type: 'license', service: keys['service'], licenseId, masterId }]);
  expect(opened.signer).toEqual({ kind: 'service', service: keys['service'] });
  expect(opened.manifest.meta).toMatchObject({ role: 'license', name: 'Haru', license: { id: licenseId, masterId,
    licensee: buyer.accountId, licenseeName: buyer.name, seller: seller.accountId } });
  expect([...opened.files.keys()].sort()).toEqual([...pkg.files.keys()].sort());
  for (const [path, original] of pkg.files) {
    const texture = pkg.textures.get(path);
    if (texture === undefined) {
      expect(Buffer.from(opened.files.get(path) as Uint8Array).equals(Buffer.from(original)), path).toBe(true);
    } else {
      const diff = textureDiff(texture.rgba, opened.files.get(path) as Uint8Array);
      expect(diff, path).toMatchObject({ tooFar: 0, forbidden: 0 });
      expect(diff.moved, path).toBeGreaterThan(1000);
    }
  }
  const atlasPath = [...pkg.textures.keys()][0] as string;
  const atlas = pkg.textures.get(atlasPath) as { width: number; height: number };
  const png = encodePng(atlas.width, atlas.height, opened.files.get(atlasPath) as Uint8Array);
  const found = await call('POST', `/api/licenses/masters/${masterId}/identify`, { token: seller.token, type: 'image/png', body: png });
  expect(found.status).toBe(200);
  expect(found.body).toMatchObject({ found: true, licenseId, method: 'blind', match: 'decoded', mixed: false,
    license: { licensee: { accountId: buyer.accountId } } });
  // Every issued license is scored against the read: this one first, named, with its buyer's name.
  expect(found.body.candidates[0]).toMatchObject({ licenseId, licenseeName: buyer.name, named: true });
  expect(found.body.candidates[0].falseAccusation).toBeLessThan(1e-9);
  copyAtlases.set(licenseId, { path: atlasPath, ...atlas, rgba: opened.files.get(atlasPath) as Uint8Array });
  // The same texture cropped and halved (2 x 2 averages): found through the master's texture.
  const copyRgba = opened.files.get(atlasPath) as Uint8Array;
  const [cx, cy, cw, ch] = [100, 300, 800, 1200];
  const half = new Uint8Array((cw / 2) * (ch / 2) * 4);
  for (let y = 0; y < ch / 2; y++) {
    for (let x = 0; x < cw / 2; x++) {
      for (let c = 0; c < 4; c++) {
        const at = (yy: number, xx: number) => copyRgba[((cy + yy) * atlas.width + cx + xx) * 4 + c] as number;
        half[(y * (cw / 2) + x) * 4 + c] = Math.round((at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) + at(2 * y + 1, 2 * x + 1)) / 4);
      }
    }
  }
  const resized = await call('POST', `/api/licenses/masters/${masterId}/identify`, { token: seller.token, type: 'image/png',
    body: encodePng(cw / 2, ch / 2, half) });
  expect(resized.status).toBe(200);
  expect(resized.body).toMatchObject({ found: true, licenseId, method: 'registered',
    texture: { path: atlasPath, width: atlas.width, height: atlas.height, region: { x: cx, y: cy, width: cw, height: ch } } });
  expect(resized.body.texture.scale.x).toBeCloseTo(0.5, 2);
  return download.bytes;
}

async function runFlow(env: Record<string, string>): Promise<void> {
  const logs: LogLine[] = [];
  const dataDir = await tempDir('iki-flow-');
  const running = await serve({ port: 0, dataDir, env, logger: captureLogger(logs), config: { passwordHashing: TEST_HASHING } });
  try {
    const call = client(running.url);
    const seller = await verifiedUser(call, logs, 'Seller');
    const { key, signer } = await registeredKey(call, seller);
    const keys = (await call('GET', '/api/keys/service')).body as Record<string, string>;
    const pkg = await modelPackage(await tempDir('iki-flow-model-'));
    const master = await buildModel(pkg, { key, signer, recipients: [fromBase64Url(keys['x25519PublicKey'] as string, 32)] });
    const upload = await call('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: master });
    expect(upload.status).toBe(201);
    const masterId = upload.body.masterId as string;
    expect(upload.body).toMatchObject({ name: 'Haru', size: master.length, entries: pkg.files.size, textures: 2 });
    // The certified account is passed through from the WASM upload check, not dropped.
    expect(upload.body.signerAccount).toBe(seller.accountId);

    const [ada, bob] = [await verifiedUser(call, logs, 'Ada'), await verifiedUser(call, logs, 'Bob')];
    const byId = await call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token, json: { accountId: ada.accountId } });
    const byEmail = await call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token, json: { email: bob.email } });
    expect([byId.status, byEmail.status]).toEqual([201, 201]);
    const [adaLicense, bobLicense] = [byId.body.licenseId as string, byEmail.body.licenseId as string];

    const adaCopy = await checkCopy(call, seller, ada, masterId, adaLicense, pkg, keys);
    const bobCopy = await checkCopy(call, seller, bob, masterId, bobLicense, pkg, keys);
    // The mean of Ada's and Bob's atlases: recognised as a mix, and the colluders named (docs/watermark.md section 12).
    const [adaAtlas, bobAtlas] = [copyAtlases.get(adaLicense), copyAtlases.get(bobLicense)];
    if (adaAtlas === undefined || bobAtlas === undefined) throw new Error('both copies were checked');
    const mean = adaAtlas.rgba.map((v, i) => (i % 4 === 3 ? v : Math.round((v + (bobAtlas.rgba[i] as number)) / 2)));
    const mixed = await call('POST', `/api/licenses/masters/${masterId}/identify`, { token: seller.token, type: 'image/png',
      body: encodePng(adaAtlas.width, adaAtlas.height, mean) });
    expect(mixed.status).toBe(200);
    expect(mixed.body).toMatchObject({ found: false, reason: 'mixed', mixed: true });
    const named = (mixed.body.candidates as { licenseId: string; named: boolean }[]).filter((c) => c.named).map((c) => c.licenseId);
    expect(named.length).toBeGreaterThan(0);
    expect(named.every((id) => id === adaLicense || id === bobLicense)).toBe(true);
    expect(Buffer.from(adaCopy).equals(Buffer.from(bobCopy))).toBe(false);
    const etags = await Promise.all([[ada, adaLicense], [bob, bobLicense]].map(async ([buyer, id]) =>
      (await call('GET', `/api/licenses/${id as string}/model`, { token: (buyer as User).token })).headers.get('etag')));
    expect(etags[0]).toMatch(/^"[0-9a-f]{64}"$/);
    expect(etags[1]).not.toBe(etags[0]);

    // A copy is only for its licensee; its key opens only that copy.
    expect((await call('GET', `/api/licenses/${adaLicense}/model`, { token: bob.token })).status).toBe(404);
    expect((await call('GET', `/api/licenses/${adaLicense}/model`, { token: seller.token })).status).toBe(403);
    await expect(playCopy(call, bob, bobLicense, adaCopy, fromBase64Url(keys['licenseSigningPublicKey'] as string, 32)))
      .rejects.toMatchObject({ code: 'KEY_REQUIRED' });

    const revoked = await call('POST', `/api/licenses/${adaLicense}/revoke`, { token: seller.token, json: { reason: 'refund' } });
    expect(revoked.status).toBe(200);
    const refusedCopy = await call('GET', `/api/licenses/${adaLicense}/model`, { token: ada.token });
    const session = PlayerSession.create();
    const refusedKey = await call('POST', `/api/licenses/${adaLicense}/key`, { token: ada.token,
      json: { publicKey: toBase64Url(session.publicKey) } });
    session.free();
    for (const refused of [refusedCopy, refusedKey]) {
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('LICENSE_REVOKED');
    }
    // Bob's license is untouched.
    expect((await call('GET', `/api/licenses/${bobLicense}/model`, { token: bob.token })).status).toBe(200);
  } finally {
    await running.close();
  }
}

describe('the whole flow with the real crypto', () => {
  it('runs on embedded PGlite with masters in a local folder', async () => {
    await runFlow({});
  }, 240_000);

  it.skipIf(postgresServer() === '')('runs on PostgreSQL with masters in the database', async () => {
    const pg = await freshPostgres();
    try {
      await runFlow({ DATABASE_URL: pg.url, IKI_ROOT_SECRET: randomBytes(32).toString('base64url'), IKI_BLOB_STORE: 'postgres',
        IKI_PUBLIC_URL: 'http://iki.test' });
    } finally {
      await pg.drop();
    }
  }, 240_000);
});
