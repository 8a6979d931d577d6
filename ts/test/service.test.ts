// The service side of licensing through WASM (ts/src/service.ts): argument checks, the
// streamed upload check and its refusals, key certificates, license copies (deterministic,
// checked against the record), identify, and account slots.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { openContainer } from '../src/container.js';
import { IkiError } from '../src/errors.js';
import { encodePng } from '../src/image.js';
import { ContentKey, SigningKey, X25519Identity, toBase64Url } from '../src/keys.js';
import { AccountUnwrap, PlayerSession, openLicenseCopy, sealContentKeyForAccount } from '../src/player.js';
import { IMAGE_BOUND_CEILING, ServiceKeys, type ImageBound } from '../src/service.js';
import { collect } from '../src/streams.js';
import { loadWasm } from '../src/wasm.js';
import { FAKE_SEED, entry, inPieces, rejection, writeAll } from './container-support.js';
import {
  LICENSE_A, LICENSE_B, MASTER_ID, ROOT, SERVICE_ID, licenseCopy, masterOptions, masterRef, modelEntries, registrationProof,
  serviceKeys,
} from './service-support.js';

let keys: ServiceKeys;
let seller: SigningKey;
let master: Uint8Array;

const code = (error: unknown): string | undefined => (error instanceof IkiError ? error.code : undefined);

beforeAll(async () => {
  await loadWasm();
  keys = serviceKeys();
  seller = SigningKey.fromSeed(FAKE_SEED);
  master = await writeAll(modelEntries(), masterOptions(seller, keys.x25519PublicKey));
});

describe('ServiceKeys.fromRoot', () => {
  it('checks its arguments before calling WASM', () => {
    expect(() => ServiceKeys.fromRoot([1, 2] as unknown as Uint8Array, SERVICE_ID)).toThrow(TypeError);
    expect(() => ServiceKeys.fromRoot(new Uint8Array(31), SERVICE_ID)).toThrow(/root must be 32 bytes/);
    expect(() => ServiceKeys.fromRoot(ROOT, '')).toThrow(RangeError);
    expect(() => ServiceKeys.fromRoot(ROOT, 7 as unknown as string)).toThrow(TypeError);
    expect(code(rejectSync(() => ServiceKeys.fromRoot(ROOT, 's'.repeat(1025))))).toBe('INVALID_ARGUMENT');
  });

  it('derives the same public keys from the same root, others from another, and leaves the input alone', () => {
    const again = ServiceKeys.fromRoot(ROOT, SERVICE_ID);
    expect(again.x25519PublicKey).toEqual(keys.x25519PublicKey);
    expect(again.licenseSigningPublicKey).toEqual(keys.licenseSigningPublicKey);
    expect(again.certificatePublicKey).not.toEqual(again.licenseSigningPublicKey);
    expect(ROOT).toEqual(new Uint8Array(32).fill(0x5e));
    const other = ServiceKeys.fromRoot(new Uint8Array(32).fill(0x5f), SERVICE_ID);
    expect(other.x25519PublicKey).not.toEqual(keys.x25519PublicKey);
    expect(again.serviceId).toBe(SERVICE_ID);
    again.free();
    other.free();
    again.free();
    expect(code(rejectSync(() => again.sealLicenseKey(masterRef(master), LICENSE_A.id, new Uint8Array(32))))).toBe('INVALID_STATE');
  });
});

