/** Services on the in-memory repository: the rules without HTTP. */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import { silentLogger } from '../src/logger.js';
import { AccountService } from '../src/services/accounts.js';
import { SessionService } from '../src/services/sessions.js';
import { unavailableCrypto } from '../src/services/crypto-unavailable.js';
import { KeyService } from '../src/services/keys.js';
import { LicenseService } from '../src/services/licenses.js';
import { MasterService } from '../src/services/masters.js';
import { PasswordHasher } from '../src/services/passwords.js';
import { TokenService } from '../src/services/tokens.js';
import { UsageLimiter } from '../src/services/usage-limits.js';
import { QUOTA_DEFAULTS } from '../src/quota-config.js';
import type { LicenseCrypto } from '../src/services/crypto-port.js';
import { FsBlobStore } from '../src/storage/blobs.js';
import { MemoryRepository } from '../src/storage/memory-repository.js';
import { fakeCrypto, fakeMaster } from './helpers/fake-crypto.js';
import { deviceKey, proofFor, TEST_HASHING } from './helpers/app.js';

let now = new Date('2030-01-01T00:00:00Z');
const clock = () => now;
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function world(crypto: LicenseCrypto = fakeCrypto()) {
  const repo = new MemoryRepository();
  const dir = await mkdtemp(join(tmpdir(), 'iki-svc-'));
  dirs.push(dir);
  const blobs = new FsBlobStore(join(dir, 'masters'));
  const links: string[] = [];
  const tokens = new TokenService({ issuer: 'http://iki.test', ttlSeconds: 900, seed: randomBytes(32), oidc: undefined, now: clock });
  const hasher = new PasswordHasher(TEST_HASHING);
  const accounts = new AccountService({ repo, hasher, tokens, mailsTotal: 1000,
    sessions: new SessionService({ repo, tokens, now: clock, lifetime: { idleSeconds: 86400, maxSeconds: 86400 * 30 }, reuseGraceSeconds: 10 }), now: clock, publicUrl: 'http://iki.test', verificationTtlSeconds: 3600,
    signInLimits: { perAddress: 10, perIp: 50, windowSeconds: 900 }, addressKey: randomBytes(32), mailer: { async sendVerification(_to, link) { links.push(link); } },
    mailLimits: { perAddress: 3, perIp: 20, windowSeconds: 3600 }, mailAddressKey: randomBytes(32), logger: silentLogger });
  const limiter = new UsageLimiter({ repo, now: clock, limits: QUOTA_DEFAULTS });
  const masters = new MasterService({ repo, blobs, crypto, now: clock, limiter, limits: QUOTA_DEFAULTS.uploads });
  const licenses = new LicenseService({ repo, blobs, crypto, now: clock, service: 'http://iki.test',
    limits: { perLicense: 2, perUser: 3, windowSeconds: 3600 }, identifyLimits: QUOTA_DEFAULTS.identify, limiter });
  const keys = new KeyService({ repo, crypto, now: clock });
  const user = async (name: string) => {
    await accounts.signUp({ email: `${name}@example.com`, password: 'correct horse battery', name }, '192.0.2.1', 'the browser');
    const view = await accounts.verifyEmail(new URL(links.at(-1) as string).searchParams.get('token') as string, { proof: 'the browser' });
    return view.accountId;
  };
  return { repo, dir, blobs, tokens, hasher, accounts, masters, licenses, keys, links, user };
}

