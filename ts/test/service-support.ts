// Shared fixtures of the service and player tests: service keys from an obviously fake root
// secret, a small model master sealed to them (a CC0 texture read in place from
// ../shared/fixtures/textures, a synthetic texture with colour under alpha 0, two deflate
// files), and a license copy of it.
import { createPrivateKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { NewEntry, WriteOptions } from '../src/container.js';
import { decodeImage } from '../src/image.js';
import type { SigningKey } from '../src/keys.js';
import { type LicenseRecord, type MasterRef, ServiceKeys } from '../src/service.js';
import { collect } from '../src/streams.js';
import { entry, sample, sha256hex } from './container-support.js';

export const ROOT = new Uint8Array(32).fill(0x5e);
export const SERVICE_ID = 'https://iki.test';
export const MASTER_ID = 'mst_test';
export const ATLAS = new URL('../../../shared/fixtures/textures/kenney-platformer-pack-redux_spritesheet_players.png', import.meta.url);

export const LICENSE_A: LicenseRecord = { id: '0123456789abcdef', licensee: 'acct_buyer_a', licenseeName: 'Ada', seller: 'acct_seller', issuedAt: 1_700_000_000_000 };
export const LICENSE_B: LicenseRecord = { id: 'fedcba9876543210', licensee: 'acct_buyer_b', licenseeName: 'Bob', seller: 'acct_seller', issuedAt: 1_700_000_100_000 };

export function serviceKeys(): ServiceKeys {
  return ServiceKeys.fromRoot(ROOT, SERVICE_ID);
}

/** The top-left `size` x `size` pixels of the CC0 atlas. */
export function atlasCrop(size: number): { width: number; height: number; rgba: Uint8Array } {
  const atlas = decodeImage(new Uint8Array(readFileSync(ATLAS)));
  const rgba = new Uint8Array(size * size * 4);
  for (let y = 0; y < size; y++) rgba.set(atlas.rgba.subarray(y * atlas.width * 4, (y * atlas.width + size) * 4), y * size * 4);
  return { width: size, height: size, rgba };
}

/** 96 x 40 pixels: the left half fully transparent with colour left under it. */
export function colourUnderAlpha(): Uint8Array {
  const rgba = sample(96 * 40 * 4, 9, true);
  for (let y = 0; y < 40; y++) for (let x = 0; x < 48; x++) rgba[(y * 96 + x) * 4 + 3] = 0;
  return rgba;
}

/** The files of the model package, by path (textures as decoded RGBA8). */
export function modelFiles(): Map<string, Uint8Array> {
  return new Map([
    ['Test.model3.json', new TextEncoder().encode('{"Version":3,"FileReferences":{"Moc":"Test.moc3"}}\n')],
    ['Test.moc3', sample(20_000, 3, true)],
    ['motions/idle.motion3.json', sample(9_000, 4)],
    ['Test.1024/texture_00.png', atlasCrop(512).rgba],
    ['Test.1024/texture_01.png', colourUnderAlpha()],
  ]);
}

/** The package as container entries: PNG textures as rgba8, everything else deflate. */
export function modelEntries(files = modelFiles()): NewEntry[] {
  return [...files].map(([path, data]) => {
    if (path.endsWith('texture_00.png')) return entry(path, 'rgba8', data, { kind: 'texture', width: 512, height: 512, source: 'image/png' });
    if (path.endsWith('texture_01.png')) return entry(path, 'rgba8', data, { kind: 'texture', width: 96, height: 40, source: 'image/png' });
    return entry(path, 'deflate', data);
  });
}

/** Writer options of a master sealed to `recipient` (`extra` overrides). */
export function masterOptions(key: SigningKey, recipient: Uint8Array, extra: Partial<WriteOptions> = {}): WriteOptions {
  return {
    kind: 'model', signingKey: key, signer: { kind: 'device', name: 'seller laptop' },
    meta: { format: 'iki-model', version: 1, name: 'Test model', role: 'master' },
    createdMs: 1_700_000_000_000, chunkSize: 64 * 1024, protection: { recipients: [recipient] }, ...extra,
  };
}

/** The master's record as the service keeps it. */
export function masterRef(bytes: Uint8Array): MasterRef {
  return { id: MASTER_ID, sha256: Uint8Array.from(Buffer.from(sha256hex(bytes), 'hex')) };
}

/** A whole license copy in memory. */
export async function licenseCopy(keys: ServiceKeys, master: Uint8Array, license: LicenseRecord): Promise<Uint8Array> {
  return collect(keys.copyLicense(master, masterRef(master), license));
}

/** The registration proof of the key with `seed`: Ed25519 over the label, 0x00 and the account. */
export function registrationProof(seed: Uint8Array, accountId: string): Uint8Array {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  return new Uint8Array(sign(null, Buffer.from(`IKI-KEY-REGISTRATION-V1\0${accountId}`), key));
}