describe('upload check', () => {
  it('summarises a sound master fed in uneven pieces', async () => {
    const summary = await keys.verifyMaster(inPieces(master, 7777));
    expect(summary.sha256).toBe(createHash('sha256').update(master).digest('hex'));
    expect(summary.size).toBe(master.length);
    expect(summary.name).toBe('Test model');
    expect(summary.entries.map((e) => e.path)).toEqual(modelEntries().map((e) => e.path));
    expect(summary.textures).toEqual([
      { path: 'Test.1024/texture_00.png', width: 512, height: 512 },
      { path: 'Test.1024/texture_01.png', width: 96, height: 40 },
    ]);
    expect(summary.signerPublicKey).toEqual(seller.publicKey);
    expect(summary.signer).toEqual({ kind: 'device', name: 'seller laptop' });
    expect(summary.certifiedAccount).toBeNull();
  });

  it('refuses what is not a sound master for this service', async () => {
    const refused = async (bytes: Uint8Array) => code(await rejection(keys.verifyMaster(bytes)));
    const stranger = X25519Identity.generate();
    expect(await refused(await writeAll(modelEntries(), masterOptions(seller, stranger.publicKey)))).toBe('NOT_A_MASTER');
    const { protection: _none, ...plain } = masterOptions(seller, keys.x25519PublicKey);
    expect(await refused(await writeAll(modelEntries(), plain))).toBe('NOT_A_MASTER');
    const licenseMeta = { format: 'iki-model', version: 1, name: 'x', role: 'license', license: { id: LICENSE_A.id,
      masterId: MASTER_ID, licensee: 'a', licenseeName: 'A', seller: 's', issuedAt: 1 } };
    expect(await refused(await writeAll(modelEntries(), masterOptions(seller, keys.x25519PublicKey, { meta: licenseMeta })))).toBe('NOT_A_MASTER');
    expect(await refused(master.subarray(0, master.length - 1))).toBe('TRUNCATED');
    const flipped = master.slice();
    flipped[flipped.length - 10]! ^= 1;
    expect(await refused(flipped)).toBe('BAD_SIGNATURE');
    const middle = master.slice();
    middle[master.length >> 1]! ^= 1;
    expect(['DECRYPT_FAILED', 'DATA_SEQUENCE', 'MALFORMED_CHUNK']).toContain(await refused(middle));
    stranger.free();
  });

  it('attributes a master to the account its certificate names', async () => {
    const cert = keys.certifyRegisteredKey(seller.publicKey, registrationProof(FAKE_SEED, 'acct_seller'), 'acct_seller',
      1_600_000_000_000, 0);
    const signed = await writeAll(modelEntries(), masterOptions(seller, keys.x25519PublicKey,
      { signer: { kind: 'account', account: 'acct_seller', certificate: toBase64Url(cert) } }));
    expect((await keys.verifyMaster(signed)).certifiedAccount).toBe('acct_seller');
    const bad = rejectSync(() => keys.certifyRegisteredKey(seller.publicKey, registrationProof(FAKE_SEED, 'acct_other'),
      'acct_seller', 0, 0));
    expect(code(bad)).toBe('BAD_SIGNATURE');
    expect(() => keys.certifyRegisteredKey(seller.publicKey, new Uint8Array(63), 'a', 0, 0)).toThrow(/proof must be 64 bytes/);
    expect(() => keys.certifyRegisteredKey(seller.publicKey, new Uint8Array(64), 'a', -1, 0)).toThrow(RangeError);
  });
});

