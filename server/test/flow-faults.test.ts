/**
 * Faults through the real WebAssembly crypto, on the real app (ephemeral port, in-memory
 * repository, masters in a temporary folder):
 *
 * - uploads that are not a sound master of this seller (bad signature, a flipped byte, a
 *   truncated body, a client that disconnects mid-upload, a project file, a file of role
 *   `license`, an unregistered signing key) are refused and leave nothing stored;
 * - a stored master that no longer matches its record (altered signature, or another sound
 *   master in its place) is caught while its copy streams: the response is cut after the
 *   bytes already sent, so the client sees a broken transfer, and the event is logged.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64Url, SigningKey, type SignerInfo } from '@iki/core';
import { RootSecret } from '../src/secrets.js';
import { wasmCrypto, type WasmLicenseCrypto } from '../src/services/wasm-crypto.js';
import { newUser, startApp, type TestApp, type User } from './helpers/app.js';
import { buildModel, client, modelPackage, packageEntries, registeredKey, type Call, type ModelPackage } from './helpers/flow.js';
import { QUOTA_DEFAULTS } from '../src/quota-config.js';

let app: TestApp;
let crypto: WasmLicenseCrypto;
let call: Call;
let seller: User;
let key: SigningKey;
let signer: SignerInfo;
let pkg: ModelPackage;
let serviceX25519: Uint8Array;
let master: Uint8Array;
let modelDir: string;

beforeAll(async () => {
  const root = new RootSecret(randomBytes(32));
  crypto = await wasmCrypto(root, 'http://iki.test');
  root.destroy();
  app = await startApp({ crypto });
  call = client(app.url);
  seller = await newUser(app, 'Seller');
  ({ key, signer } = await registeredKey(call, { ...seller, name: 'Seller' }));
  modelDir = await mkdtemp(join(tmpdir(), 'iki-faults-model-'));
  pkg = await modelPackage(modelDir);
  serviceX25519 = fromBase64Url((await call('GET', '/api/keys/service')).body.x25519PublicKey as string, 32);
  master = await buildModel(pkg, { key, signer, recipients: [serviceX25519] });
}, 120_000);

afterAll(async () => {
  await app.close();
  crypto.free();
  await rm(modelDir, { recursive: true, force: true });
});

const mastersDir = () => join(app.config.dataDir, 'masters');

/** What is stored: recorded masters, master files, and leftovers of uploads. */
async function stored() {
  return {
    masters: (await app.repo.listMastersBySeller(seller.accountId)).map((m) => m.id),
    files: (await readdir(mastersDir()).catch(() => [] as string[])).filter((f) => f !== '.incoming'),
    incoming: await readdir(join(mastersDir(), '.incoming')).catch(() => [] as string[]),
  };
}

async function upload(body: Uint8Array) {
  return call('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body });
}

function flipped(bytes: Uint8Array, at: number): Uint8Array {
  const out = bytes.slice();
  out[at] = (out[at] ?? 0) ^ 0x10;
  return out;
}

describe('upload faults through the real crypto', () => {
  it.each([
    ['a bad signature', () => flipped(master, master.length - 20), 'BAD_SIGNATURE'],
    ['a flipped byte in the content', () => flipped(master, master.length >> 1), 'DECRYPT_FAILED'],
    ['a truncated body', () => master.subarray(0, master.length - 1000), 'TRUNCATED'],
    ['a body cut in its first chunk', () => master.subarray(0, 30), 'TRUNCATED'],
  ])('%s is refused and nothing is stored', async (_name, body, code) => {
    const before = await stored();
    const answer = await upload(body());
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe(code);
    expect(await stored()).toEqual(before);
  });

  it('a project file, a file of role license and an unregistered signer are refused', async () => {
    const before = await stored();
    const project = await buildModel(pkg, { key, signer, recipients: [serviceX25519], kind: 'project',
      meta: { format: 'iki-project', version: 1, name: 'P', savedAt: '2024-05-01T12:30:00.000Z', canvas: { width: 1, height: 1 }, app: 'test 0' } });
    const licenseRole = await buildModel(pkg, { key, signer, recipients: [serviceX25519], meta: { format: 'iki-model', version: 1,
      name: 'L', role: 'license', license: { id: '0123456789abcdef', masterId: 'mst_x', licensee: 'a', licenseeName: 'A', seller: 's', issuedAt: 1 } } });
    const stranger = SigningKey.generate();
    const unregistered = await buildModel(pkg, { key: stranger, signer: { kind: 'device' }, recipients: [serviceX25519] });
    stranger.free();
    for (const [body, code] of [[project, 'WRONG_KIND'], [licenseRole, 'NOT_A_MASTER'], [unregistered, 'SIGNER_NOT_SELLER']] as const) {
      const answer = await upload(body);
      expect([answer.status, answer.body.error.code]).toEqual([422, code]);
    }
    expect(await stored()).toEqual(before);
  });

  it('a client that disconnects mid-upload leaves nothing', async () => {
    const before = await stored();
    const url = new URL(`${app.url}/api/licenses/masters`);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: {
      authorization: `Bearer ${seller.token}`, 'content-type': 'application/vnd.iki.model', 'content-length': String(master.length) } });
    req.on('error', () => {});
    req.write(master.subarray(0, master.length >> 1));
    await new Promise((resolve) => setTimeout(resolve, 300));
    req.destroy();
    for (let i = 0; i < 50 && JSON.stringify(await stored()) !== JSON.stringify(before); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await stored()).toEqual(before);
  });
});

