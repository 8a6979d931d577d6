/**
 * Starts the real Express app on an ephemeral port with injectable storage, clock and crypto
 * (the test-only fake by default), and offers a small HTTP client plus the account, key and
 * master steps most tests begin with.
 */
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createApp, createServices, type AppServices } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Logger } from '../../src/logger.js';
import { RootSecret } from '../../src/secrets.js';
import type { LicenseCrypto } from '../../src/services/crypto-port.js';
import { FsBlobStore, type BlobStore } from '../../src/storage/blobs.js';
import { MemoryRepository } from '../../src/storage/memory-repository.js';
import type { Repository } from '../../src/storage/repository.js';
import { fakeCrypto, fakeMaster } from './fake-crypto.js';

/** A captured log line. */
export interface LogLine { level: string; message: string; fields: Record<string, unknown> }

/** Options of `startApp`. */
export interface AppOptions {
  repo?: Repository;
  blobs?: BlobStore;
  crypto?: LicenseCrypto;
  config?: Partial<Config>;
  now?: () => Date;
  /** The root secret; instances of one deployment share it (two-instances.ts). A fresh one by default. */
  root?: RootSecret;
}

/** An HTTP answer. */
export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  bytes: Buffer;
}

/** A running test app. */
export interface TestApp {
  url: string;
  repo: Repository;
  services: AppServices;
  logs: LogLine[];
  config: Config;
  root: RootSecret;
  call(method: string, path: string, opts?: { token?: string; json?: unknown; body?: Uint8Array | string;
    type?: string; headers?: Record<string, string> }): Promise<Answer>;
  close(): Promise<void>;
}

/** Fast Argon2 settings for tests (the production default is in config.ts). */
export const TEST_HASHING = { memoryKiB: 256, iterations: 1, parallelism: 1 };

export function captureLogger(logs: LogLine[]): Logger {
  const push = (level: string) => (message: string, fields: Record<string, unknown> = {}) => { logs.push({ level, message, fields }); };
  return { info: push('info'), warn: push('warn'), error: push('error') };
}

