/**
 * What the browser test sets up outside the browser: a real service (`serve()`, embedded
 * PGlite (a copy of the run's migrated one) and blob directory in a temp dir, ephemeral port, log captured), accounts made over
 * the HTTP API and verified through the logged link, the seller's signing key registered, and
 * a master built in Node with `@iki/core` from the synthetic model package of
 * tests/fixtures, sealed to the service's key.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import * as iki from '@iki/core';
import { serve, type RunningServer } from '../../src/main.js';
import type { Config, ReleaseLimits } from '../../src/config.js';
import { captureLogger, TEST_HASHING, type LogLine } from '../helpers/app.js';
import { preparedDataDir } from '../helpers/databases.js';
import { decodePng } from '../../../tests/fixtures/png.mjs';
import { writeModelPackage } from '../../../tests/fixtures/packages.mjs';

export const PASSWORD = 'correct horse battery';

/** A running service with its captured log and temp directory. */
export interface Service {
  server: RunningServer;
  url: string;
  logs: LogLine[];
  dir: string;
  close(): Promise<void>;
}

/** A service with these release limits (and any other configuration in `config`). */
export async function startService(releaseLimits: ReleaseLimits, config: Partial<Config> = {}): Promise<Service> {
  const dir = await mkdtemp(join(tmpdir(), 'iki-web-'));
  const logs: LogLine[] = [];
  // The embedded database starts as a copy of the run's migrated one (no initdb per file).
  const dataDir = await preparedDataDir(join(dir, 'data'));
  const server = await serve({ port: 0, dataDir, env: {}, logger: captureLogger(logs),
    config: { passwordHashing: TEST_HASHING, releaseLimits, ...config } });
  return {
    server, url: server.url, logs, dir,
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function call(service: Service, method: string, path: string, json?: unknown, token?: string): Promise<any> {
  const headers: Record<string, string> = {};
  if (json !== undefined) headers['content-type'] = 'application/json';
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  const response = await fetch(`${service.url}${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const body = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

/** A verified account (the token is only for set-up calls; the pages sign in themselves). */
export interface Account { accountId: string; email: string; name: string; token: string }

export async function newAccount(service: Service, name: string): Promise<Account> {
  const email = `${name.toLowerCase().replace(/[^a-z]/g, '')}-${randomBytes(3).toString('hex')}@example.com`;
  await call(service, 'POST', '/api/accounts', { email, password: PASSWORD, name });
  const line = service.logs.filter((l) => l.fields['to'] === email).at(-1);
  const token = new URL(String(line?.fields['link'])).searchParams.get('token');
  await call(service, 'POST', '/api/accounts/verify', { token, password: PASSWORD });
  const session = await call(service, 'POST', '/api/sessions', { email, password: PASSWORD });
  return { accountId: session.accountId, email, name, token: session.accessToken };
}

/** The seller's Ed25519 key, registered with the account (proof per the OpenAPI document). */
export async function registerSigningKey(service: Service, seller: Account): Promise<{ seed: Uint8Array; privateKey: KeyObject }> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const proof = sign(null, Buffer.concat([Buffer.from('IKI-KEY-REGISTRATION-V1\0'), Buffer.from(seller.accountId)]), privateKey);
  await call(service, 'POST', '/api/keys/signing', { publicKey: raw.toString('base64url'),
    proof: proof.toString('base64url'), name: 'web test' }, seller.token);
  // PKCS#8 of an Ed25519 key ends with the 32-byte seed (RFC 8410 §7).
  const seed = new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32));
  return { seed, privateKey };
}

/** A texture of the package as the seller made it. */
export interface SourceTexture { path: string; width: number; height: number; rgba: Uint8Array }

/** The master file and what the player must show of it. */
export interface BuiltMaster {
  file: string;
  name: string;
  paths: string[];
  model3Path: string;
  model3: unknown;
  textures: SourceTexture[];
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const part of stream as unknown as AsyncIterable<Uint8Array>) parts.push(part);
  return new Uint8Array(Buffer.concat(parts));
}

const TYPES: Record<string, string> = { '.json': 'application/json', '.wav': 'audio/wav' };

/**
 * The manifest entries of a model package as SPEC "What the service does" item 2 lays it out:
 * every file `deflate` under its package path, textures decoded to `rgba8` under their PNG paths.
 */
async function modelEntries(dir: string, files: string[], textures: SourceTexture[]): Promise<iki.NewEntry[]> {
  const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
  return Promise.all(files.map(async (path) => {
    const texture = textures.find((t) => t.path === path);
    if (texture !== undefined) {
      return { path, type: 'image/x-rgba8', encoding: 'rgba8' as const, data: texture.rgba, size: texture.rgba.length,
        sha256: sha256(texture.rgba), meta: { kind: 'texture', width: texture.width, height: texture.height, source: 'image/png' } };
    }
    const bytes = new Uint8Array(await readFile(join(dir, path)));
    return { path, type: TYPES[extname(path)] ?? 'application/octet-stream', encoding: 'deflate' as const,
      data: bytes, size: bytes.length, sha256: sha256(bytes) };
  }));
}

/** Packs the synthetic model package into a master sealed to the service's X25519 key. */
export async function buildMaster(service: Service, seed: Uint8Array): Promise<BuiltMaster> {
  await iki.loadWasm();
  const model = await writeModelPackage(join(service.dir, 'model'), { name: 'Aster', atlasSize: 256, mocBytes: 4000, soundSamples: 800 });
  const textures = await Promise.all(model.textures.map(async (path) => ({ path, ...decodePng(await readFile(join(model.dir, path))) })));
  const entries = await modelEntries(model.dir, model.files, textures);
  const keys = await call(service, 'GET', '/api/keys/service');
  const signingKey = iki.SigningKey.fromSeed(seed);
  let bytes: Uint8Array;
  try {
    bytes = await collect(iki.writeContainer(entries, {
      kind: 'model', signingKey, signer: { kind: 'device', name: 'web test' },
      meta: { format: 'iki-model', version: 1, name: 'Aster', role: 'master' },
      protection: { recipients: [iki.fromBase64Url(keys.x25519PublicKey, 32)] },
    }));
  } finally {
    signingKey.free();
  }
  const file = join(service.dir, 'aster.ikm');
  await writeFile(file, bytes);
  return {
    file, name: 'Aster', paths: model.files, model3Path: model.model3,
    model3: JSON.parse(await readFile(join(model.dir, model.model3), 'utf8')), textures,
  };
}