async function* stream(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

const code = async (p: Promise<unknown>) => p.then(() => 'resolved', (e: unknown) => (e instanceof ApiError ? e.code : String(e)));

beforeEach(() => {
  now = new Date('2030-01-01T00:00:00Z');
});

describe('accounts', () => {
  it('verification links expire', async () => {
    const w = await world();
    await w.accounts.signUp({ email: 'late@example.com', password: 'correct horse battery', name: 'Late' }, '192.0.2.1');
    now = new Date(now.getTime() + 3601_000);
    const token = new URL(w.links[0] as string).searchParams.get('token') as string;
    expect(await code(w.accounts.verifyEmail(token))).toBe('VERIFICATION_INVALID');
  });

  it('replaces a hash made with older parameters on sign-in', async () => {
    const w = await world();
    const id = await w.user('ada');
    const old = await new PasswordHasher({ memoryKiB: 128, iterations: 1, parallelism: 1 }).hash('correct horse battery');
    await w.repo.updatePasswordHash(id, old);
    await w.accounts.signIn('ADA@example.com', 'correct horse battery', '192.0.2.1');
    const stored = (await w.repo.findAccountById(id))?.passwordHash as string;
    expect(stored).not.toBe(old);
    expect(stored.startsWith('$argon2id$v=19$m=256,t=1,p=1$')).toBe(true);
  });

  it('tokens expire after their lifetime', async () => {
    const w = await world();
    const id = await w.user('bob');
    const { accessToken, expiresIn } = await w.accounts.signIn('bob@example.com', 'correct horse battery', '192.0.2.1');
    expect(expiresIn).toBe(900);
    expect((await w.accounts.authenticate(accessToken)).accountId).toBe(id);
    now = new Date(now.getTime() + 901_000);
    expect(await code(w.accounts.authenticate(accessToken))).toBe('UNAUTHENTICATED');
  });

  it('hashes with Argon2id and refuses a wrong password', async () => {
    const hasher = new PasswordHasher(TEST_HASHING);
    const hash = await hasher.hash('pw-one-two-three');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=256,t=1,p=1\$/);
    expect(await hasher.verify('pw-one-two-three', hash)).toBe(true);
    expect(await hasher.verify('pw-one-two-thref', hash)).toBe(false);
    expect(await hasher.verify('x', 'not a hash')).toBe(false);
  });
});

describe('masters', () => {
  it('a failed check leaves no file and no record', async () => {
    const w = await world();
    const seller = await w.user('sal');
    const key = deviceKey();
    await w.keys.register(seller, key.publicKey, Buffer.from(proofFor(key, seller), 'base64url'), 'k');
    const bad = Buffer.from(fakeMaster({ name: 'M', signer: key.publicKey }));
    bad[60] = (bad[60] as number) ^ 0xff;
    expect(await code(w.masters.upload(seller, stream(bad), 1e6))).toBe('BAD_SIGNATURE');
    expect(await code(w.masters.upload(seller, stream(fakeMaster({ name: 'M', signer: key.publicKey })), 100))).toBe('PAYLOAD_TOO_LARGE');
    expect(await readdir(join(w.dir, 'masters', '.incoming'))).toEqual([]);
    expect(await w.masters.list(seller)).toEqual([]);
    const ok = await w.masters.upload(seller, stream(fakeMaster({ name: 'M', signer: key.publicKey })), 1e6);
    expect(await readdir(join(w.dir, 'masters'))).toContain(`${ok.masterId}.ikm`);
  });

  it('refuses a revoked signing key, before the complete check', async () => {
    const crypto = fakeCrypto();
    const w = await world(crypto);
    const seller = await w.user('sam');
    const key = deviceKey();
    await w.keys.register(seller, key.publicKey, Buffer.from(proofFor(key, seller), 'base64url'), 'k');
    await w.keys.revoke(seller, key.b64);
    const master = () => stream(fakeMaster({ name: 'M', signer: key.publicKey }));
    expect(await code(w.masters.upload(seller, master(), 1e6))).toBe('SIGNING_KEY_REQUIRED');
    const other = deviceKey();
    await w.keys.register(seller, other.publicKey, Buffer.from(proofFor(other, seller), 'base64url'), 'k2');
    expect(await code(w.masters.upload(seller, master(), 1e6))).toBe('SIGNER_NOT_SELLER');
    expect(crypto.calls).not.toContain('verifyMasterStream');
    expect(await readdir(join(w.dir, 'masters', '.incoming'))).toEqual([]);
  });

  it('without the crypto module uploads answer CRYPTO_UNAVAILABLE and leave nothing', async () => {
    const w = await world(unavailableCrypto());
    const seller = await w.user('sue');
    await w.repo.registerSigningKey({ publicKey: deviceKey().b64, accountId: seller, name: 'k', createdAt: now });
    expect(await code(w.masters.upload(seller, stream(Buffer.from('x')), 1e6))).toBe('CRYPTO_UNAVAILABLE');
    expect(await readdir(join(w.dir, 'masters', '.incoming'))).toEqual([]);
    expect(() => w.keys.servicePublicKeys()).toThrow(ApiError);
  });
});

