// The Project API in Node (SPEC "What the service does" 7): save signed by a WebCrypto key,
// open with the signer's verdict, password and account protection, a modified file, assets read
// one at a time, and the snapshot's limits.
import { beforeAll, describe, expect, it } from 'vitest';
import { IkiError } from '../src/errors.js';
import { toBase64Url } from '../src/keys.js';
import { ServiceError } from '../src/key-service.js';
import {
  MAX_SNAPSHOT_BYTES, ProjectError, openProject, parseSnapshot, saveProject, verdictText, type OpenedProject,
} from '../src/project/index.js';
import { registerSigner, type ExternalSigner } from '../src/signer.js';
import { writeContainer } from '../src/container.js';
import { collect } from '../src/streams.js';
import { loadWasm } from '../src/wasm.js';
import { CHEAP, PASSWORD, sha256hex } from './container-support.js';
import { FakeKeyServer, browserSigner, bytesOf, smallProject } from './project-support.js';

const APP = 'iki-tests 1';

async function save(signer: ExternalSigner, extra: Partial<Parameters<typeof saveProject>[0]> = {}): Promise<Uint8Array> {
  const saved = await saveProject({ ...smallProject(), signer, app: APP, chunkSize: 16 * 1024, ...extra });
  return bytesOf(saved.blob as Blob);
}

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
  return 'resolved';
}

beforeAll(async () => {
  await loadWasm();
});

describe('saving and opening', () => {
  it('saves signed by a device key and opens as this device\'s key, content intact', async () => {
    const { signer } = await browserSigner();
    const file = await save(signer);
    const opened = await openProject(file, { thisDeviceKey: signer.publicKey });
    expect(opened.verdict).toMatchObject({ kind: 'device', thisDevice: true, fingerprint: toBase64Url(signer.publicKey) });
    expect(verdictText(opened.verdict)).toContain('this device');
    expect(opened.meta).toMatchObject({ name: 'Poster', canvas: { width: 640, height: 480 }, app: APP });
    // Markup in strings is kept as the text it is.
    expect(opened.snapshot()).toEqual(smallProject().snapshot);
    const project = smallProject();
    expect(opened.assets.map((a) => a.name).sort()).toEqual(project.assets.map((a) => a.name).sort());
    // Equal contents are stored once, under both names.
    expect(new Set(opened.assets.map((a) => a.path)).size).toBe(2);
    const hero = await opened.readAsset('images/hero.png');
    expect(sha256hex(hero)).toBe(sha256hex(project.assets[1]?.data as Uint8Array));
    expect(opened.asset('images/hero.png').type).toBe('image/png');
    expect(new TextDecoder().decode(await opened.readAsset('notes/readme.txt'))).toBe('plain text <b>not markup</b>\n');
    // Another app's key: not this device's.
    const other = await openProject(file, { thisDeviceKey: new Uint8Array(32).fill(1) });
    expect(other.verdict).toMatchObject({ kind: 'device', thisDevice: false });
    opened.close();
    other.close();
  });

  it('reads assets one at a time, in any order, also concurrently', async () => {
    const { signer } = await browserSigner();
    const opened = await openProject(await save(signer));
    const [a, b, c] = await Promise.all([opened.readAsset('notes/readme.txt'), opened.readAsset('images/hero.png'),
      opened.readAsset('copy of hero.png')]);
    expect(a?.length).toBe(29);
    expect(b).toEqual(c);
    opened.close();
    expect(await code(opened.readAsset('images/hero.png'))).toBe('NOT_ACKNOWLEDGED');
  });

  it('opens as a new project: saving it again signs with the current key and streams the assets', async () => {
    const first = await browserSigner();
    const opened = await openProject(await save(first.signer, { protection: { password: PASSWORD, passwordCost: CHEAP } }), { password: PASSWORD });
    const second = await browserSigner();
    const again = await saveProject({ ...opened.toSave(), signer: second.signer, app: APP });
    const reopened = await openProject(again.blob as Blob, { thisDeviceKey: second.signer.publicKey });
    expect(reopened.verdict).toMatchObject({ kind: 'device', thisDevice: true });
    expect(reopened.encrypted).toBe(false);
    expect(await reopened.readAsset('copy of hero.png')).toEqual(await opened.readAsset('images/hero.png'));
    opened.close();
    reopened.close();
  });

  it('refuses what is not a project', async () => {
    expect(await code(openProject(new Uint8Array([1, 2, 3])))).toBe('NOT_A_PROJECT');
    const model = new Uint8Array([0x89, 0x49, 0x4b, 0x4d, 0x0d, 0x0a, 0x1a, 0x0a, 1, 0, 0, 0]);
    const error = await openProject(model).catch((e: ProjectError) => e);
    expect(error).toBeInstanceOf(ProjectError);
    expect((error as ProjectError).details?.found).toContain('model');
  });

  it('refuses bad asset names before any work', async () => {
    const { signer } = await browserSigner();
    for (const name of ['../escape.png', '/abs.png', 'a\\b.png', 'a//b.png', '', 'C:x.png']) {
      const project = smallProject();
      expect(await code(saveProject({ ...project, assets: [{ name, data: new Uint8Array(1) }], signer, app: APP }))).toBe('BAD_ASSET');
    }
    const twice = smallProject();
    expect(await code(saveProject({ ...twice, assets: [...twice.assets, { name: 'notes/readme.txt', data: new Uint8Array(1) }], signer, app: APP })))
      .toBe('BAD_ASSET');
  });
});