describe('license copies', () => {
  it('are the same bytes on every download of one license and differ between licenses', async () => {
    const a1 = await licenseCopy(keys, master, LICENSE_A);
    const a2 = await collect(keys.copyLicense(inPieces(master, 5000), masterRef(master), LICENSE_A));
    const b = await licenseCopy(keys, master, LICENSE_B);
    expect(a2).toEqual(a1);
    expect(b).not.toEqual(a1);
    // Without the license key the copy's structure and the service's signature still check.
    const opened = await openContainer(a1, { kind: 'model' });
    expect(opened.slots).toEqual([{ type: 'license', service: SERVICE_ID, licenseId: LICENSE_A.id, masterId: MASTER_ID }]);
    expect(opened.verified.publicKey).toEqual(keys.licenseSigningPublicKey);
    expect(opened.verified.signer).toEqual({ kind: 'service', service: SERVICE_ID });
  });

  it('stream while the master is read, and fail at the end when it is not the recorded one', async () => {
    const wrongRecord = { id: MASTER_ID, sha256: new Uint8Array(32) };
    const sent: Uint8Array[] = [];
    const error = await rejection((async () => {
      for await (const piece of keys.copyLicense(master, wrongRecord, LICENSE_A)) sent.push(piece);
    })());
    expect(code(error)).toBe('MASTER_MISMATCH');
    expect(sent.length).toBeGreaterThan(0);
    const partial = await collect(inPieces(Uint8Array.from(sent.flatMap((p) => [...p])), 1 << 20));
    expect(code(await rejection(openContainer(partial, { kind: 'model' })))).toBe('TRUNCATED');

    const cut = master.subarray(0, master.length - 64);
    expect(code(await rejection(collect(keys.copyLicense(cut, masterRef(master), LICENSE_A))))).toBe('TRUNCATED');
  });

  it('check the license record before starting', () => {
    const ref = masterRef(master);
    expect(() => keys.licenseCopier(ref, { ...LICENSE_A, id: '0123' })).toThrow(/license.id must be 16 lowercase hex digits/);
    expect(() => keys.licenseCopier(ref, { ...LICENSE_A, issuedAt: 1.5 })).toThrow(RangeError);
    expect(() => keys.licenseCopier(ref, { ...LICENSE_A, seller: 3 as unknown as string })).toThrow(TypeError);
    expect(() => keys.licenseCopier({ id: MASTER_ID, sha256: new Uint8Array(31) }, LICENSE_A)).toThrow(/master.sha256 must be 32 bytes/);
    expect(code(rejectSync(() => keys.licenseCopier({ id: 'm'.repeat(257), sha256: ref.sha256 }, LICENSE_A)))).toBe('INVALID_ARGUMENT');
  });

  it('carry a watermark that identify reads from a PNG of the texture', async () => {
    for (const license of [LICENSE_A, LICENSE_B]) {
      const session = PlayerSession.create();
      session.acceptLicenseKey(license.id, keys.sealLicenseKey(masterRef(master), license.id, session.publicKey));
      const chunks: Uint8Array[] = [];
      for await (const event of openLicenseCopy(await licenseCopy(keys, master, license), session)) {
        if (event.type === 'chunk' && event.entry === 3) chunks.push(event.data);
      }
      session.free();
      const png = encodePng(512, 512, Uint8Array.from(chunks.flatMap((c) => [...c])));
      const found = keys.identify(masterRef(master), png);
      expect(found).toMatchObject({ found: true, licenseId: license.id });
      expect(found.confidence).toBeGreaterThan(10);
    }
  });

  it('identify answers "no mark" for an unmarked texture and refuses what is not an image', () => {
    const plain = encodePng(96, 40, modelEntries()[4]!.data as Uint8Array);
    expect(keys.identify(masterRef(master), plain)).toEqual({ found: false, confidence: expect.any(Number) });
    expect(code(rejectSync(() => keys.identify(masterRef(master), new Uint8Array([1, 2, 3]))))).toBe('IMAGE_DECODE_FAILED');
    expect(() => keys.identify(masterRef(master), 'png' as unknown as Uint8Array)).toThrow(TypeError);
  });

  it('identify decodes only within the bound, at it and not past its side or its area', () => {
    const plain = encodePng(96, 40, modelEntries()[4]!.data as Uint8Array);
    const error = (bound: ImageBound) => rejectSync(() => keys.identify(masterRef(master), plain, bound)) as IkiError;
    expect(keys.identify(masterRef(master), plain, { maxSidePx: 96, maxPixels: 96 * 40 }).found).toBe(false);
    expect(error({ maxSidePx: 95, maxPixels: 96 * 40 })).toMatchObject({ code: 'IMAGE_TOO_LARGE',
      details: { width: '96', height: '40', maxSide: '95', maxPixels: String(96 * 40) } });
    expect(error({ maxSidePx: 96, maxPixels: 96 * 40 - 1 }).code).toBe('IMAGE_TOO_LARGE');
    expect(() => keys.identify(masterRef(master), plain, { maxSidePx: 0, maxPixels: 1 })).toThrow(/bound.maxSidePx/);
    expect(() => keys.identify(masterRef(master), plain, { maxSidePx: 1, maxPixels: IMAGE_BOUND_CEILING.maxPixels + 1 }))
      .toThrow(RangeError);
  });
});