describe('a stored master that no longer matches its record', () => {
  async function licensed(): Promise<{ masterId: string; licenseId: string; buyer: User }> {
    // A master of its own bytes: identical masters share one stored blob (issue 16 item 6).
    const answer = await upload(await buildModel(pkg, { key, signer, recipients: [serviceX25519] }));
    expect(answer.status).toBe(201);
    const buyer = await newUser(app, 'Buyer');
    const license = await call('POST', `/api/licenses/masters/${answer.body.masterId}/licenses`, { token: seller.token,
      json: { accountId: buyer.accountId } });
    return { masterId: answer.body.masterId, licenseId: license.body.licenseId, buyer };
  }

  /** Downloads the copy; resolves with the status and whether the body arrived whole. */
  async function download(licenseId: string, buyer: User): Promise<{ status: number; complete: boolean }> {
    const response = await fetch(`${app.url}/api/licenses/${licenseId}/model`, { headers: { authorization: `Bearer ${buyer.token}` } });
    const complete = await response.arrayBuffer().then(() => true, () => false);
    return { status: response.status, complete };
  }

  it.each([
    ['its signature altered', async (file: Uint8Array) => flipped(file, file.length - 20), 'BAD_SIGNATURE'],
    ['another sound master in its place', async () => buildModel(pkg, { key, signer, recipients: [serviceX25519],
      meta: { format: 'iki-model', version: 1, name: 'Other', role: 'master' } }), 'MASTER_MISMATCH'],
  ])('with %s: the copy is cut off and the failure logged', async (_name, replace, code) => {
    const { masterId, licenseId, buyer } = await licensed();
    expect(await download(licenseId, buyer)).toEqual({ status: 200, complete: true });
    const path = join(mastersDir(), `${masterId}.ikm`);
    await writeFile(path, await replace(new Uint8Array(await readFile(path))));
    const logged = app.logs.length;
    expect(await download(licenseId, buyer)).toEqual({ status: 200, complete: false });
    const line = app.logs.slice(logged).find((l) => l.message === 'streamed response aborted');
    expect(line?.fields).toMatchObject({ code, path: `/api/licenses/${licenseId}/model` });
  });
});

describe('the decoded-size limit of masters (issue 22 item 10)', () => {
  it('refuses from the manifest a master that decodes past IKI_MASTER_MAX_DECODED_BYTES, at the limit it is kept', async () => {
    const decoded = packageEntries(pkg).reduce((sum, e) => sum + e.size, 0);
    for (const [limit, status] of [[decoded - 1, 422], [decoded, 201]] as const) {
      const limited = await startApp({ crypto, config: { quotas: { ...QUOTA_DEFAULTS,
        uploads: { ...QUOTA_DEFAULTS.uploads, maxDecodedBytes: limit } } } });
      try {
        const there = client(limited.url);
        const user = await newUser(limited, 'Inflating Seller');
        const signed = await registeredKey(there, { ...user, name: 'Inflating Seller' });
        const body = await buildModel(pkg, { key: signed.key, signer: signed.signer, recipients: [serviceX25519] });
        const answer = await there('POST', '/api/licenses/masters', { token: user.token, type: 'application/vnd.iki.model', body });
        expect(answer.status, String(limit)).toBe(status);
        if (status === 422) {
          expect(answer.body.error).toMatchObject({ code: 'LIMIT_EXCEEDED',
            details: { limit: 'IKI_MASTER_MAX_DECODED_BYTES', value: String(decoded), max: String(limit) } });
          expect(await limited.repo.listMastersBySeller(user.accountId)).toEqual([]);
        }
        signed.key.free();
      } finally {
        await limited.close();
      }
    }
  });
});