describe('password and account protection', () => {
  it('asks for the password, refuses a wrong one, allows a retry', async () => {
    const { signer } = await browserSigner();
    const file = await save(signer, { protection: { password: PASSWORD, passwordCost: CHEAP } });
    expect(await code(openProject(file))).toBe('PASSWORD_REQUIRED');
    expect(await code(openProject(file, { password: 'wrong horse' }))).toBe('WRONG_PASSWORD');
    // The refusal carries who signed it, read without the key (SPEC 7: the signer first).
    for (const password of [undefined, 'wrong horse']) {
      const refused = await openProject(file, password === undefined ? {} : { password }).catch((e: ProjectError) => e);
      expect(refused).toBeInstanceOf(ProjectError);
      expect((refused as ProjectError).verdict).toMatchObject({ kind: 'device', fingerprint: toBase64Url(signer.publicKey) });
    }
    const opened = await openProject(file, { password: PASSWORD });
    expect(opened.encrypted).toBe(true);
    expect(opened.snapshot()).toEqual(smallProject().snapshot);
    opened.close();
  });

  it('opens an account file for its account only, naming the account to anyone else', async () => {
    const server = new FakeKeyServer();
    const owner = server.client('acct_owner');
    const { signer } = await browserSigner();
    const file = await save(signer, { protection: { account: owner } });
    const opened = await openProject(file, { session: { accountId: 'acct_owner', keyService: owner } });
    expect(await opened.readAsset('notes/readme.txt')).toHaveLength(29);
    opened.close();
    const other = await openProject(file, { session: { accountId: 'acct_other', keyService: server.client('acct_other') } })
      .catch((e: ProjectError) => e);
    expect(other).toMatchObject({ code: 'WRONG_ACCOUNT', details: { accountId: 'acct_owner' } });
    expect((other as Error).message).toContain('acct_owner');
    expect(await openProject(file).catch((e: ProjectError) => e)).toMatchObject({ code: 'SIGN_IN_REQUIRED', details: { accountId: 'acct_owner' } });
    expect((other as ProjectError).verdict).toMatchObject({ kind: 'device', fingerprint: toBase64Url(signer.publicKey) });
    // The service refuses an unwrap for another account whatever the client says.
    const forged = await openProject(file, { session: { accountId: 'acct_owner', keyService: server.client('acct_other') } }).catch((e) => e);
    expect(forged).toBeInstanceOf(ServiceError);
    expect((forged as ServiceError).code).toBe('FORBIDDEN');
  });

  it('with both, either the password or the account opens it', async () => {
    const server = new FakeKeyServer();
    const owner = server.client('acct_owner');
    const { signer } = await browserSigner();
    const file = await save(signer, { protection: { password: PASSWORD, passwordCost: CHEAP, account: owner } });
    (await openProject(file, { password: PASSWORD })).close();
    (await openProject(file, { session: { accountId: 'acct_owner', keyService: owner } })).close();
    expect(await openProject(file, { session: { accountId: 'acct_x', keyService: server.client('acct_x') } }).catch((e) => e))
      .toMatchObject({ code: 'PASSWORD_REQUIRED', details: { accountId: 'acct_owner' } });
  });
});