describe('key release and account slots', () => {
  it('seal license keys only to usable player keys', () => {
    expect(() => keys.sealLicenseKey(masterRef(master), LICENSE_A.id, new Uint8Array(31))).toThrow(RangeError);
    expect(() => keys.sealLicenseKey(masterRef(master), 'ABCDEF0123456789', new Uint8Array(32))).toThrow(RangeError);
    expect(code(rejectSync(() => keys.sealLicenseKey(masterRef(master), LICENSE_A.id, new Uint8Array(32))))).toBe('WEAK_KEY');
    const sealed = keys.sealLicenseKey(masterRef(master), LICENSE_A.id, PlayerSession.create().publicKey);
    expect([sealed.ephemeral.length, sealed.nonce.length, sealed.sealed.length]).toEqual([32, 24, 48]);
  });

  it('seal successive releases from one kept service key pair, each with its own nonce, and players open each', () => {
    // docs/format.md §8.2: the service's pair is kept (a minute or 4096 releases), the player's is ephemeral.
    const players = [PlayerSession.create(), PlayerSession.create()];
    const sealed = players.map((p) => keys.sealLicenseKey(masterRef(master), LICENSE_A.id, p.publicKey));
    expect(Buffer.from(sealed[1]!.ephemeral)).toEqual(Buffer.from(sealed[0]!.ephemeral));
    expect(Buffer.from(sealed[1]!.nonce)).not.toEqual(Buffer.from(sealed[0]!.nonce));
    players.forEach((p, i) => p.acceptLicenseKey(LICENSE_A.id, sealed[i]!));
    // The same player key twice: two different answers.
    const again = PlayerSession.create();
    const [a, b] = [0, 1].map(() => keys.sealLicenseKey(masterRef(master), LICENSE_A.id, again.publicKey));
    expect(Buffer.from(b!.sealed)).not.toEqual(Buffer.from(a!.sealed));
    again.acceptLicenseKey(LICENSE_A.id, b!);
    for (const p of [...players, again]) p.free();
  });

  it('wrap a content key for its account and unwrap it only for that account', async () => {
    const contentKey = ContentKey.generate();
    const sealed = sealContentKeyForAccount(keys.x25519PublicKey, 'acct_ada', contentKey);
    const blob = keys.createAccountBlob('acct_ada', sealed);
    expect(blob.length).toBe(73);
    expect(code(rejectSync(() => keys.createAccountBlob('acct_bob', sealed)))).toBe('DECRYPT_FAILED');
    const file = await writeAll([entry('a.bin', 'stored', new Uint8Array([1, 2, 3]))], masterOptions(seller, keys.x25519PublicKey,
      { protection: { account: { accountId: 'acct_ada', blob }, contentKey } }));
    contentKey.free();

    const client = AccountUnwrap.create();
    const answer = keys.unwrapAccountBlob('acct_ada', blob, client.publicKey);
    expect(code(rejectSync(() => keys.unwrapAccountBlob('acct_bob', blob, client.publicKey)))).toBe('DECRYPT_FAILED');
    expect(code(rejectSync(() => keys.unwrapAccountBlob('acct_ada', blob.subarray(0, 72), client.publicKey)))).toBe('INVALID_ARGUMENT');
    const opened = client.open('acct_ada', answer);
    expect(code(rejectSync(() => client.open('acct_ada', answer)))).toBe('INVALID_STATE');
    const read = await openContainer(file, { kind: 'model', unlock: { contentKey: opened } });
    expect(read.entries.get('a.bin')).toEqual(new Uint8Array([1, 2, 3]));
    opened.free();

    const stranger = AccountUnwrap.create();
    expect(code(rejectSync(() => stranger.open('acct_ada', answer)))).toBe('DECRYPT_FAILED');
    expect(() => sealContentKeyForAccount(keys.x25519PublicKey, 'acct_ada', {} as ContentKey)).toThrow(TypeError);
  });
});

/** The error a synchronous call throws (fails when it returns). */
function rejectSync(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
