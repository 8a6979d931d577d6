// The player side of licensing through WASM (ts/src/player.ts): the session's argument
// checks, that it accepts only a key sealed to itself for its license and only once, and the
// license copy read in memory: plaintext identical to the master except for the watermark.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Manifest, ReadEvent } from '../src/container.js';
import { IkiError } from '../src/errors.js';
import { SigningKey } from '../src/keys.js';
import { PlayerSession, openLicenseCopy, type SealedKey } from '../src/player.js';
import type { ServiceKeys } from '../src/service.js';
import { loadWasm } from '../src/wasm.js';
import { FAKE_SEED, inPieces, rejection, writeAll } from './container-support.js';
import { LICENSE_A, LICENSE_B, licenseCopy, masterOptions, masterRef, modelEntries, modelFiles, serviceKeys } from './service-support.js';

let keys: ServiceKeys;
let master: Uint8Array;
let copyA: Uint8Array;

const code = (error: unknown): string | undefined => (error instanceof IkiError ? error.code : undefined);

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** A session that accepted the key of `licenseId`. */
function sessionFor(licenseId: string): PlayerSession {
  const session = PlayerSession.create();
  session.acceptLicenseKey(licenseId, keys.sealLicenseKey(masterRef(master), licenseId, session.publicKey));
  return session;
}

async function readAll(events: AsyncGenerator<ReadEvent>): Promise<{ types: string[]; manifest?: Manifest; files: Map<string, Uint8Array>; end?: ReadEvent }> {
  const parts: Uint8Array[][] = [];
  const types: string[] = [];
  let manifest: Manifest | undefined;
  let end: ReadEvent | undefined;
  for await (const event of events) {
    types.push(event.type);
    if (event.type === 'manifest') manifest = event.manifest;
    if (event.type === 'chunk') (parts[event.entry] ??= []).push(event.data);
    if (event.type === 'end') end = event;
  }
  const files = new Map<string, Uint8Array>();
  manifest?.entries.forEach((e, i) => files.set(e.path, Uint8Array.from((parts[i] ?? []).flatMap((p) => [...p]))));
  return { types, files, ...(manifest === undefined ? {} : { manifest }), ...(end === undefined ? {} : { end }) };
}

/**
 * How a copied texture differs from the original: `moved` colour values, `tooFar` that moved
 * by more than 2 levels, `forbidden` changes to alpha or to any channel of a pixel with
 * alpha below 8 (SPEC "Watermark").
 */
function textureDiff(original: Uint8Array, copied: Uint8Array): { moved: number; tooFar: number; forbidden: number } {
  let [moved, tooFar, forbidden] = [0, 0, 0];
  for (let i = 0; i < original.length; i++) {
    const d = Math.abs(copied[i]! - original[i]!);
    if (d === 0) continue;
    if (i % 4 === 3 || original[i - (i % 4) + 3]! < 8) forbidden++;
    else if (d > 2) tooFar++;
    else moved++;
  }
  return { moved, tooFar, forbidden };
}

beforeAll(async () => {
  await loadWasm();
  keys = serviceKeys();
  master = await writeAll(modelEntries(), masterOptions(SigningKey.fromSeed(FAKE_SEED), keys.x25519PublicKey));
  copyA = await licenseCopy(keys, master, LICENSE_A);
});

