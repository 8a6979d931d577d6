/**
 * Steps of the end-to-end flow with the real WebAssembly crypto (`@iki/core`): an HTTP client
 * for a running service, accounts verified through the captured mail log, a device key
 * registered with its proof, and protected models built from the synthetic Cubism-like
 * package of tests/fixtures (a CC0 atlas read in place from ../shared/fixtures/textures and a
 * synthetic texture with colour under alpha 0). Every key here is generated per run.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { expect } from 'vitest';
import {
  collect, decodeImage, loadWasm, SigningKey, toBase64Url, writeContainer, type NewEntry, type SignerInfo,
} from '@iki/core';
import { readTree, writeModelPackage } from '../../../tests/fixtures/packages.mjs';
import type { LogLine } from './app.js';

/** An HTTP answer. */
export interface Reply { status: number; headers: Headers; body: any; bytes: Uint8Array }

/** Options of one call. */
export interface CallOptions { token?: string; json?: unknown; body?: Uint8Array; type?: string }

/** A minimal client of a running service. */
export function client(base: string): (method: string, path: string, opts?: CallOptions) => Promise<Reply> {
  return async (method, path, opts = {}) => {
    const headers: Record<string, string> = {};
    if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`;
    if (opts.type !== undefined) headers['content-type'] = opts.type;
    let body: Uint8Array | string | undefined = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const bytes = new Uint8Array(await response.arrayBuffer());
    const json = (response.headers.get('content-type') ?? '').includes('application/json') && bytes.length > 0;
    return { status: response.status, headers: response.headers, bytes,
      body: json ? JSON.parse(Buffer.from(bytes).toString('utf8')) : undefined };
  };
}

export type Call = ReturnType<typeof client>;

/** A signed-in user. */
export interface User { accountId: string; token: string; email: string; name: string }

/** Signs up, verifies with the token of the link in the captured mail log, and signs in. */
export async function verifiedUser(call: Call, logs: LogLine[], name: string): Promise<User> {
  const email = `${name.toLowerCase()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const password = 'correct horse battery staple';
  expect((await call('POST', '/api/accounts', { json: { email, password, name } })).status).toBe(202);
  const mail = logs.filter((l) => l.fields['to'] === email).at(-1);
  const token = new URL(String(mail?.fields['link'])).searchParams.get('token');
  expect((await call('POST', '/api/accounts/verify', { json: { token, password } })).status).toBe(200);
  const session = await call('POST', '/api/sessions', { json: { email, password } });
  expect(session.status).toBe(201);
  return { accountId: session.body.accountId, token: session.body.accessToken, email, name };
}

/** The registration proof: Ed25519 by the key over `"IKI-KEY-REGISTRATION-V1" || 0x00 || accountId`. */
export function registrationProof(key: SigningKey, accountId: string): Uint8Array {
  const seed = key.exportSeed();
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  seed.fill(0);
  try {
    const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    return new Uint8Array(sign(null, Buffer.from(`IKI-KEY-REGISTRATION-V1\0${accountId}`), privateKey));
  } finally {
    der.fill(0);
  }
}

/** A seller's device key, registered; returns the key and the signer JSON with its certificate. */
export async function registeredKey(call: Call, seller: User): Promise<{ key: SigningKey; signer: SignerInfo }> {
  await loadWasm();
  const key = SigningKey.generate();
  const answer = await call('POST', '/api/keys/signing', { token: seller.token, json: {
    publicKey: toBase64Url(key.publicKey), proof: toBase64Url(registrationProof(key, seller.accountId)), name: 'laptop' } });
  expect(answer.status).toBe(201);
  return { key, signer: { kind: 'account', account: seller.accountId, certificate: answer.body.certificate } };
}

/** A model package: every file's bytes by path, and which are PNG textures (with their pixels). */
export interface ModelPackage {
  name: string;
  files: Map<string, Uint8Array>;
  textures: Map<string, { width: number; height: number; rgba: Uint8Array }>;
}

/** Writes the synthetic package into `dir` (the whole 1024 x 2048 CC0 atlas as texture_00). */
export async function modelPackage(dir: string): Promise<ModelPackage> {
  await loadWasm();
  const written = await writeModelPackage(dir, { name: 'Haru', atlasSize: 0 });
  const tree = await readTree(dir);
  const files = new Map(written.files.map((path) => [path, tree.get(path) as Uint8Array]));
  const textures = new Map(written.textures.map((path) => [path, decodeImage(files.get(path) as Uint8Array)]));
  return { name: 'Haru', files, textures };
}

/** The container entries of a package: textures as rgba8, everything else deflate. */
export function packageEntries(pkg: ModelPackage): NewEntry[] {
  return [...pkg.files].map(([path, bytes]): NewEntry => {
    const texture = pkg.textures.get(path);
    if (texture === undefined) {
      const type = path.endsWith('.json') ? 'application/json' : path.endsWith('.wav') ? 'audio/wav' : 'application/octet-stream';
      return { path, type, encoding: 'deflate', data: bytes, size: bytes.length };
    }
    const { width, height, rgba } = texture;
    return { path, type: 'image/x-rgba8', encoding: 'rgba8', data: rgba, size: rgba.length,
      meta: { kind: 'texture', width, height, source: 'image/png' } };
  });
}

/** Options of {@link buildModel}. */
export interface BuildOptions {
  key: SigningKey;
  signer: SignerInfo;
  /** X25519 keys of the recipient slots (the service's for a master). */
  recipients?: Uint8Array[];
  kind?: 'model' | 'project';
  meta?: Record<string, unknown>;
}

/** A protected model (by default a master: role `master`, encrypted to `recipients`). */
export async function buildModel(pkg: ModelPackage, opts: BuildOptions): Promise<Uint8Array> {
  const meta = opts.meta ?? { format: 'iki-model', version: 1, name: pkg.name, role: 'master' };
  return collect(writeContainer(packageEntries(pkg), { kind: opts.kind ?? 'model', signingKey: opts.key,
    signer: opts.signer, meta, ...(opts.recipients === undefined ? {} : { protection: { recipients: opts.recipients } }) }));
}

/**
 * How a copied texture differs from the original: colour values `moved` by 1 or 2 levels,
 * values that moved further (`tooFar`), and `forbidden` changes (alpha, or any channel of a
 * pixel with alpha below 8): SPEC "Watermark".
 */
export function textureDiff(original: Uint8Array, copied: Uint8Array): { moved: number; tooFar: number; forbidden: number } {
  let [moved, tooFar, forbidden] = [0, 0, 0];
  for (let i = 0; i < original.length; i++) {
    const d = Math.abs((copied[i] ?? -1000) - (original[i] ?? 0));
    if (d === 0) continue;
    if (i % 4 === 3 || (original[i - (i % 4) + 3] ?? 0) < 8) forbidden++;
    else if (d > 2) tooFar++;
    else moved++;
  }
  return { moved, tooFar, forbidden };
}