describe('licenses', () => {
  async function licensed() {
    const w = await world();
    const seller = await w.user('sid');
    const buyer = await w.user('bea');
    const key = deviceKey();
    await w.keys.register(seller, key.publicKey, Buffer.from(proofFor(key, seller), 'base64url'), 'k');
    const master = await w.masters.upload(seller, stream(fakeMaster({ name: 'M', signer: key.publicKey })), 1e6);
    const ids = [];
    for (let i = 0; i < 3; i += 1) ids.push((await w.licenses.create(seller, master.masterId, { accountId: buyer })).licenseId);
    return { w, seller, buyer, master, ids };
  }

  it('assigns distinct random 64-bit ids', async () => {
    const { ids } = await licensed();
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
  });

  it('applies configured limits per license and per user, and a weak key counts nothing', async () => {
    const { w, buyer, ids } = await licensed();
    const pk = new Uint8Array(32).fill(9);
    expect((await w.licenses.releaseKey(buyer, ids[0] as string, pk)).kind).toBe('granted');
    expect(await code(w.licenses.releaseKey(buyer, ids[0] as string, new Uint8Array(32)))).toBe('WEAK_KEY');
    expect((await w.licenses.releaseKey(buyer, ids[0] as string, pk)).kind).toBe('granted');
    const perLicense = await w.licenses.releaseKey(buyer, ids[0] as string, pk);
    expect(perLicense).toMatchObject({ kind: 'limited', outcome: { scope: 'license' } });
    expect((await w.licenses.releaseKey(buyer, ids[1] as string, pk)).kind).toBe('granted');
    expect(await w.licenses.releaseKey(buyer, ids[2] as string, pk)).toMatchObject({ kind: 'limited', outcome: { scope: 'user' } });
    expect((await w.repo.findLicense(ids[0] as string))?.releaseCount).toBe(2);
  });

  it('the licensee sees the license, strangers do not, only the seller revokes', async () => {
    const { w, seller, buyer, ids } = await licensed();
    const stranger = await w.user('sly');
    expect((await w.licenses.get(buyer, ids[0] as string)).licensee.accountId).toBe(buyer);
    expect(await code(w.licenses.get(stranger, ids[0] as string))).toBe('LICENSE_NOT_FOUND');
    expect(await code(w.licenses.revoke(buyer, ids[0] as string, undefined))).toBe('FORBIDDEN');
    const revoked = await w.licenses.revoke(seller, ids[0] as string, 'gone');
    expect(revoked.revokedAt).toBe(now.toISOString());
    expect(await code(w.licenses.openCopy(buyer, ids[0] as string))).toBe('LICENSE_REVOKED');
    const mine = await w.licenses.listForLicensee(buyer);
    expect(mine).toHaveLength(3);
    expect(mine.filter((l) => l.revokedAt !== null).map((l) => l.licenseId)).toEqual([ids[0]]);
  });

  it('identify reports a mark of another master\'s license without naming it', async () => {
    const { w, seller, master } = await licensed();
    const result = await w.licenses.identify(seller, master.masterId, async () => Buffer.from('LIC:ffffffffffffffff'), 'image/png');
    expect(result).toEqual({ found: true, licenseId: 'ffffffffffffffff', method: 'blind', texturesTried: 0, confidence: 0.97, match: 'decoded', mixed: false, candidates: [], license: null });
  });
});

describe('keys', () => {
  it('unwrap opens only for the account named in the slot', async () => {
    const w = await world();
    const a = await w.user('amy');
    expect(await code(w.keys.unwrap(a, 'acct_someone_else', new Uint8Array([1]), new Uint8Array(32).fill(1)))).toBe('FORBIDDEN');
  });
});