export async function startApp(options: AppOptions = {}): Promise<TestApp> {
  const logs: LogLine[] = [];
  const logger = captureLogger(logs);
  const dir = await mkdtemp(join(tmpdir(), 'iki-app-'));
  const config = loadConfig({}, { publicUrl: 'http://iki.test', dataDir: dir, passwordHashing: TEST_HASHING, ...options.config });
  const repo = options.repo ?? new MemoryRepository();
  const blobs = options.blobs ?? new FsBlobStore(join(dir, 'masters'));
  const now = options.now ?? (() => new Date());
  const root = options.root ?? new RootSecret(randomBytes(32));
  const services = createServices({ config, repo, blobs, crypto: options.crypto ?? fakeCrypto(), root, logger, now });
  const app = createApp(services, { bodyLimits: config.bodyLimits, releaseLimits: config.releaseLimits,
    signInLimits: config.signInLimits, mailLimits: config.mailLimits, quotas: config.quotas, trustProxy: config.trustProxy,
    service: config.publicUrl, publicUrlConfigured: config.publicUrlConfigured, corsOrigins: config.corsOrigins, logger, now });
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, repo, services, logs, config, root,
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`;
      let body: Uint8Array | string | undefined = opts.body;
      if (opts.json !== undefined) {
        body = JSON.stringify(opts.json);
        headers['content-type'] ??= 'application/json';
      }
      if (opts.type !== undefined) headers['content-type'] = opts.type;
      const response = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
      const bytes = Buffer.from(await response.arrayBuffer());
      const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
      return { status: response.status, headers: response.headers, bytes,
        body: isJson && bytes.length > 0 ? JSON.parse(bytes.toString('utf8')) : undefined };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The `Cookie` header that carries a sign-up answer's proof cookie back (what the browser that
 * signed up sends with its link, issue 22 item 3).
 */
export function signUpCookie(answer: Answer): string {
  return (answer.headers.getSetCookie().find((c) => c.startsWith('iki_sign_up=')) ?? '').split(';')[0] ?? '';
}

/** A signed-in user. */
export interface User { accountId: string; token: string; email: string }

/** The token of the newest link the log mailer wrote for `email`. */
export function linkToken(logs: LogLine[], email: string): string | null {
  const line = logs.filter((l) => l.fields['to'] === email).at(-1);
  return line === undefined ? null : new URL(String(line.fields['link'])).searchParams.get('token');
}

/**
 * Signs up, verifies through the logged link and signs in. With `verify` false the account is
 * one an earlier version left unverified (sign-up is pending until its link is used now, and
 * sign-in needs a verified address), stored directly and given a session: what such an
 * account could still hold.
 */
export async function newUser(app: TestApp, name: string, verify = true): Promise<User> {
  const email = `${name.toLowerCase().replace(/[^a-z0-9]/g, '')}-${randomBytes(3).toString('hex')}@example.com`;
  if (!verify) {
    const accountId = `acct_${randomBytes(16).toString('hex')}`;
    await app.repo.createAccount({ id: accountId, email, name, passwordHash: 'x', createdAt: new Date() });
    const session = await app.services.sessions.open(accountId, 'test');
    return { accountId, token: session.accessToken, email };
  }
  const created = await app.call('POST', '/api/accounts', { json: { email, password: 'correct horse battery', name } });
  expect(created.status).toBe(202);
  expect((await app.call('POST', '/api/accounts/verify', { json: { token: linkToken(app.logs, email) },
    headers: { cookie: signUpCookie(created) } })).status).toBe(200);
  const session = await app.call('POST', '/api/sessions', { json: { email, password: 'correct horse battery' } });
  expect(session.status).toBe(201);
  return { accountId: session.body.accountId, token: session.body.accessToken, email };
}

/** An Ed25519 device key. */
export interface DeviceKey { publicKey: Uint8Array; privateKey: KeyObject; b64: string }

export function deviceKey(): DeviceKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(12));
  return { publicKey: raw, privateKey, b64: Buffer.from(raw).toString('base64url') };
}

/** The registration proof of `key` for `accountId`. */
export function proofFor(key: DeviceKey, accountId: string): string {
  const message = Buffer.concat([Buffer.from('IKI-KEY-REGISTRATION-V1\0'), Buffer.from(accountId)]);
  return sign(null, message, key.privateKey).toString('base64url');
}

/** Registers a new device key for `user`. */
export async function registerKey(app: TestApp, user: User): Promise<DeviceKey> {
  const key = deviceKey();
  const answer = await app.call('POST', '/api/keys/signing', { token: user.token,
    json: { publicKey: key.b64, proof: proofFor(key, user.accountId), name: 'laptop' } });
  expect(answer.status).toBe(201);
  return key;
}

/** Uploads a toy master signed by `key`; returns its id. */
export async function uploadMaster(app: TestApp, seller: User, key: DeviceKey, name = 'Haru'): Promise<string> {
  const answer = await app.call('POST', '/api/licenses/masters', { token: seller.token,
    type: 'application/vnd.iki.model', body: fakeMaster({ name, signer: key.publicKey }) });
  expect(answer.status).toBe(201);
  return answer.body.masterId as string;
}

/** Creates a license of `masterId` for `buyer`. */
export async function license(app: TestApp, seller: User, masterId: string, buyer: User): Promise<string> {
  const answer = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token,
    json: { accountId: buyer.accountId } });
  expect(answer.status).toBe(201);
  return answer.body.licenseId as string;
}

/** A player's ephemeral X25519 public key, base64url. */
export function playerKey(): string {
  const { publicKey } = generateKeyPairSync('x25519');
  return publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64url');
}

/** A seller with a registered key and one master, and a buyer holding a license of it. */
export async function scenario(app: TestApp): Promise<{ seller: User; buyer: User; key: DeviceKey; masterId: string; licenseId: string }> {
  const seller = await newUser(app, 'Seller');
  const buyer = await newUser(app, 'Buyer');
  const key = await registerKey(app, seller);
  const masterId = await uploadMaster(app, seller, key);
  const licenseId = await license(app, seller, masterId, buyer);
  return { seller, buyer, key, masterId, licenseId };
}