describe('PlayerSession', () => {
  it('makes a fresh ephemeral key per session', () => {
    const [a, b] = [PlayerSession.create(), PlayerSession.create()];
    expect(a.publicKey).toHaveLength(32);
    expect(a.publicKey).not.toEqual(b.publicKey);
    expect(a.licenseId).toBeUndefined();
    a.free();
    b.free();
    expect(code(thrown(() => a.publicKey))).toBe('INVALID_STATE');
  });

  it('checks its arguments before calling WASM', () => {
    const session = PlayerSession.create();
    const sealed = keys.sealLicenseKey(masterRef(master), LICENSE_A.id, session.publicKey);
    expect(() => session.acceptLicenseKey('0123', sealed)).toThrow(RangeError);
    expect(() => session.acceptLicenseKey('0123456789ABCDEF', sealed)).toThrow(RangeError);
    expect(() => session.acceptLicenseKey(7 as unknown as string, sealed)).toThrow(TypeError);
    expect(() => session.acceptLicenseKey(LICENSE_A.id, null as unknown as SealedKey)).toThrow(TypeError);
    expect(() => session.acceptLicenseKey(LICENSE_A.id, { ...sealed, nonce: new Uint8Array(12) })).toThrow(/sealed.nonce must be 24 bytes/);
    expect(() => session.acceptLicenseKey(LICENSE_A.id, { ...sealed, sealed: [...sealed.sealed] as unknown as Uint8Array })).toThrow(TypeError);
    // None of these reached WASM: the secret is still there.
    session.acceptLicenseKey(LICENSE_A.id, sealed);
    expect(session.licenseId).toBe(LICENSE_A.id);
    session.free();
  });

  it('accepts only a key sealed to itself, for its license, and only once', () => {
    const [mine, other] = [PlayerSession.create(), PlayerSession.create()];
    const forMine = keys.sealLicenseKey(masterRef(master), LICENSE_A.id, mine.publicKey);
    expect(code(thrown(() => other.acceptLicenseKey(LICENSE_A.id, forMine)))).toBe('DECRYPT_FAILED');
    // The failed try spent the other session's secret.
    const forOther = keys.sealLicenseKey(masterRef(master), LICENSE_A.id, other.publicKey);
    expect(code(thrown(() => other.acceptLicenseKey(LICENSE_A.id, forOther)))).toBe('INVALID_STATE');

    const wrongLicense = PlayerSession.create();
    const sealed = keys.sealLicenseKey(masterRef(master), LICENSE_A.id, wrongLicense.publicKey);
    expect(code(thrown(() => wrongLicense.acceptLicenseKey(LICENSE_B.id, sealed)))).toBe('DECRYPT_FAILED');
    const tampered = { ...forMine, sealed: forMine.sealed.slice() };
    tampered.sealed[0]! ^= 1;
    const third = PlayerSession.create();
    expect(code(thrown(() => third.acceptLicenseKey(LICENSE_A.id, tampered)))).toBe('DECRYPT_FAILED');

    mine.acceptLicenseKey(LICENSE_A.id, forMine);
    expect(code(thrown(() => mine.acceptLicenseKey(LICENSE_A.id, forMine)))).toBe('INVALID_STATE');
    expect(mine.licenseId).toBe(LICENSE_A.id);
    for (const s of [mine, other, wrongLicense, third]) s.free();
  });
});

describe('openLicenseCopy', () => {
  it('reads the copy in memory: files identical to the master, textures only watermarked', async () => {
    const session = sessionFor(LICENSE_A.id);
    const read = await readAll(openLicenseCopy(inPieces(copyA, 3000), session, keys.licenseSigningPublicKey));
    session.free();
    expect(read.types.slice(0, 3)).toEqual(['header', 'locked', 'manifest']);
    expect(read.types.at(-1)).toBe('end');
    expect(read.manifest?.meta).toMatchObject({ role: 'license', license: { id: LICENSE_A.id, licensee: LICENSE_A.licensee,
      licenseeName: 'Ada', seller: 'acct_seller', issuedAt: LICENSE_A.issuedAt, masterId: 'mst_test' } });
    expect(read.end).toMatchObject({ verified: { publicKey: keys.licenseSigningPublicKey, signer: { kind: 'service' } } });
    for (const [path, original] of modelFiles()) {
      const copied = read.files.get(path);
      if (!path.endsWith('.png')) {
        expect(copied, path).toEqual(original);
        continue;
      }
      expect(copied?.length, path).toBe(original.length);
      expect(textureDiff(original, copied!), path).toMatchObject({ forbidden: 0, tooFar: 0 });
      expect(textureDiff(original, copied!).moved, path).toBeGreaterThan(100);
    }
  });

  it('refuses a copy signed by another key, for another license, or before a key was accepted', async () => {
    const session = sessionFor(LICENSE_A.id);
    const wrongSigner = await rejection(readAll(openLicenseCopy(copyA, session, keys.certificatePublicKey)));
    expect(code(wrongSigner)).toBe('BAD_SIGNATURE');
    const forB = sessionFor(LICENSE_B.id);
    expect(code(await rejection(readAll(openLicenseCopy(copyA, forB))))).toBe('KEY_REQUIRED');
    const fresh = PlayerSession.create();
    expect(code(await rejection(readAll(openLicenseCopy(copyA, fresh))))).toBe('INVALID_STATE');
    const flipped = copyA.slice();
    flipped[copyA.length >> 1]! ^= 4;
    expect(await rejection(readAll(openLicenseCopy(flipped, session)))).toBeInstanceOf(IkiError);
    for (const s of [session, forB, fresh]) s.free();
  });

  it('checks its arguments', async () => {
    const session = sessionFor(LICENSE_A.id);
    await expect(readAll(openLicenseCopy(copyA, session, new Uint8Array(31)))).rejects.toThrow(RangeError);
    await expect(readAll(openLicenseCopy(copyA, {} as PlayerSession))).rejects.toThrow(TypeError);
    await expect(readAll(openLicenseCopy('file' as unknown as Uint8Array, session))).rejects.toThrow(TypeError);
    session.free();
  });
});