describe('the verdict', () => {
  async function accountFile(server: FakeKeyServer) {
    const service = server.client('acct_ada', 'ada@example.com');
    const { signer } = await browserSigner();
    const registration = await registerSigner(service, signer, 'laptop');
    const file = await save({ ...signer, claim: registration.claim });
    return { file, signer, service, registration };
  }

  it('a certified key is a verified account, its e-mail shown to its owner; revoked once revoked', async () => {
    const server = new FakeKeyServer();
    const { file, signer, service } = await accountFile(server);
    const opened = await openProject(file, { keyService: service, session: { accountId: 'acct_ada', email: 'ada@example.com', keyService: service } });
    expect(opened.verdict).toMatchObject({ kind: 'account', accountId: 'acct_ada', email: 'ada@example.com', revocation: 'active', issuer: 'service' });
    expect(opened.fetchedIssuer).toEqual(server.keys.certificatePublicKey);
    const stranger = await openProject(file, { keyService: server.client() });
    expect(stranger.verdict).toMatchObject({ kind: 'account', accountId: 'acct_ada', revocation: 'active' });
    expect('email' in stranger.verdict).toBe(false);
    await service.revokeKey(signer.publicKey);
    const revoked = await openProject(file, { keyService: server.client() });
    expect(revoked.verdict).toMatchObject({ kind: 'account', revocation: 'revoked' });
    expect(verdictText(revoked.verdict)).toContain('REVOKED');
  });

  it('offline: the certificate against the last known key, revocation unknown; without one, unverified', async () => {
    const server = new FakeKeyServer();
    const { file } = await accountFile(server);
    server.offline = true;
    const offline = await openProject(file, { keyService: server.client(), lastKnownIssuer: server.keys.certificatePublicKey });
    expect(offline.verdict).toMatchObject({ kind: 'account', revocation: 'unknown', offline: true, issuer: 'last-known' });
    expect(verdictText(offline.verdict)).toContain('unknown (offline)');
    const blind = await openProject(file, { keyService: server.client() });
    expect(blind.verdict).toMatchObject({ kind: 'device', unverifiedAccount: { accountId: 'acct_ada' } });
  });

  it('a certificate of another key service, or another account named, is an unverified device key', async () => {
    const server = new FakeKeyServer();
    const { file, signer, registration } = await accountFile(server);
    const elsewhere = new FakeKeyServer(new Uint8Array(32).fill(9));
    const other = await openProject(file, { keyService: elsewhere.client() });
    expect(other.verdict).toMatchObject({ kind: 'device', unverifiedAccount: { accountId: 'acct_ada', reason: 'certificate issuer is not the key service' } });
    const lie = await save({ ...signer, claim: { ...registration.claim, account: 'acct_bob' } });
    const lied = await openProject(lie, { keyService: server.client() });
    expect(lied.verdict).toMatchObject({ kind: 'device', unverifiedAccount: { accountId: 'acct_bob', reason: 'the signer\'s account is not the certificate\'s' } });
  });

  it('one flipped byte: modified after signing; content only after acknowledging, the damaged asset refused', async () => {
    const { signer } = await browserSigner();
    for (const protection of [undefined, { password: PASSWORD, passwordCost: CHEAP }]) {
      const file = await save(signer, protection === undefined ? {} : { protection });
      const opened0 = await openProject(file, protection === undefined ? {} : { password: PASSWORD });
      const hero = opened0.asset('images/hero.png');
      opened0.close();
      // The hero asset is the file's largest entry: flip a byte in its middle.
      const at = file.length - 40_000;
      file[at] = (file[at] as number) ^ 0x20;
      const opened = await openProject(file, protection === undefined ? {} : { password: PASSWORD });
      expect(opened.verdict).toMatchObject({ kind: 'modified', signatureFailed: true, damaged: [hero.path] });
      expect(verdictText(opened.verdict)).toBe('modified after it was signed: the signature does not match');
      expect(opened.acknowledged).toBe(false);
      expect(() => opened.snapshot()).toThrow(expect.objectContaining({ code: 'NOT_ACKNOWLEDGED' }));
      opened.acknowledge();
      expect(opened.snapshot()).toEqual(smallProject().snapshot);
      expect(opened.asset('images/hero.png').damaged).toBe(true);
      expect(await code(opened.readAsset('images/hero.png'))).toBe('ASSET_DAMAGED');
      expect(await opened.readAsset('notes/readme.txt')).toHaveLength(29);
      opened.close();
    }
  });

  it('an external signature that does not verify yields no file', async () => {
    const { signer } = await browserSigner();
    const other = await browserSigner();
    const liar: ExternalSigner = { publicKey: signer.publicKey, sign: (m) => other.signer.sign(m) };
    expect(await code(saveProject({ ...smallProject(), signer: liar, app: APP }))).toBe('BAD_SIGNATURE');
  });
});

describe('the snapshot is data within its limit', () => {
  it('parses JSON objects only, drops __proto__, at and past the limit', () => {
    expect(parseSnapshot(new TextEncoder().encode('{"__proto__":{"polluted":1},"a":"<script>"}'))).toEqual({ a: '<script>' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    for (const bad of ['[1]', '"x"', '{', '\u00ff']) expect(() => parseSnapshot(new TextEncoder().encode(bad))).toThrow(ProjectError);
    const at = new Uint8Array(MAX_SNAPSHOT_BYTES).fill(0x20);
    at.set(new TextEncoder().encode('{"a":1}'));
    expect(parseSnapshot(at)).toEqual({ a: 1 });
    const past = new Uint8Array(MAX_SNAPSHOT_BYTES + 1).fill(0x20);
    past.set(new TextEncoder().encode('{"a":1}'));
    expect(() => parseSnapshot(past)).toThrow(expect.objectContaining({ code: 'BAD_SNAPSHOT', details: expect.objectContaining({ reason: 'too large' }) }));
  });

  it('a file whose snapshot entry is past the limit is refused before its content is read', async () => {
    const { signer } = await browserSigner();
    const size = MAX_SNAPSHOT_BYTES + 1;
    const big = new Uint8Array(size).fill(0x20);
    big.set(new TextEncoder().encode('{}'));
    const file = await collect(writeContainer([{ path: 'snapshot.json', type: 'application/x-iki-snapshot', encoding: 'deflate',
      size, data: big, sha256: sha256hex(big) }], { kind: 'project', externalSigner: signer, signer: { kind: 'device' },
      meta: { format: 'iki-project', version: 1, name: 'x', savedAt: '2024-01-01T00:00:00Z', canvas: { width: 1, height: 1 }, app: APP } }));
    let progressed = 0;
    const error = await openProject(file, { onProgress: (p) => { progressed = p.done; } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'BAD_SNAPSHOT', details: { reason: 'too large' } });
    // Refused at the manifest, within the first pieces of the file.
    expect(progressed).toBeLessThan(1024 * 1024);
    expect(error).not.toBeInstanceOf(IkiError);
  });
});

export type { OpenedProject };

describe('reading an asset whole', () => {
  it('at and past MAX_READ_ASSET_BYTES: past it, streaming is asked for before anything is read', async () => {
    const { OpenedProject, MAX_READ_ASSET_BYTES } = await import('../src/project/index.js');
    const opened = (size: number) => new OpenedProject('iki', { kind: 'legacy' }, { name: 'x', canvas: { width: 1, height: 1 } },
      [{ name: 'big', path: 'assets/big', type: 'application/octet-stream', size, damaged: false }], false, {}, {
        // eslint-disable-next-line require-yield
        open: () => (async function* () { throw new Error('read started'); })(),
        close: () => undefined,
      });
    expect(await opened(MAX_READ_ASSET_BYTES).readAsset('big').catch((e: Error) => e.message)).toBe('read started');
    expect(await opened(MAX_READ_ASSET_BYTES + 1).readAsset('big').catch((e: ProjectError) => e.code)).toBe('BAD_ASSET');
  });

  it('hashes a Blob natively and a stream in WASM to the same digest', async () => {
    const { hashAsset } = await import('../src/project/index.js');
    const bytes = new Uint8Array(200_000).map((_, i) => i * 7);
    const native = await hashAsset(new Blob([bytes]));
    const streamed = await hashAsset({ size: bytes.length, open: () => bytes });
    expect(native).toEqual(streamed);
    expect(native.sha256).toBe(sha256hex(bytes));
  });
});
